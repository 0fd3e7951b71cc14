// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief A relay described in a JSON file, parsed into plain data (RelaySpec).
///
/// ```json
/// { "model": "qwen/", "tokenizer": "qwen/tokenizer.json",
///   "stages": [
///     {"name": "extract", "adapter": "adapters/extract", "prefix": [1, 2, 3],
///      "input": [{"ids": [5]}, {"request": true}, {"text": "\nFacts:"}],
///      "max_new": 160, "stop": [2]},
///     {"name": "reason", "system": "You reason.", "examples": [["q", "a"]],
///      "input": [{"request": true}, {"out": "extract"}, {"feedback": "verify"}], "max_new": 256,
///      "stop_text": ["<|im_end|>"], "grammar": {"regex": "[0-9]+ [-+*] [0-9]+"}},
///     {"name": "verify", "input": [{"out": "reason"}], "max_new": 4, "exact": true,
///      "interceptors": [{"trace": true}]}],
///   "gate": {"starts_with": "PASS"}, "max_cycles": 3, "loop_from": "reason",
///   "max_request_tokens": 512, "name": "qa", "output": "reason" }
/// ```
/// "name" and "output" serve `baton serve`: the name clients give as "model" (default: the
/// file's name without ".json"), and the stage whose text is the answer (default: the last).
/// Paths are relative to the file (and normalized: "." names the file's folder). Every count
/// and string is bounded (io::ReadLimits' relay_* fields, docs/security.md): a file may not
/// ask for 40,000 stages or a billion cycles. Ids may always be given; text fields ("text",
/// "system", "examples", "stop_text", a text gate, stop sequences, token sets given as text)
/// need a tokenizer and are resolved by text/relay_text.hpp, so this header needs no tokenizer.
/// Errors name the file and the field.
/// A stage's "grammar" ({"regex": "..."} or {"json_schema": {...}}, docs/grammar.md) is
/// checked here and compiled against the tokenizer by resolve_text; load_relay_spec keeps a
/// schema's properties in the file's order (parse_relay_spec, given parsed JSON, sees them in
/// the order nlohmann::json iterates: sorted).
#pragma once

#include <algorithm>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "baton/backend/isa.hpp"
#include "baton/backend/thread_pool.hpp"
#include "baton/core/storage.hpp"
#include "baton/grammar/grammar_spec.hpp"
#include "baton/intercept/token_bytes.hpp"
#include "baton/io/json_util.hpp"
#include "baton/relay/interceptor_spec.hpp"
#include "baton/relay/sampling_json.hpp"
#include "baton/relay/segments.hpp"

namespace baton {

namespace grammar {
class TokenGrammar;
}

struct SegmentSpec {
  Segment::Kind kind = Segment::Kind::literal;
  int stage = -1;     ///< output/feedback: resolved stage index
  IdsOrText literal;  ///< literal: ids or text
};

/// "shared": the sequence a relay of activated adapters shares (relay/shared_sequence.hpp).
struct SharedSpec {
  std::vector<std::int32_t> prefix;   ///< "prefix" ids: the common prefix
  std::optional<std::string> system;  ///< ... or a ChatML system prompt (text)
  std::vector<SegmentSpec> input;     ///< "input": the opening (text/ids and the request)
  IdsOrText turn_end;                 ///< "turn_end": ids closing each stage's turn
};

struct StageSpec {
  std::string name;
  std::optional<std::filesystem::path> adapter;  ///< none: the base model
  /// "lora": an adapter a server serves by this name (`baton serve --lora NAME=DIR`), in place
  /// of "adapter"; the server resolves it into `adapter` before the relay is built.
  std::optional<std::string> served_adapter;
  std::vector<std::int32_t> prefix;                           ///< "prefix" ids
  std::optional<std::string> system;                          ///< ChatML system prompt (text)
  std::vector<std::pair<std::string, std::string>> examples;  ///< ChatML few-shot (text)
  /// "template": "model" renders system, examples and the user turn (the stage's input)
  /// through the model folder's own chat template (resolve_text) instead of ChatML.
  bool model_template = false;
  std::vector<SegmentSpec> input;
  /// A stage without "input" in a relay with "shared" reads the shared sequence: its input is
  /// then that sequence and its "invocation" (text or ids), or without one the adapter's
  /// alora_invocation_tokens (taken when the relay is built).
  bool reads_shared = false;
  std::optional<IdsOrText> invocation;
  int max_new = 0;
  std::vector<std::int32_t> stop;
  std::vector<std::string> stop_text;  ///< each must be one token of the tokenizer
  /// "sampling": how the stage chooses its tokens (relay/sampling_json.hpp); greedy when absent.
  /// Its stream is the stage's index, so stages of one seed draw independently.
  SamplingOptions sampling;
  bool exact = false;           ///< "exact": rejects distribution-altering interceptors
  bool graph_captured = false;  ///< "graph_captured": graph-safe interceptors only
  std::vector<InterceptorSpec> interceptors;    ///< "interceptors", in the file's order
  std::optional<grammar::GrammarSpec> grammar;  ///< "grammar": the output must match it
  /// `grammar` compiled against the tokenizer, with `stop` as its end-of-sequence ids
  /// (resolve_text sets it).
  std::shared_ptr<const grammar::TokenGrammar> compiled_grammar;
};

struct GateSpec {
  enum class Kind { none, starts_with, contains } kind = Kind::none;
  IdsOrText needle;
};

/// "host": how a relay on the host backend runs (HostContextOptions, backend/host_context.hpp).
struct HostRunSpec {
  /// "threads": its thread pool's size, at most ThreadPool::max_threads(); 0: every core.
  int threads = 0;
  /// "bf16_products": products with bf16 weights on AVX512-BF16 / AMX (activations split into
  /// two bf16 terms); unset: wherever the CPU has them (HostContextOptions::bf16_products);
  /// false: f32.
  std::optional<bool> bf16_products;
  /// "isa": the kernel family, "avx512", "avx2" or "portable" (HostContextOptions::isa): an
  /// older CPU's kernels on this one, as the benchmarks cap both engines; unset: the best the
  /// CPU runs.
  std::optional<host_simd::Isa> isa;
};

struct RelaySpec {
  std::filesystem::path source;  ///< the JSON file (for messages)
  std::filesystem::path model;
  std::optional<std::filesystem::path> tokenizer;
  /// "backend": "host" or "cuda"; unset: the program's choice. The relay builders refuse a
  /// spec that names another backend than theirs (check_spec_backend); `baton relay
  /// --backend` overrides the file (tools/backend_choice.hpp).
  std::optional<std::string> backend;
  /// "storage": what the base model's matrices are held in: "f32", "bf16", "f16" (converted at
  /// load), "q8_0" or "q4_0" (quantized at load: core/quant.hpp); unset: the checkpoint's own
  /// dtype. `baton relay --storage` overrides the file.
  std::optional<Storage> storage;
  /// "host": {"threads": N, "bf16_products": true | false, "isa": "avx2"}; the CUDA backend
  /// ignores it.
  HostRunSpec host;
  std::optional<SharedSpec> shared;  ///< "shared": set when stages read a shared sequence
  std::vector<StageSpec> stages;
  GateSpec gate;
  int max_cycles = 1;
  std::optional<int> loop_from;
  /// "trusted_text": control tags written in requests are control tokens, and so are those in
  /// the system prompts and examples of "template": "model" stages. Unset (false), a request's
  /// text is encoded as text in every relay (a request cannot inject "<|im_start|>system"), and
  /// so is a model-template stage's system prompt and examples; the operator's own ChatML
  /// prompts keep their tags.
  bool trusted_text = false;
  /// Whether a request's text is encoded as text (request_ids in text/relay_text.hpp): every
  /// relay without "trusted_text".
  bool request_is_text = true;
  int max_request_tokens = 512;  ///< sizes each stage's slot (with the outputs it reads)
  /// "name": what a server calls the relay (unset: the file's stem; served_name()).
  std::optional<std::string> name;
  /// "output": the stage whose text is the relay's answer (index; default the last stage).
  int output_stage = -1;
  /// Requests each stage serves at once: its slots, the pool a batch scheduler
  /// (RuntimeRelay::batched) draws from. Not read from the file: `baton relay --concurrency N`
  /// sets it.
  int slots = 1;
  /// Every token's bytes, for stop sequences (set by resolve_text from the tokenizer).
  std::shared_ptr<const TokenByteTable> token_bytes;
  /// How many ids the tokenizer has (resolve_text sets it; 0: none used): the relay builder
  /// checks them against the model's rows (check_tokenizer_fits).
  std::size_t tokenizer_ids = 0;

  /// Whether any field still needs the tokenizer (resolve_text): text fields, and stop
  /// sequences (matched on token bytes) while token_bytes is unset.
  bool has_text() const {
    if (gate.needle.text) return true;
    if (shared) {
      if (shared->system || shared->turn_end.text) return true;
      for (const SegmentSpec& g : shared->input)
        if (g.literal.text) return true;
    }
    for (const StageSpec& s : stages) {
      if (s.invocation && s.invocation->text) return true;
      if (s.system || !s.examples.empty() || !s.stop_text.empty()) return true;
      if (s.grammar && !s.compiled_grammar) return true;
      for (const SegmentSpec& g : s.input)
        if (g.literal.text) return true;
      for (const InterceptorSpec& i : s.interceptors) {
        if (!i.token_texts.empty()) return true;
        if (i.kind == InterceptorSpec::Kind::stop_sequences && !token_bytes) return true;
      }
    }
    return false;
  }
};

/// A path in a relay file: longer ones cannot be opened (PATH_MAX), and would fill messages.
inline constexpr std::size_t kMaxRelayPathBytes = 4096;

namespace detail {

/// The limit on one count or string of a relay file, and the name that raises it.
struct RelayBound {
  std::size_t max;
  const char* raise;  ///< e.g. "io::ReadLimits::relay_ids"
};

/// config_error unless `n` (the number of `what` that `where` holds) is within `b`.
inline void check_count(std::size_t n, RelayBound b, const std::string& where, const char* what) {
  BATON_CHECK(n <= b.max, config_error, where, " has ", n, " ", what, ", more than the limit of ",
              b.max, " (", b.raise, ")");
}

/// `text`, the string at `where`, if it has at most b.max bytes; else config_error quoting
/// its start.
inline std::string bounded(std::string text, RelayBound b, const std::string& where) {
  BATON_CHECK(text.size() <= b.max, config_error, where, " = \"", excerpt(text), "\" is ",
              text.size(), " bytes, more than the limit of ", b.max, " (", b.raise, ")");
  return text;
}

/// The limits a relay file is read under (io::ReadLimits' relay fields), by kind.
struct RelayBounds {
  explicit RelayBounds(const io::ReadLimits& l)
      : ids{l.relay_ids, "io::ReadLimits::relay_ids"},
        entries{l.relay_entries, "io::ReadLimits::relay_entries"},
        name{l.relay_name_bytes, "io::ReadLimits::relay_name_bytes"},
        text{l.relay_text_bytes, "io::ReadLimits::relay_text_bytes"},
        stages{static_cast<std::size_t>(std::max(l.relay_stages, 0)),
               "io::ReadLimits::relay_stages"},
        cycles{static_cast<std::size_t>(std::max(l.relay_cycles, 0)),
               "io::ReadLimits::relay_cycles"} {}
  RelayBound ids, entries, name, text, stages, cycles;
  RelayBound path{kMaxRelayPathBytes, "the system's PATH_MAX; not configurable"};
};

inline std::vector<std::int32_t> json_ids(const nlohmann::json& v, const std::string& where,
                                          RelayBound max) {
  BATON_CHECK(v.is_array(), config_error, where, " must be an array of token ids");
  check_count(v.size(), max, where, "ids");
  std::vector<std::int32_t> ids;
  for (const auto& e : v) {
    BATON_CHECK(e.is_number_integer() && e.get<long long>() >= 0 &&
                    e.get<long long>() <= std::numeric_limits<std::int32_t>::max(),
                config_error, where, " holds ", io::detail::show(e), ", not a token id");
    ids.push_back(e.get<std::int32_t>());
  }
  return ids;
}

inline IdsOrText json_ids_or_text(const nlohmann::json& v, const std::string& where,
                                  const RelayBounds& b) {
  if (v.is_string()) return IdsOrText{{}, bounded(v.get<std::string>(), b.text, where)};
  return IdsOrText{json_ids(v, where, b.ids), std::nullopt};
}

// "grammar": {"regex": "..."} or {"json_schema": {...}}; its syntax is checked now, so the
// message names the file.
inline grammar::GrammarSpec grammar_field(const nlohmann::json& v, const std::string& where,
                                          const RelayBounds& b) {
  BATON_CHECK(v.is_object() && v.size() == 1 && (v.contains("regex") || v.contains("json_schema")),
              config_error, where,
              " must be {\"regex\": \"...\"} or {\"json_schema\": {...}}; got ",
              io::detail::show(v));
  grammar::GrammarSpec g;
  if (v.contains("regex")) {
    BATON_CHECK(v["regex"].is_string(), config_error, where, ".regex must be a string");
    g = grammar::GrammarSpec::regex(
        bounded(v["regex"].get<std::string>(), b.text, where + ".regex"));
  } else {
    BATON_CHECK(v["json_schema"].is_object(), config_error, where,
                ".json_schema must be an object (a JSON Schema)");
    g = grammar::GrammarSpec::json_schema(nlohmann::ordered_json::parse(v["json_schema"].dump()));
  }
  try {
    (void)g.language();
  } catch (const grammar_error& e) {
    BATON_FAIL(grammar_error, where, ": ", e.what());
  }
  return g;
}

inline int stage_ref(const nlohmann::json& v, const std::vector<std::string>& names,
                     const std::string& where) {
  if (v.is_number_integer()) {
    const long long k = v.get<long long>();
    BATON_CHECK(k >= 0 && k < static_cast<long long>(names.size()), config_error, where,
                " names stage ", k, " but the relay has stages 0..", names.size() - 1);
    return static_cast<int>(k);
  }
  BATON_CHECK(v.is_string(), config_error, where, " must be a stage name or index");
  for (std::size_t i = 0; i < names.size(); ++i)
    if (names[i] == v.get<std::string>()) return static_cast<int>(i);
  BATON_FAIL(config_error, where, " names stage '", excerpt(v.get<std::string>()),
             "', which does not exist");
}

inline std::vector<std::string> known_keys_check(const nlohmann::json& obj,
                                                 const std::string& where,
                                                 std::initializer_list<const char*> known) {
  std::vector<std::string> keys;
  for (const auto& [k, v] : obj.items()) {
    bool ok = false;
    for (const char* kn : known) ok = ok || k == kn;
    BATON_CHECK(ok, config_error, where, ": unknown field '", excerpt(k), "'");
    keys.push_back(k);
  }
  return keys;
}

/// One entry of a stage's "interceptors" array: an object with one key, the built-in's name.
inline InterceptorSpec parse_interceptor(const nlohmann::json& g, const std::string& where,
                                         const RelayBounds& b) {
  const char* kinds =
      "one of {\"stop_sequences\": [...]}, {\"allow_tokens\": [...]}, {\"deny_tokens\": "
      "[...]}, {\"trace\": true}, {\"step_skip\": true}";
  BATON_CHECK(g.is_object() && g.size() == 1, config_error, where, " must be ", kinds, "; got ",
              io::detail::show(g));
  const std::string key = g.begin().key();
  const nlohmann::json& val = g.begin().value();
  const std::string field = where + "." + key;
  InterceptorSpec spec;
  spec.where = where + " (" + key + ")";
  if (key == "stop_sequences") {
    spec.kind = InterceptorSpec::Kind::stop_sequences;
    BATON_CHECK(val.is_array() && !val.empty(), config_error, field,
                " must be a non-empty array of stop strings (text, or arrays of token ids)");
    check_count(val.size(), b.entries, field, "stop sequences");
    for (std::size_t k = 0; k < val.size(); ++k) {
      const std::string ew = field + "[" + std::to_string(k) + "]";
      BATON_CHECK(val[k].is_string() || val[k].is_array(), config_error, ew, " holds ",
                  io::detail::show(val[k]), ", not a string or an array of token ids");
      spec.stops.push_back(json_ids_or_text(val[k], ew, b));
      BATON_CHECK(spec.stops.back().text ? !spec.stops.back().text->empty()
                                         : !spec.stops.back().ids.empty(),
                  config_error, ew, " is empty");
    }
  } else if (key == "allow_tokens" || key == "deny_tokens") {
    spec.kind = key == "allow_tokens" ? InterceptorSpec::Kind::allow_tokens
                                      : InterceptorSpec::Kind::deny_tokens;
    BATON_CHECK(val.is_array() && !val.empty(), config_error, field,
                " must be a non-empty array of token ids (or strings of one token each)");
    check_count(val.size(), b.ids, field, "tokens");
    for (std::size_t k = 0; k < val.size(); ++k) {
      const std::string ew = field + "[" + std::to_string(k) + "]";
      if (val[k].is_string()) {
        spec.token_texts.push_back(bounded(val[k].get<std::string>(), b.text, ew));
      } else {
        spec.token_ids.push_back(json_ids(nlohmann::json::array({val[k]}), ew, b.ids)[0]);
      }
    }
  } else if (key == "trace" || key == "step_skip") {
    spec.kind = key == "trace" ? InterceptorSpec::Kind::trace : InterceptorSpec::Kind::step_skip;
    BATON_CHECK(val == true, config_error, field, ": write {\"", key, "\": true}");
  } else {
    BATON_FAIL(config_error, where, ": unknown interceptor '", excerpt(key), "'; use ", kinds);
  }
  return spec;
}

}  // namespace detail

namespace detail {
/// An "input" array of segments at `where`. `names`: the relay's stages, which "out" and
/// "feedback" may name (an "out" only a stage before `reader`); empty: the shared sequence's
/// opening, which holds text, ids and the request only.
inline std::vector<SegmentSpec> parse_segments(const nlohmann::json& arr, const std::string& where,
                                               const std::vector<std::string>& names, int reader,
                                               const RelayBounds& bounds) {
  BATON_CHECK(arr.is_array() && !arr.empty(), config_error, where,
              " must be a non-empty array of segments");
  check_count(arr.size(), bounds.entries, where, "segments");
  const bool outputs = !names.empty();
  std::vector<SegmentSpec> out;
  for (std::size_t k = 0; k < arr.size(); ++k) {
    const auto& g = arr[k];
    const std::string gw = where + "[" + std::to_string(k) + "]";
    BATON_CHECK(g.is_object() && g.size() == 1, config_error, gw,
                " must be one of {\"ids\": [...]}, {\"text\": \"...\"}, {\"request\": true}",
                outputs ? ", {\"out\": stage}, {\"feedback\": stage}" : "", "; got ",
                io::detail::show(g));
    // The one key of the object (not through items(): its proxy is a temporary).
    const std::string key = g.begin().key();
    const nlohmann::json& val = g.begin().value();
    SegmentSpec seg;
    if (key == "ids") {
      seg.literal.ids = json_ids(val, gw + ".ids", bounds.ids);
    } else if (key == "text") {
      BATON_CHECK(val.is_string(), config_error, gw, ".text must be a string");
      seg.literal.text = bounded(val.get<std::string>(), bounds.text, gw + ".text");
    } else if (key == "request") {
      BATON_CHECK(val == true, config_error, gw, ": write {\"request\": true}");
      seg.kind = Segment::Kind::request;
    } else if (outputs && (key == "out" || key == "feedback")) {
      seg.kind = key == "out" ? Segment::Kind::output : Segment::Kind::feedback;
      seg.stage = stage_ref(val, names, gw + "." + key);
      // Checked here too so the message names the file; the engine re-checks.
      BATON_CHECK(key == "feedback" || seg.stage < reader, config_error, gw, ": {\"out\": \"",
                  names[seg.stage],
                  "\"}: a stage may only read the output of an "
                  "earlier stage (use \"feedback\" for the previous cycle's output)");
    } else if (!outputs && (key == "out" || key == "feedback")) {
      BATON_FAIL(config_error, gw,
                 ": the shared sequence's opening holds text, ids and the "
                 "request; each stage's output is appended to it as the stage's turn");
    } else {
      BATON_FAIL(config_error, gw, ": unknown segment kind '", excerpt(key), "'");
    }
    out.push_back(std::move(seg));
  }
  return out;
}
}  // namespace detail

/// Parses a relay description; `source` is the file (paths are resolved against its folder);
/// the counts and strings it may hold are `limits`' relay fields.
inline RelaySpec parse_relay_spec(const nlohmann::json& j, const std::filesystem::path& source,
                                  const io::ReadLimits& limits = {}) {
  const std::string src = source.string();
  const detail::RelayBounds bounds(limits);
  // A path field, against the file's folder and normalized ("." and a trailing "/" dropped):
  // the model folder's name is compared with what adapters were trained on.
  const auto path_field = [&](const io::FieldReader<>& r, std::string_view key,
                              const std::string& where) -> std::optional<std::filesystem::path> {
    const auto p = r.string(key);
    if (!p) return std::nullopt;
    const std::filesystem::path full =
        (source.parent_path() / detail::bounded(*p, bounds.path, where + "." + std::string(key)))
            .lexically_normal();
    // lexically_normal keeps a trailing separator ("dir/."→"dir/"): drop it, so the path's last
    // component is the folder's name.
    return full.has_filename() || !full.has_parent_path() ? full : full.parent_path();
  };
  BATON_CHECK(j.is_object(), config_error, src, ": a relay description is a JSON object");
  detail::known_keys_check(
      j, src,
      {"model", "tokenizer", "backend", "host", "stages", "gate", "max_cycles", "loop_from",
       "max_request_tokens", "name", "output", "storage", "shared", "trusted_text"});
  const io::FieldReader<> f(j, src);
  RelaySpec spec;
  spec.source = source;
  f.require("model");
  spec.model = *path_field(f, "model", src + ": field 'model'");
  spec.tokenizer = path_field(f, "tokenizer", src + ": field 'tokenizer'");
  if (auto b = f.string("backend")) {
    BATON_CHECK(*b == "host" || *b == "cuda", config_error, src, ": field 'backend' = \"",
                detail::excerpt(*b), "\": a relay runs on \"host\" or \"cuda\"");
    spec.backend = *b;
  }
  if (auto st = f.string("storage")) {
    spec.storage = parse_storage(*st);
    BATON_CHECK(spec.storage.has_value(), config_error, src, ": field 'storage' = \"",
                detail::excerpt(*st),
                "\": the base model is held in \"f32\", \"bf16\", \"f16\", \"q8_0\" or \"q4_0\"");
  }
  if (j.contains("host")) {
    const std::string hw = src + ": field 'host'";
    BATON_CHECK(j["host"].is_object(), config_error, hw,
                " must be an object, e.g. {\"threads\": 2, \"bf16_products\": false}");
    detail::known_keys_check(j["host"], hw, {"threads", "bf16_products", "isa"});
    const io::FieldReader<> h(j["host"], hw);
    spec.host.threads = h.int_or("threads", 0);
    BATON_CHECK(spec.host.threads >= 0 && spec.host.threads <= ThreadPool::max_threads(),
                config_error, hw, ": 'threads' = ", spec.host.threads, " must be in [0, ",
                ThreadPool::max_threads(), "] (0: every core; ThreadPool::max_threads())");
    if (j["host"].contains("bf16_products"))
      spec.host.bf16_products = h.bool_or("bf16_products", false);
    if (const auto isa = h.string("isa")) {
      spec.host.isa = host_simd::parse_isa(*isa);
      BATON_CHECK(spec.host.isa.has_value(), config_error, hw, ": 'isa' = \"",
                  detail::excerpt(*isa),
                  "\": the kernel family is \"avx512\", \"avx2\" or \"portable\"");
    }
  }
  spec.max_cycles = f.int_or("max_cycles", 1);
  BATON_CHECK(spec.max_cycles >= 1, config_error, src, ": field 'max_cycles' must be >= 1");
  BATON_CHECK(static_cast<std::size_t>(spec.max_cycles) <= bounds.cycles.max, config_error, src,
              ": field 'max_cycles' = ", spec.max_cycles, " is more than the limit of ",
              bounds.cycles.max, " (", bounds.cycles.raise, ")");
  spec.max_request_tokens = f.int_or("max_request_tokens", 512);
  BATON_CHECK(spec.max_request_tokens >= 1, config_error, src,
              ": field 'max_request_tokens' must be >= 1");

  if (j.contains("shared")) {
    const std::string sw = src + ": field 'shared'";
    const auto& sh = j["shared"];
    BATON_CHECK(sh.is_object(), config_error, sw,
                " must be an object: {\"system\": ..., \"input\": [...], \"turn_end\": ...}");
    detail::known_keys_check(sh, sw, {"prefix", "system", "input", "turn_end"});
    const io::FieldReader<> shf(sh, sw);
    SharedSpec shared;
    if (shf.has("prefix"))
      shared.prefix = detail::json_ids(sh["prefix"], sw + ".prefix", bounds.ids);
    if (auto sys = shf.string("system"))
      shared.system = detail::bounded(std::move(*sys), bounds.text, sw + ".system");
    BATON_CHECK(shared.prefix.empty() || !shared.system, config_error, sw,
                ": give the common prefix as 'prefix' ids or as 'system' text, not both");
    shf.require("input");
    shared.input = detail::parse_segments(sh["input"], sw + ".input", {}, 0, bounds);
    bool request = false;
    for (const SegmentSpec& g : shared.input) request = request || g.kind == Segment::Kind::request;
    BATON_CHECK(request, config_error, sw,
                ".input holds no {\"request\": true}: the shared sequence is the request's");
    if (sh.contains("turn_end"))
      shared.turn_end = detail::json_ids_or_text(sh["turn_end"], sw + ".turn_end", bounds);
    spec.shared = std::move(shared);
  }

  f.require("stages");
  const auto& stages = j["stages"];
  BATON_CHECK(stages.is_array() && !stages.empty(), config_error, src,
              ": field 'stages' must be a non-empty array");
  detail::check_count(stages.size(), bounds.stages, src + ": field 'stages'", "stages");
  std::vector<std::string> names;
  for (std::size_t i = 0; i < stages.size(); ++i) {
    const std::string where = src + ": stages[" + std::to_string(i) + "]";
    BATON_CHECK(stages[i].is_object(), config_error, where, " must be an object");
    BATON_CHECK(stages[i].contains("name") && stages[i]["name"].is_string(), config_error, where,
                ": missing string field 'name'");
    names.push_back(
        detail::bounded(stages[i]["name"].get<std::string>(), bounds.name, where + ".name"));
    for (std::size_t k = 0; k + 1 < names.size(); ++k)
      BATON_CHECK(names[k] != names.back(), config_error, where, ": stage name '", names.back(),
                  "' is used twice");
  }
  for (std::size_t i = 0; i < stages.size(); ++i) {
    const std::string where = src + ": stages[" + std::to_string(i) + "] ('" + names[i] + "')";
    const auto& s = stages[i];
    detail::known_keys_check(s, where,
                             {"name", "adapter", "lora", "prefix", "system", "examples", "input",
                              "max_new", "stop", "stop_text", "exact", "graph_captured",
                              "interceptors", "grammar", "invocation", "template", "sampling"});
    const io::FieldReader<> sf(s, where);
    StageSpec st;
    st.name = names[i];
    st.adapter = path_field(sf, "adapter", where);
    if (auto lora = sf.string("lora")) {
      BATON_CHECK(!st.adapter, config_error, where,
                  ": give 'adapter' (a folder) or 'lora' (a served adapter's name), not both");
      BATON_CHECK(!lora->empty(), config_error, where, ".lora is empty");
      st.served_adapter = detail::bounded(std::move(*lora), bounds.text, where + ".lora");
    }
    if (sf.has("prefix")) st.prefix = detail::json_ids(s["prefix"], where + ".prefix", bounds.ids);
    if (auto sys = sf.string("system"))
      st.system = detail::bounded(std::move(*sys), bounds.text, where + ".system");
    if (sf.has("examples")) {
      const auto& ex = s["examples"];
      BATON_CHECK(ex.is_array(), config_error, where,
                  ".examples must be an array of [user, assistant]");
      detail::check_count(ex.size(), bounds.entries, where + ".examples", "examples");
      for (std::size_t k = 0; k < ex.size(); ++k) {
        const auto& e = ex[k];
        BATON_CHECK(e.is_array() && e.size() == 2 && e[0].is_string() && e[1].is_string(),
                    config_error, where, ".examples holds ", io::detail::show(e),
                    ", not [user, assistant]");
        const std::string ew = where + ".examples[" + std::to_string(k) + "]";
        st.examples.emplace_back(detail::bounded(e[0].get<std::string>(), bounds.text, ew + "[0]"),
                                 detail::bounded(e[1].get<std::string>(), bounds.text, ew + "[1]"));
      }
    }
    BATON_CHECK(st.prefix.empty() || (!st.system && st.examples.empty()), config_error, where,
                ": give the prefix as 'prefix' ids or as 'system'/'examples' text, not both");
    if (auto t = sf.string("template")) {
      BATON_CHECK(*t == "model" || *t == "chatml", config_error, where, ".template = \"",
                  detail::excerpt(*t),
                  "\": \"model\" (the model folder's chat template) or \"chatml\"");
      st.model_template = *t == "model";
      BATON_CHECK(!st.model_template || st.prefix.empty(), config_error, where,
                  ": \"template\": \"model\" renders 'system'/'examples' text; drop 'prefix'");
      BATON_CHECK(!st.model_template || !spec.shared, config_error, where,
                  ": \"template\": \"model\" is for stages with their own prefix, not in a relay "
                  "with 'shared'");
    }
    st.max_new = sf.required_int("max_new");
    BATON_CHECK(st.max_new >= 1, config_error, where, ".max_new must be >= 1");
    if (sf.has("stop")) st.stop = detail::json_ids(s["stop"], where + ".stop", bounds.entries);
    if (sf.has("stop_text")) {
      BATON_CHECK(s["stop_text"].is_array(), config_error, where,
                  ".stop_text must be an array of strings");
      detail::check_count(s["stop_text"].size() + st.stop.size(), bounds.entries,
                          where + ".stop and .stop_text", "stops");
      for (const auto& t : s["stop_text"]) {
        BATON_CHECK(t.is_string(), config_error, where, ".stop_text holds ", io::detail::show(t),
                    ", not a string");
        st.stop_text.push_back(
            detail::bounded(t.get<std::string>(), bounds.text,
                            where + ".stop_text[" + std::to_string(st.stop_text.size()) + "]"));
      }
    }
    // The stage's stream is its index unless its "sampling" names one.
    SamplingOptions by_index;
    by_index.stream = static_cast<std::uint64_t>(i);
    st.sampling =
        sf.has("sampling") ? read_sampling(s["sampling"], where + ".sampling", by_index) : by_index;
    st.exact = sf.bool_or("exact", false);
    BATON_CHECK(!st.exact || !st.sampling.alters_choice(), config_error, where,
                ": an exact stage (\"exact\": true) must choose by argmax: its \"sampling\" may "
                "ask for logprobs only (no temperature, logit_bias or penalties)");
    st.graph_captured = sf.bool_or("graph_captured", false);
    if (sf.has("interceptors")) {
      const auto& ics = s["interceptors"];
      BATON_CHECK(ics.is_array(), config_error, where,
                  ".interceptors must be an array of built-in interceptors");
      for (std::size_t k = 0; k < ics.size(); ++k) {
        st.interceptors.push_back(detail::parse_interceptor(
            ics[k], where + ".interceptors[" + std::to_string(k) + "]", bounds));
        for (std::size_t m = 0; m + 1 < st.interceptors.size(); ++m) {
          const auto a = st.interceptors[m].kind, b = st.interceptors.back().kind;
          const auto is_set = [](InterceptorSpec::Kind x) {
            return x == InterceptorSpec::Kind::allow_tokens ||
                   x == InterceptorSpec::Kind::deny_tokens;
          };
          BATON_CHECK(a != b && !(is_set(a) && is_set(b)), config_error,
                      st.interceptors.back().where, ": stage '", st.name, "' already has ",
                      interceptor_field(a), " at interceptors[", m,
                      "]; give each built-in once (all its stops or ids in one entry)");
        }
      }
    }
    if (sf.has("grammar"))
      st.grammar = detail::grammar_field(s["grammar"], where + ".grammar", bounds);
    if (spec.shared && !s.contains("input")) {
      // Reads the shared sequence: its own input is its invocation.
      st.reads_shared = true;
      if (s.contains("invocation")) {
        st.invocation = detail::json_ids_or_text(s["invocation"], where + ".invocation", bounds);
        BATON_CHECK(
            st.invocation->text ? !st.invocation->text->empty() : !st.invocation->ids.empty(),
            config_error, where,
            ".invocation is empty; omit it to take the adapter's alora_invocation_tokens");
      }
      BATON_CHECK(st.prefix.empty() && !st.system && st.examples.empty(), config_error, where,
                  " reads the shared sequence (no 'input'), so its prefix is the shared one: drop "
                  "'prefix', 'system' and 'examples'");
    } else {
      BATON_CHECK(!s.contains("invocation"), config_error, where,
                  ": 'invocation' belongs to a stage that reads the relay's shared sequence (a "
                  "relay with 'shared', a stage without 'input')");
      sf.require("input");
      st.input =
          detail::parse_segments(s["input"], where + ".input", names, static_cast<int>(i), bounds);
    }
    spec.stages.push_back(std::move(st));
  }
  spec.trusted_text = f.bool_or("trusted_text", false);
  spec.request_is_text = !spec.trusted_text;
  if (f.has("loop_from"))
    spec.loop_from = detail::stage_ref(j["loop_from"], names, src + ": loop_from");
  spec.output_stage = f.has("output") ? detail::stage_ref(j["output"], names, src + ": output")
                                      : static_cast<int>(names.size()) - 1;
  if (auto n = f.string("name")) {
    // A name travels in URLs, JSON and metrics labels: printable ASCII without quotes or
    // spaces keeps every one of them simple.
    const std::string name = detail::bounded(*n, bounds.name, src + ": field 'name'");
    const bool plain = !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
      return c > ' ' && c < 127 && c != '"' && c != '\\';
    });
    BATON_CHECK(plain, config_error, src, ": field 'name' = \"", detail::excerpt(name),
                "\" must be non-empty printable ASCII without spaces, quotes or backslashes");
    spec.name = name;
  }
  if (f.has("gate")) {
    const auto& g = j["gate"];
    const std::string gw = src + ": gate";
    BATON_CHECK(g.is_object(), config_error, gw, " must be an object");
    detail::known_keys_check(g, gw, {"stage", "starts_with", "contains"});
    if (g.contains("stage"))
      BATON_CHECK(
          detail::stage_ref(g["stage"], names, gw + ".stage") == static_cast<int>(names.size()) - 1,
          config_error, gw, ".stage: the last stage gates the relay");
    BATON_CHECK(g.contains("starts_with") != g.contains("contains"), config_error, gw,
                " needs exactly one of 'starts_with' and 'contains'");
    const bool sw = g.contains("starts_with");
    spec.gate.kind = sw ? GateSpec::Kind::starts_with : GateSpec::Kind::contains;
    const std::string nw = gw + (sw ? ".starts_with" : ".contains");
    spec.gate.needle = detail::json_ids_or_text(g[sw ? "starts_with" : "contains"], nw, bounds);
    // An empty needle is found in every output: the gate would pass every cycle, silently.
    BATON_CHECK(
        spec.gate.needle.text ? !spec.gate.needle.text->empty() : !spec.gate.needle.ids.empty(),
        config_error, nw,
        " is empty; an empty needle passes every output (omit "
        "'gate' to pass after one cycle)");
  }
  return spec;
}

/// The name a server gives `spec` (its "name", else the file's name without ".json").
inline std::string served_name(const RelaySpec& spec) {
  return spec.name.value_or(spec.source.stem().string());
}

/// config_error unless a tokenizer with `tokenizer_ids` ids (vocabulary and added tokens) fits
/// a model with `vocab_size` rows: an id past them encodes into a prompt but has no embedding
/// row, so it would fail, or read past the table, only when it is first met. A model with more
/// rows than the tokenizer has ids (Qwen pads its embedding) is fine. `tokenizer` and `model`
/// name the two in the message.
inline void check_tokenizer_fits(std::size_t tokenizer_ids, int vocab_size,
                                 std::string_view tokenizer, std::string_view model) {
  BATON_CHECK(tokenizer_ids <= static_cast<std::size_t>(std::max(vocab_size, 0)), config_error,
              "the tokenizer ", tokenizer, " has ", tokenizer_ids, " ids (0..", tokenizer_ids - 1,
              "), more than the model ", model, "'s vocab_size = ", vocab_size,
              ": they do not belong together");
}

/// Refuses to build `spec` on backend `name` when the file asks for another one ("backend");
/// the host grid (which runs the device path on the host, for tests) builds either.
inline void check_spec_backend(const RelaySpec& spec, std::string_view name) {
  if (!spec.backend || name == "host-grid") return;
  BATON_CHECK(*spec.backend == name, config_error, spec.source.string(), ": field 'backend' = \"",
              *spec.backend, "\", but this relay is being built on \"", name, "\"",
              *spec.backend == "cuda"
                  ? " (a program built with the CUDA backend builds it with build_relay_on<cuda>; "
                    "`baton relay` needs a build configured with -DBATON_ENABLE_CUDA=ON, or "
                    "--backend host to override the file)"
                  : " (`baton relay --backend` overrides the file)");
}

/// Reads and parses a relay JSON file (strict JSON: duplicate keys are errors).
inline RelaySpec load_relay_spec(const std::filesystem::path& file,
                                 const io::ReadLimits& limits = {}) {
  const std::string text = io::read_text_file(file, limits.config_bytes);
  RelaySpec spec =
      parse_relay_spec(io::parse_json_strict(text, file.string(), limits.json_depth), file, limits);
  // A schema's properties are emitted in the order written: read them again, in order.
  const auto ordered =
      io::parse_json_strict<nlohmann::ordered_json>(text, file.string(), limits.json_depth);
  for (std::size_t i = 0; i < spec.stages.size(); ++i) {
    const auto& st = ordered["stages"][i];
    if (spec.stages[i].grammar && st.contains("grammar") && st["grammar"].contains("json_schema"))
      spec.stages[i].grammar = grammar::GrammarSpec::json_schema(st["grammar"]["json_schema"]);
  }
  return spec;
}

}  // namespace baton
