// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief `baton generate`: greedy generation from token ids or text on the host or the CUDA
/// backend, optionally constrained by a grammar (host).
///
///   baton generate --model DIR [--adapter DIR] (--ids 1,2,3 | --tokenizer FILE --prompt TEXT)
///                  --max-new N [--regex PATTERN | --json-schema FILE] [--ignore-eos]
///                  [--json] [--logits] [--step-logits] [--backend host|cuda]
///
/// With --chat, --prompt is the user's message: rendered through the model folder's own chat
/// template (tokenizer_config.json / chat_template.jinja, with add_generation_prompt) and
/// encoded with control tags in it kept as text; generation then also stops at
/// generation_config.json's eos_token_id(s) (Llama 3.x lists several); the BOS is added once when
/// tokenizer_config.json says add_bos_token (text/model_chat.hpp).
/// The ids are used exactly as given (no BOS is added); --prompt is encoded as written (added
/// tokens in it become their ids). Generation stops at one of the config's eos ids (not
/// printed) unless --ignore-eos, or after N tokens, or when the grammar's match is complete.
/// Output: the generated ids on one line, space-separated; with --json one object
/// {"ids":[...],"backend":"host"}, plus "text" (the decoded ids) when a tokenizer is given, plus
/// "logits":[...] with --logits (the row that chose the first generated token, after the
/// grammar's mask), plus "step_logits":[[...],...] with --step-logits (one row per generated id,
/// the row that chose it, after the grammar's mask; null for a step that supplied its token
/// without a forward). --step-logits is how tests/reference/hf_compare.py checks every step
/// against transformers.
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
#include "backend_choice.hpp"
#include "baton/grammar/grammar.hpp"
#include "baton/io/hf_config.hpp"
#include "baton/io/json_util.hpp"
#include "baton/model/host_forward.hpp"
#include "baton/text/chat_config.hpp"
#include "baton/text/model_chat.hpp"
#include "commands.hpp"
#include "cuda_entry.hpp"
#include "generate_instances.hpp"  // compiled once, in dispatch/
#include "host_choice.hpp"
#include "sampling_choice.hpp"
#include "storage_choice.hpp"

namespace generate_command {

using namespace baton;
using baton::cli::ArgError;
using baton::cli::BackendChoice;
using baton::cli::parse_ids;
using baton::cli::parse_int;

constexpr std::string_view kUsage =
    "usage: baton generate --model DIR [--adapter DIR] (--ids 1,2,3 | --tokenizer FILE --prompt "
    "TEXT)\n"
    "                      --max-new N [--regex PATTERN | --json-schema FILE] [--ignore-eos]\n"
    "                      [--json] [--logits] [--step-logits] [--backend host|cuda]\n"
    "                      [--temperature T] [--top-k K] [--top-p P] [--min-p P] [--seed N]\n"
    "                      [--repeat-penalty R] [--presence-penalty X] [--frequency-penalty X]\n"
    "                      [--repeat-last-n N] [--logprobs N]\n"
    "  --model DIR       Hugging Face model folder (config.json + safetensors; f32/bf16/f16)\n"
    "  --adapter DIR     PEFT LoRA adapter folder (adapter_config.json + "
    "adapter_model.safetensors)\n"
    "  --ids LIST        prompt token ids, comma-separated, used as given (no BOS added)\n"
    "  --tokenizer FILE  tokenizer.json: for --prompt, grammars and \"text\" in --json\n"
    "  --prompt TEXT     the prompt as text (instead of --ids)\n"
    "  --chat            --prompt is a user message, rendered through the model folder's chat\n"
    "                    template (docs/chat-templates.md); stops at generation_config's eos\n"
    "  --regex PATTERN   the output must match PATTERN (the whole output; docs/grammar.md)\n"
    "  --json-schema FILE  the output must be JSON matching the schema in FILE (subset)\n"
    "  --max-new N       generate at most N >= 1 tokens\n"
    "  --ignore-eos    do not stop at the config's eos_token_id(s)\n"
    "  --json          print {\"ids\":[...]} instead of space-separated ids\n"
    "  --logits        with --json: add \"logits\", the row that chose the first token\n"
    "  --step-logits   with --json: add \"step_logits\", the row that chose each token (null:\n"
    "                  a step without a forward); watches every step, so slower on cuda\n";

struct Args {
  std::string model, adapter, tokenizer, prompt, regex, json_schema;
  bool have_prompt = false, have_regex = false, chat = false;
  std::vector<std::int32_t> ids;
  int max_new = 0;
  bool ignore_eos = false, json = false, logits = false, step_logits = false, help = false;
  std::optional<BackendChoice> backend;   ///< --backend; unset: the build's default
  baton::cli::HostChoice host;            ///< --threads, --bf16-products
  std::optional<baton::Storage> storage;  ///< --storage; unset: the checkpoint's dtype
  baton::cli::SamplingChoice sampling;    ///< --temperature, --seed, --logprobs, ...
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
    } else if (arg == "--chat") {
      a.chat = true;
    } else if (arg == "--ignore-eos") {
      a.ignore_eos = true;
    } else if (arg == "--json") {
      a.json = true;
    } else if (arg == "--logits") {
      a.logits = true;
    } else if (arg == "--step-logits") {
      a.step_logits = true;
    } else if (arg == "--backend") {
      a.backend = baton::cli::parse_backend(value());
    } else if (baton::cli::parse_host_option(arg, value, a.host)) {
    } else if (baton::cli::parse_storage_option(arg, value, a.storage)) {
    } else if (baton::cli::parse_sampling_option(arg, value, a.sampling)) {
    } else {
      throw ArgError{"unknown option '" + detail::excerpt(arg) + "'"};
    }
  }
  if (a.help) return a;
  if (a.model.empty()) throw ArgError{"--model DIR is required"};
  if (have_ids == a.have_prompt) throw ArgError{"give the prompt as --ids or as --prompt (one)"};
  if (a.have_regex && !a.json_schema.empty())
    throw ArgError{"--regex and --json-schema exclude each other"};
  if ((a.have_prompt || a.have_regex || !a.json_schema.empty()) && a.tokenizer.empty())
    throw ArgError{"--prompt, --regex and --json-schema need --tokenizer FILE"};
  if (a.chat && !a.have_prompt) throw ArgError{"--chat needs --prompt TEXT"};
  if (!have_max_new) throw ArgError{"--max-new is required"};
  if (a.max_new < 1)
    throw ArgError{"--max-new must be at least 1 (got " + std::to_string(a.max_new) + ")"};
  if (a.logits && !a.json) throw ArgError{"--logits needs --json"};
  if (a.sampling.options.logprobs && !a.json) throw ArgError{"--logprobs needs --json"};
  baton::cli::finish_sampling_choice(a.sampling);
  if (a.step_logits && !a.json) throw ArgError{"--step-logits needs --json"};
  if (a.backend == BackendChoice::cuda && (a.have_regex || !a.json_schema.empty()))
    throw ArgError{"--regex and --json-schema run on --backend host only (so far)"};
  return a;
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

/// A logits row as a JSON array (written directly: a row per step of a large vocabulary is
/// too much to build as a JSON value first).
void print_row(std::ostream& out, const std::vector<float>& row) {
  out << "[";
  for (std::size_t i = 0; i < row.size(); ++i) {
    if (i) out << ",";
    print_float(out, row[i]);
  }
  out << "]";
}

}  // namespace generate_command

int cmd_generate(int argc, char** argv) {
  using namespace generate_command;
  Args a;
  try {
    a = parse_args(argc, argv);
  } catch (const ArgError& e) {
    // The error and where the options are, not the whole option list: a mistyped flag should
    // not bury its message under a page of usage.
    std::cerr << "baton generate: " << e.message << "\n"
              << "(baton generate --help lists the options)\n";
    return 2;
  }
  if (a.help) {
    std::cout << kUsage << baton::cli::kSamplingUsage << baton::cli::backend_usage()
              << baton::cli::host_usage() << baton::cli::storage_usage();
    return 0;
  }
  const BackendChoice backend = baton::cli::resolve_backend(a.backend);
  try {
    baton::cli::check_host_options(a.host, backend == BackendChoice::host);
  } catch (const ArgError& e) {
    std::cerr << "baton generate: " << e.message << "\n";
    return 2;
  }

  const ModelConfig cfg = load_runtime_config(a.model);
  // generation_config.json's eos ids end generation too (Llama 3.x: <|eot_id|>, <|eom_id|>).
  const std::vector<std::int32_t> stop_ids =
      a.ignore_eos ? std::vector<std::int32_t>{}
                   : baton::default_stop_ids(cfg.eos_token_ids, a.model, cfg.vocab_size);
  std::optional<baton::ChatConfig> chat;
  if (a.chat) chat = baton::load_chat_config(a.model);
  std::optional<Tokenizer> tok;
  if (!a.tokenizer.empty()) {
    tok = Tokenizer::from_file(a.tokenizer);
    check_tokenizer_fits(tok->vocab_size(), cfg.vocab_size, a.tokenizer, a.model);
  }
  const std::vector<std::int32_t> prompt =
      chat ? baton::encode_model_chat(
                 *chat, *tok, a.model,
                 nlohmann::ordered_json::array({{{"role", "user"}, {"content", a.prompt}}}),
                 chat->render_options(true))
      : a.have_prompt ? tok->encode(a.prompt)
                      : a.ids;
  BATON_CHECK(!prompt.empty(), usage_error, "--prompt \"", detail::excerpt(a.prompt),
              "\" encodes to no tokens");
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

  cli::GenerateJob job{.model = a.model,
                       .adapter = a.adapter,
                       .prompt = prompt,
                       .stop_ids = stop_ids,
                       .max_new = a.max_new,
                       .keep_first_logits = a.logits,
                       .keep_step_logits = a.step_logits,
                       .grammar = constraint,
                       .storage = a.storage,
                       .sampling = a.sampling.options};
  cli::Generated g;
  if (backend == BackendChoice::cuda) {
#if BATON_CLI_CUDA  // without CUDA, parse_backend has refused --backend cuda already
    g = cli::generate_on_cuda(job);
#endif
  } else {
    // The forward's loops on a thread pool this command owns (not OpenMP's spinning team).
    HostContext context(HostContextOptions{.threads = a.host.threads.value_or(0),
                                           .isa = a.host.isa,
                                           .bf16_products = a.host.bf16_products});
    job.host_context = &context;
    g = cli::generate_dispatch<host>(job, cfg);
  }

  if (!a.json) {
    for (std::size_t i = 0; i < g.ids.size(); ++i) std::cout << (i ? " " : "") << g.ids[i];
    std::cout << "\n";
  } else {
    std::cout << "{\"ids\":[";
    for (std::size_t i = 0; i < g.ids.size(); ++i) std::cout << (i ? "," : "") << g.ids[i];
    std::cout << "],\"backend\":\"" << cli::backend_name(backend) << "\"";
    if (a.sampling.any) std::cout << ",\"seed\":" << a.sampling.options.seed;
    if (a.sampling.options.logprobs) {
      std::cout << ",\"logprobs\":" << cli::logprobs_json(g.logprobs).dump();
    }
    if (tok)
      std::cout << ",\"text\":"
                << nlohmann::json(text::replace_invalid_utf8(tok->decode_known(g.ids))).dump();
    if (a.logits) {
      std::cout << ",\"logits\":";
      print_row(std::cout, g.first_logits);
    }
    if (a.step_logits) {
      std::cout << ",\"step_logits\":[";
      for (std::size_t s = 0; s < g.step_logits.size(); ++s) {
        if (s) std::cout << ",";
        if (g.step_logits[s].empty()) {
          std::cout << "null";  // the step supplied its token without a forward
        } else {
          print_row(std::cout, g.step_logits[s]);
        }
      }
      std::cout << "]";
    }
    std::cout << "}\n";
  }
  std::cout.flush();
  return std::cout ? 0 : 1;
}
