// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief baton.Model and baton.Generation: `baton generate` for Python. A Model holds the
///        folder's checked config, its weights (loaded once, in the storage asked for), its
///        tokenizer and a host thread pool; generate() runs the CLI's own run on them
///        (tools/generate_run.hpp, compiled once in dispatch/), with the same prompt, stop
///        ids, grammar and sampling rules, so its ids equal `baton generate`'s.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/variant.h>
#include <nanobind/stl/vector.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "baton/grammar/grammar.hpp"
#include "baton/grammar/tokenizer_vocabulary.hpp"
#include "baton/io/hf_config.hpp"
#include "baton/model/host_forward.hpp"
#include "baton/relay/config.hpp"
#include "baton/text/chat_config.hpp"
#include "baton/text/model_chat.hpp"
#include "bindings.hpp"
#include "convert.hpp"
#include "generate_instances.hpp"  // compiled once, in dispatch/
#include "options.hpp"

namespace baton::python {

namespace {

/// What generate() returns.
struct Generation {
  std::vector<std::int32_t> ids;
  std::optional<std::string> text;
  std::uint64_t seed = 0;
  double ms = 0;
  nb::object logits = nb::none();       ///< ndarray, when asked for
  nb::object step_logits = nb::none();  ///< list of ndarray | None, when asked for
  std::vector<TokenLogprobs> logprobs;
};

/// The grammar keywords: at most one of them.
struct GrammarArgs {
  std::optional<std::string> regex, json_schema;
};

/// A model folder loaded for generate(): its config (checked), its weights, its tokenizer when
/// it has one, and the host thread pool the forward runs on. One generate() at a time per Model
/// (the pool and the tokenizer's cache are not for two threads): the lock queues the others.
class ModelHandle {
 public:
  ModelHandle(const std::string& path, const std::optional<std::string>& tokenizer,
              const LoadOptions& load)
      : path_(path),
        storage_((load.check(), load.storage_type())),  // the keywords first, then the files
        config_(load_runtime_config(path)),
        context_(HostContextOptions{.threads = load.threads.value_or(0),
                                    .isa = load.isa_family(),
                                    .bf16_products = load.bf16_products}),
        weights_(cli::load_generator_dispatch<host>(path, config_, storage_)) {
    const std::filesystem::path tok_file = tokenizer
                                               ? std::filesystem::path(*tokenizer)
                                               : std::filesystem::path(path) / "tokenizer.json";
    if (tokenizer || std::filesystem::exists(tok_file)) {
      tok_.emplace(Tokenizer::from_file(tok_file));
      check_tokenizer_fits(tok_->vocab_size(), config_.vocab_size, tok_file.string(), path);
    }
  }

  const std::string& path() const { return path_; }
  const ModelConfig& config() const { return config_; }
  const Tokenizer* tokenizer() const { return tok_ ? &*tok_ : nullptr; }

  /// `baton generate` on `prompt` (the GIL released by the caller).
  cli::Generated generate(const Request& prompt, cli::GenerateJob job, bool chat, bool ignore_eos,
                          const GrammarArgs& grammar_args) {
    const std::scoped_lock lock(mutex_);
    job.model = path_;
    job.stop_ids = ignore_eos ? std::vector<std::int32_t>{}
                              : default_stop_ids(config_.eos_token_ids, path_, config_.vocab_size);
    job.prompt = prompt_ids(prompt, chat);
    if (grammar_args.regex || grammar_args.json_schema) {
      BATON_CHECK(!(grammar_args.regex && grammar_args.json_schema), usage_error,
                  "regex= and json_schema= exclude each other");
      BATON_CHECK(tok_.has_value(), usage_error, path_,
                  ": a grammar needs the model's tokenizer (tokenizer.json, or tokenizer=)");
      const grammar::GrammarSpec spec =
          grammar_args.regex
              ? grammar::GrammarSpec::regex(*grammar_args.regex)
              : grammar::GrammarSpec::json_schema_text(*grammar_args.json_schema, "json_schema=");
      job.grammar = grammar::compile_grammar(
          spec, std::make_shared<const grammar::Vocabulary>(grammar::vocabulary_of(
                    *tok_, job.stop_ids, static_cast<std::size_t>(config_.vocab_size))));
    }
    job.storage = storage_;
    job.host_context = &context_;
    return weights_->generate(job);
  }

 private:
  /// The prompt as `baton generate` makes it: ids as given, text encoded with added tokens
  /// recognised (--prompt), or a user message through the folder's chat template (--chat).
  std::vector<std::int32_t> prompt_ids(const Request& prompt, bool chat) {
    if (!chat) return request_ids(prompt, tokenizer(), /*specials=*/true, "generate");
    const auto* text = std::get_if<std::string>(&prompt);
    BATON_CHECK(text != nullptr, usage_error, "generate: chat=True needs the prompt as text");
    BATON_CHECK(tok_.has_value(), usage_error, path_, ": chat=True needs the model's tokenizer");
    const ChatConfig chat_config = load_chat_config(path_);
    return encode_model_chat(
        chat_config, *tok_, path_,
        nlohmann::ordered_json::array({{{"role", "user"}, {"content", *text}}}),
        chat_config.render_options(true));
  }

  std::string path_;
  std::optional<Storage> storage_;
  ModelConfig config_;
  std::optional<Tokenizer> tok_;
  HostContext context_;
  std::unique_ptr<cli::LoadedModel> weights_;
  std::mutex mutex_;
};

/// The Python result of one generate().
Generation to_python(cli::Generated&& g, const Tokenizer* tok, std::uint64_t seed, double ms,
                     bool step_logits) {
  Generation out;
  out.seed = seed;
  out.ms = ms;
  if (tok != nullptr) out.text = decode_text(*tok, g.ids);
  out.ids = std::move(g.ids);
  out.logprobs = std::move(g.logprobs);
  if (!g.first_logits.empty()) out.logits = nb::cast(owned_array(std::move(g.first_logits)));
  if (step_logits) {
    nb::list rows;
    for (std::vector<float>& row : g.step_logits)
      rows.append(row.empty() ? nb::none() : nb::cast(owned_array(std::move(row))));
    out.step_logits = std::move(rows);
  }
  return out;
}

}  // namespace

void bind_model(nb::module_& m) {
  nb::class_<Generation>(m, "Generation", "What Model.generate produced.")
      .def_ro("ids", &Generation::ids, "The generated token ids (a stop id is not included).")
      .def_ro("text", &Generation::text, "The ids decoded (None without a tokenizer).")
      .def_ro("seed", &Generation::seed, "The sampling seed used (given or drawn).")
      .def_ro("ms", &Generation::ms,
              "Wall time of the call in milliseconds: the adapter's loading (when one is "
              "named), the prompt's prefill and the decode (the weights are read once, by "
              "Model()).")
      .def_ro("logits", &Generation::logits,
              "With logits=True: the row that chose the first token (after a grammar's mask), a "
              "float32 NumPy array over the model's vocabulary that owns the engine's memory.")
      .def_ro("step_logits", &Generation::step_logits,
              "With step_logits=True: one row per generated id, the logits that chose it, or "
              "None for a step that supplied its token without a forward (a grammar's forced "
              "token).")
      .def_ro("logprobs", &Generation::logprobs,
              "With logprobs=N: each id's log-probability and its N best alternatives.")
      .def("__repr__", [](const Generation& g) {
        std::ostringstream out;
        out << "Generation(ids=" << g.ids.size() << " tokens, ";
        if (g.text) out << "text=" << repr_str(*g.text) << ", ";
        out << "ms=" << g.ms << ")";
        return out.str();
      });

  nb::class_<ModelHandle>(m, "Model",
                          "A model folder (Hugging Face layout: config.json + safetensors) "
                          "loaded for generation on the host backend.")
      .def(
          "__init__",
          [](ModelHandle* self, const std::string& path, std::optional<std::string> tokenizer,
             std::optional<std::string> backend, std::optional<std::string> storage,
             std::optional<int> threads, std::optional<bool> bf16_products,
             std::optional<std::string> isa) {
            const LoadOptions load{backend, storage, threads, bf16_products, isa};
            nb::gil_scoped_release unlocked;
            new (self) ModelHandle(path, tokenizer, load);
          },
          nb::arg("path"), nb::kw_only(), nb::arg("tokenizer") = nb::none(),
          nb::arg("backend") = nb::none(), nb::arg("storage") = nb::none(),
          nb::arg("threads") = nb::none(), nb::arg("bf16_products") = nb::none(),
          nb::arg("isa") = nb::none(),
          "Reads and checks `path`/config.json, loads the weights (once: every generate() "
          "runs on them) and the tokenizer (`tokenizer`, else "
          "`path`/tokenizer.json when it exists). storage: 'f32', 'bf16', 'f16', 'q8_0' or "
          "'q4_0' (default: the checkpoint's dtype); threads: the host thread pool's size (0 or "
          "None: every core); bf16_products: as `baton generate --bf16-products`; isa: the "
          "kernel family, 'avx512', 'avx2' or 'portable', as `baton generate --isa` (default: "
          "the best this CPU runs); backend: 'host' (the only one this module has).")
      .def(
          "generate",
          [](ModelHandle& self, const Request& prompt, int max_new,
             std::optional<std::string> adapter, bool chat, bool ignore_eos,
             std::optional<std::string> regex, std::optional<std::string> json_schema,
             std::optional<float> temperature, std::optional<int> top_k, std::optional<float> top_p,
             std::optional<float> min_p, std::optional<float> repeat_penalty,
             std::optional<float> presence_penalty, std::optional<float> frequency_penalty,
             std::optional<int> repeat_last_n, std::optional<std::uint64_t> seed,
             std::optional<int> logprobs, bool logits, bool step_logits) {
            BATON_CHECK(max_new >= 1, usage_error, "max_new=", max_new, " must be at least 1");
            const SamplingArgs sampling_args{
                temperature,       top_p, min_p,         repeat_penalty, presence_penalty,
                frequency_penalty, top_k, repeat_last_n, logprobs,       seed};
            cli::GenerateJob job{
                .adapter = adapter.value_or(""),
                .max_new = max_new,
                .keep_first_logits = logits,
                .keep_step_logits = step_logits,
                .sampling = sampling_options(sampling_args, self.config().vocab_size)};
            const std::uint64_t used_seed = job.sampling.seed;
            cli::Generated g;
            double ms = 0;
            {
              nb::gil_scoped_release unlocked;
              const auto t0 = std::chrono::steady_clock::now();
              g = self.generate(prompt, std::move(job), chat, ignore_eos,
                                GrammarArgs{regex, json_schema});
              ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                       .count();
            }
            return to_python(std::move(g), self.tokenizer(), used_seed, ms, step_logits);
          },
          nb::arg("prompt"), nb::kw_only(), nb::arg("max_new"), nb::arg("adapter") = nb::none(),
          nb::arg("chat") = false, nb::arg("ignore_eos") = false, nb::arg("regex") = nb::none(),
          nb::arg("json_schema") = nb::none(), nb::arg("temperature") = nb::none(),
          nb::arg("top_k") = nb::none(), nb::arg("top_p") = nb::none(),
          nb::arg("min_p") = nb::none(), nb::arg("repeat_penalty") = nb::none(),
          nb::arg("presence_penalty") = nb::none(), nb::arg("frequency_penalty") = nb::none(),
          nb::arg("repeat_last_n") = nb::none(), nb::arg("seed") = nb::none(),
          nb::arg("logprobs") = nb::none(), nb::arg("logits") = false,
          nb::arg("step_logits") = false,
          "Generates up to max_new tokens after `prompt` (text, encoded with added tokens "
          "recognised, or token ids used as given), exactly as `baton generate` does: greedy "
          "unless a sampling keyword is given, stopping at the model's eos ids unless "
          "ignore_eos. See docs/python.md for every keyword.")
      .def_prop_ro("path", &ModelHandle::path, "The model folder.")
      .def_prop_ro(
          "vocab_size", [](const ModelHandle& h) { return h.config().vocab_size; },
          "Rows of the model's logits.")
      .def_prop_ro(
          "architecture", [](const ModelHandle& h) { return h.config().architecture_name; },
          "config.json's architecture.")
      .def("__repr__", [](const ModelHandle& h) {
        return "Model(" + repr_str(h.path()) + ", " + h.config().architecture_name +
               ", vocab_size=" + std::to_string(h.config().vocab_size) + ", backend='host')";
      });
}

}  // namespace baton::python
