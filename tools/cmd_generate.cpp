// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief `baton generate`: greedy generation from token ids or text on the host backend,
/// optionally constrained by a grammar.
///
///   baton generate --model DIR [--adapter DIR] (--ids 1,2,3 | --tokenizer FILE --prompt TEXT)
///                  --max-new N [--regex PATTERN | --json-schema FILE] [--ignore-eos]
///                  [--json] [--logits]
///
/// The ids are used exactly as given (no BOS is added); --prompt is encoded as written (added
/// tokens in it become their ids). Generation stops at one of the config's eos ids (not
/// printed) unless --ignore-eos, or after N tokens, or when the grammar's match is complete.
/// Output: the generated ids on one line, space-separated; with --json one object
/// {"ids":[...]}, plus "text" (the decoded ids) when a tokenizer is given, plus
/// "logits":[...] with --logits (the row that chose the first generated token, after the
/// grammar's mask).
/// docs/cli.md is the user-facing description; keep the two in step.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <vector>

#include "args.hpp"
#include "baton/core/dispatch.hpp"
#include "baton/core/dtype.hpp"
#include "baton/grammar/grammar.hpp"
#include "baton/intercept/grammar_constraint.hpp"
#include "baton/intercept/step_skip.hpp"
#include "baton/io/hf_config.hpp"
#include "baton/io/json_util.hpp"
#include "baton/io/peft_config.hpp"
#include "baton/kv/head_dims.hpp"
#include "baton/kv/kv_buffer.hpp"
#include "baton/lora/base_model_check.hpp"
#include "baton/model/decode.hpp"
#include "baton/model/family/qwen3.hpp"
#include "baton/model/host_forward.hpp"
#include "commands.hpp"

using namespace baton;
using baton::cli::ArgError;
using baton::cli::parse_ids;
using baton::cli::parse_int;

namespace {

constexpr std::string_view kUsage =
    "usage: baton generate --model DIR [--adapter DIR] (--ids 1,2,3 | --tokenizer FILE --prompt "
    "TEXT)\n"
    "                      --max-new N [--regex PATTERN | --json-schema FILE] [--ignore-eos]\n"
    "                      [--json] [--logits]\n"
    "  --model DIR       Hugging Face model folder (config.json + safetensors; f32/bf16/f16)\n"
    "  --adapter DIR     PEFT LoRA adapter folder (adapter_config.json + "
    "adapter_model.safetensors)\n"
    "  --ids LIST        prompt token ids, comma-separated, used as given (no BOS added)\n"
    "  --tokenizer FILE  tokenizer.json: for --prompt, grammars and \"text\" in --json\n"
    "  --prompt TEXT     the prompt as text (instead of --ids)\n"
    "  --regex PATTERN   the output must match PATTERN (the whole output; docs/grammar.md)\n"
    "  --json-schema FILE  the output must be JSON matching the schema in FILE (subset)\n"
    "  --max-new N       generate at most N >= 1 tokens\n"
    "  --ignore-eos    do not stop at the config's eos_token_id(s)\n"
    "  --json          print {\"ids\":[...]} instead of space-separated ids\n"
    "  --logits        with --json: add \"logits\", the row that chose the first token\n";

struct Args {
  std::string model, adapter, tokenizer, prompt, regex, json_schema;
  bool have_prompt = false, have_regex = false;
  std::vector<std::int32_t> ids;
  int max_new = 0;
  bool ignore_eos = false, json = false, logits = false, help = false;
};

Args parse_args(int argc, char** argv) {
  Args a;
  bool have_ids = false, have_max_new = false;
  baton::cli::SeenOptions seen;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg.starts_with("-")) seen.once(arg);
    const auto value = [&]() -> std::string_view {
      if (i + 1 >= argc) throw ArgError{std::string(arg) + " needs a value"};
      return baton::cli::non_empty(arg, argv[++i]);
    };
    if (arg == "--help" || arg == "-h") {
      a.help = true;
    } else if (arg == "--model") {
      a.model = value();
    } else if (arg == "--adapter") {
      a.adapter = value();
    } else if (arg == "--ids") {
      a.ids = parse_ids(value());
      have_ids = true;
    } else if (arg == "--tokenizer") {
      a.tokenizer = value();
    } else if (arg == "--prompt") {
      if (i + 1 >= argc) throw ArgError{"--prompt needs a value"};
      a.prompt = argv[++i];  // may be empty only if the tokenizer adds nothing: checked later
      a.have_prompt = true;
    } else if (arg == "--regex") {
      if (i + 1 >= argc) throw ArgError{"--regex needs a value"};
      a.regex = argv[++i];  // "" is a grammar too (the empty output)
      a.have_regex = true;
    } else if (arg == "--json-schema") {
      a.json_schema = value();
    } else if (arg == "--max-new") {
      a.max_new = parse_int<int>(value(), "--max-new");
      have_max_new = true;
    } else if (arg == "--ignore-eos") {
      a.ignore_eos = true;
    } else if (arg == "--json") {
      a.json = true;
    } else if (arg == "--logits") {
      a.logits = true;
    } else {
      throw ArgError{"unknown option '" + std::string(arg) + "'"};
    }
  }
  if (a.help) return a;
  if (a.model.empty()) throw ArgError{"--model DIR is required"};
  if (have_ids == a.have_prompt) throw ArgError{"give the prompt as --ids or as --prompt (one)"};
  if (a.have_regex && !a.json_schema.empty())
    throw ArgError{"--regex and --json-schema exclude each other"};
  if ((a.have_prompt || a.have_regex || !a.json_schema.empty()) && a.tokenizer.empty())
    throw ArgError{"--prompt, --regex and --json-schema need --tokenizer FILE"};
  if (!have_max_new) throw ArgError{"--max-new is required"};
  if (a.max_new < 1)
    throw ArgError{"--max-new must be at least 1 (got " + std::to_string(a.max_new) + ")"};
  if (a.logits && !a.json) throw ArgError{"--logits needs --json"};
  return a;
}

struct Generated {
  std::vector<std::int32_t> ids;
  std::vector<float> first_logits;  ///< filled only when asked for
};

/// Keeps the logits row of the first step (the one that chose the first generated token).
struct KeepFirstLogits {
  std::vector<float>* out;
  template <class View>
  std::optional<std::int32_t> before(const View&) {
    return std::nullopt;
  }
  template <class View>
  void after(const View& v, std::int32_t) {
    if (out && v.step == 0) out->assign(v.logits.begin(), v.logits.end());
  }
};

/// Loads the model (family F, storage S) with a head_dim-D cache, and runs the prompt + greedy
/// generation on one slot of a fresh cache sized prompt + max_new.
template <class F, StorageType S, int D>
Generated generate(const Args& a, const std::vector<std::int32_t>& prompt,
                   const std::vector<std::int32_t>& stop_ids,
                   const std::shared_ptr<const grammar::TokenGrammar>& grammar) {
  using Slice = LoraSlice<kRuntimeRankBound, host>;
  using Model = BaseModel<host, S, F>;
  const auto model = baton::load_model<host, S, F>(a.model);
  const auto slice =
      a.adapter.empty() ? Slice::none(model.config()) : Slice::load(a.adapter, model);
  if (const auto why = base_model_mismatch(slice, model))
    std::cerr << "baton: warning: " << *why << "\n";
  const int n = static_cast<int>(prompt.size());
  // In long long: --max-new 2147483647 plus the prompt must not wrap into a negative size.
  const long long positions = static_cast<long long>(n) + a.max_new;
  BATON_CHECK(positions <= model.config().max_positions(), capacity_error, a.model,
              ": the prompt's ", n, " ids + --max-new ", a.max_new, " = ", positions,
              " positions exceed the model's max_position_embeddings = ",
              model.config().max_positions(), " (config.json)");
  // The f32 head-major cache only: one layout keeps the instantiations (and build time) down.
  using Cache = KvBuffer<layout::HeadMajor<f32, D>, host>;
  Cache cache(model.config(),
              KvShape{.prefix_capacity = 0, .tail_capacity = n + a.max_new, .slots = 1});
  cache.reset_prefix();
  cache.freeze_prefix();
  Workspace<host> ws;
  const DecodeOptions opt{a.max_new, stop_ids};
  // The library's decode loop, with a hook that keeps the first step's logits when asked.
  Generated out;
  const auto run = [&](auto& d) {
    d.prefill(std::span<const std::int32_t>(prompt), 0);
    d.run(KeepFirstLogits{a.logits ? &out.first_logits : nullptr});
    out.ids = d.result().ids;
  };
  if (!grammar) {
    Decoder<Model, Slice, Cache> d(model, slice, cache, ws, KvTarget::in_slot(0), opt);
    run(d);
    return out;
  }
  // Constrained: the grammar masks every step; forced tokens skip their forward.
  using C = Chain<GrammarConstraint<host>, StepSkip>;
  const C chain{GrammarConstraint<host>(grammar), StepSkip{}};
  BranchState<C, host> branch(chain, "generate", BranchInfo{"generate", "generate", 0, a.max_new});
  Decoder<Model, Slice, Cache, C> d(model, slice, cache, ws, KvTarget::in_slot(0), opt, chain,
                                    branch, "generate");
  run(d);
  return out;
}

/// Shortest decimal form that reads back to the same float (std::to_chars); JSON has no
/// infinities or NaN, so those print as null.
void print_float(std::ostream& out, float v) {
  if (!std::isfinite(v)) {
    out << "null";
    return;
  }
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.write(buf, r.ptr - buf);
}

}  // namespace

int cmd_generate(int argc, char** argv) {
  Args a;
  try {
    a = parse_args(argc, argv);
  } catch (const ArgError& e) {
    std::cerr << "baton generate: " << e.message << "\n" << kUsage;
    return 2;
  }
  if (a.help) {
    std::cout << kUsage;
    return 0;
  }

  const ModelConfig cfg = io::load_model_config(a.model);
  const std::vector<std::int32_t> stop_ids =
      a.ignore_eos ? std::vector<std::int32_t>{} : cfg.eos_token_ids;
  std::optional<Tokenizer> tok;
  if (!a.tokenizer.empty()) tok = Tokenizer::from_file(a.tokenizer);
  const std::vector<std::int32_t> prompt = a.have_prompt ? tok->encode(a.prompt) : a.ids;
  BATON_CHECK(!prompt.empty(), usage_error, "--prompt \"", a.prompt, "\" encodes to no tokens");
  std::shared_ptr<const grammar::TokenGrammar> constraint;
  if (a.have_regex || !a.json_schema.empty()) {
    const grammar::GrammarSpec spec = a.have_regex
                                          ? grammar::GrammarSpec::regex(a.regex)
                                          : grammar::GrammarSpec::json_schema_text(
                                                io::read_text_file(a.json_schema), a.json_schema);
    // The grammar's end-of-sequence ids are the stop ids; its rows cover the model's logits.
    constraint = grammar::compile_grammar(
        spec, std::make_shared<const grammar::Vocabulary>(grammar::vocabulary_of(
                  *tok, stop_ids, static_cast<std::size_t>(cfg.vocab_size))));
  }

  // Run-time facts to template parameters: model family, storage type and head_dim (the
  // rank bound is kRuntimeRankBound, see lora_slice.hpp).
  const auto with_storage = [&](auto storage) {
    using S = typename decltype(storage)::type;
    return dispatch_head_dim(cfg.head_dim, [&](auto d) {
      if (cfg.architecture == Architecture::qwen3)
        return generate<family::Qwen3, S, decltype(d)::value>(a, prompt, stop_ids, constraint);
      return generate<family::Qwen2, S, decltype(d)::value>(a, prompt, stop_ids, constraint);
    });
  };
  Generated g;
  switch (stored_dtype(a.model)) {
    case dtype::f32:
      g = with_storage(std::type_identity<f32>{});
      break;
    case dtype::bf16:
      g = with_storage(std::type_identity<bf16>{});
      break;
    case dtype::f16:
      g = with_storage(std::type_identity<f16>{});
      break;
  }

  if (!a.json) {
    for (std::size_t i = 0; i < g.ids.size(); ++i) std::cout << (i ? " " : "") << g.ids[i];
    std::cout << "\n";
  } else {
    std::cout << "{\"ids\":[";
    for (std::size_t i = 0; i < g.ids.size(); ++i) std::cout << (i ? "," : "") << g.ids[i];
    std::cout << "]";
    if (tok)
      std::cout << ",\"text\":"
                << nlohmann::json(text::replace_invalid_utf8(tok->decode(g.ids))).dump();
    if (a.logits) {
      std::cout << ",\"logits\":[";
      for (std::size_t i = 0; i < g.first_logits.size(); ++i) {
        if (i) std::cout << ",";
        print_float(std::cout, g.first_logits[i]);
      }
      std::cout << "]";
    }
    std::cout << "}\n";
  }
  std::cout.flush();
  return std::cout ? 0 : 1;
}
