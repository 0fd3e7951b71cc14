// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief PEFT adapter_config.json -> AdapterConfig: which projections of which layers a LoRA
/// adapter touches, with what rank and scale; and the PEFT tensor names.
///
/// Matching follows PEFT: a list of target names matches a module path
/// ("model.layers.3.self_attn.q_proj") when it equals it or ends with "." + name; a string
/// is a regex that must match the whole path; rank_pattern / alpha_pattern keys are regex
/// fragments tried in file order, a key matching when the path ends with it at a '.'
/// boundary (PEFT: re.match(rf"(.*\.)?({key})$", path)). Regexes run on grammar::PathRegex:
/// the Python `re` syntax PEFT users write (alternation, classes, groups including
/// (?P<name>...), repetition), matched by an automaton in linear time, so no pattern in a file
/// can hang the loader; look-around, back-references and inline flags are rejected by name.
/// `\d \w \s` are ASCII classes (module paths are ASCII).
///
/// `alora_invocation_tokens` (activated LoRA, lora/activation.hpp) is read: a non-empty list of
/// token ids; null or absent is a plain LoRA.
///
/// Options that change what the adapter computes and that baton does not implement (DoRA,
/// modules_to_save, fan_in_fan_out, biases, layer replication, ...) are rejected by name.
#pragma once

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "baton/core/error.hpp"
#include "baton/grammar/path_regex.hpp"
#include "baton/io/json_util.hpp"
#include "baton/io/lora_target.hpp"

namespace baton::io {

namespace detail {
/// Compiled forms of an AdapterConfig's regexes (shared, immutable once built).
struct AdapterMatchers {
  grammar::PathRegex target;                    ///< target_modules (regex kind only)
  std::vector<grammar::PathRegex> rank, alpha;  ///< parallel to rank/alpha_pattern_order
};
}  // namespace detail

/// A LoRA adapter's configuration, as far as inference needs it.
struct AdapterConfig {
  std::string source;  ///< path, for messages
  int r = 0;
  double lora_alpha = 0;
  bool use_rslora = false;
  std::map<std::string, int> rank_pattern;
  std::map<std::string, double> alpha_pattern;

  /// How target_modules was written: a list of names, a regex string, or "all-linear"
  /// (every one of the seven projections; PEFT never adapts lm_head with it).
  enum class TargetKind { list, regex, all_linear } target_kind = TargetKind::list;
  std::vector<std::string> target_modules;  ///< list entries as written (list kind)
  std::string target_regex;                 ///< the regex (regex kind)
  std::vector<int> layers_to_transform;     ///< empty: every layer (list kind only, as in PEFT)
  std::string base_model_name_or_path;      ///< as written ("" if absent)
  /// Activated LoRA (aLoRA): the invocation sequence from whose last occurrence on the adapter
  /// applies (lora/activation.hpp); empty: a plain LoRA, applied to every token. The ids are
  /// checked against the model's vocabulary when a slice is loaded.
  std::vector<std::int32_t> alora_invocation_tokens;
  /// The order pattern keys are tried in: file order (load_adapter_config, or parsing an
  /// ordered_json), else the keys' sorted order. The first matching key wins, as in PEFT.
  std::vector<std::string> rank_pattern_order, alpha_pattern_order;
  /// Compiled regexes; filled by parse_adapter_config / compile(). Queries on a config
  /// built by hand without compile() compile on each call (correct, only slower).
  std::shared_ptr<const detail::AdapterMatchers> matchers;

  /// "model.layers.{layer}.{self_attn|mlp}.{q_proj..down_proj}": the path PEFT matches.
  static std::string module_path(int layer, LoraTarget t) {
    BATON_CHECK(layer >= 0, usage_error, "layer index ", layer, " is negative");
    std::string p = "model.layers.";
    p += std::to_string(layer);
    p += '.';
    p += lora_target_parent(t);
    p += '.';
    p += lora_target_name(t);
    return p;
  }

  /// Whether the adapter has A/B matrices for projection `t` of `layer`.
  bool targets(int layer, LoraTarget t) const {
    const std::string path = module_path(layer, t);
    switch (target_kind) {
      case TargetKind::all_linear:
        return true;
      case TargetKind::regex:
        return get()->target.full_match(path);
      case TargetKind::list:
        break;
    }
    const bool named = std::any_of(target_modules.begin(), target_modules.end(),
                                   [&](const std::string& e) { return path_ends_with(path, e); });
    if (!named || layers_to_transform.empty()) return named;
    return std::find(layers_to_transform.begin(), layers_to_transform.end(), layer) !=
           layers_to_transform.end();
  }

  /// The rank of `t` in `layer`: the first matching rank_pattern key's value, else r.
  int rank_for(int layer, LoraTarget t) const {
    const std::string path = module_path(layer, t);
    const auto m = get();
    for (std::size_t i = 0; i < rank_pattern_order.size(); ++i) {
      if (m->rank[i].full_match(path)) return rank_pattern.at(rank_pattern_order[i]);
    }
    return r;
  }

  /// The alpha of `t` in `layer`: the first matching alpha_pattern key's value, else lora_alpha.
  double alpha_for(int layer, LoraTarget t) const {
    const std::string path = module_path(layer, t);
    const auto m = get();
    for (std::size_t i = 0; i < alpha_pattern_order.size(); ++i) {
      if (m->alpha[i].full_match(path)) return alpha_pattern.at(alpha_pattern_order[i]);
    }
    return lora_alpha;
  }

  /// The LoRA scale s in W x + s B(A x): alpha / r, or alpha / sqrt(r) with use_rslora,
  /// using the module's own rank and alpha.
  double scale_for(int layer, LoraTarget t) const {
    const double rank = rank_for(layer, t);
    const double alpha = alpha_for(layer, t);
    return use_rslora ? alpha / std::sqrt(rank) : alpha / rank;
  }

  /// The largest rank among the targeted modules of a `num_layers`-layer model (0 if none):
  /// what a slice's compile-time rank bound must hold.
  int max_rank(int num_layers) const {
    int best = 0;
    for (int layer = 0; layer < num_layers; ++layer) {
      for (const LoraTarget t : kLoraTargets) {
        if (targets(layer, t)) best = std::max(best, rank_for(layer, t));
      }
    }
    return best;
  }

  /// (Re)builds `matchers` from the textual fields; config_error naming the bad pattern.
  void compile() { matchers = build_matchers(); }

 private:
  /// PEFT list matching: equal to the path, or a suffix of it starting after a '.'.
  static bool path_ends_with(std::string_view path, std::string_view entry) {
    if (path == entry) return true;
    return path.size() > entry.size() && path.ends_with(entry) &&
           path[path.size() - entry.size() - 1] == '.';
  }

  grammar::PathRegex compile_one(const std::string& pattern, const char* field) const {
    try {
      return grammar::PathRegex(pattern);
    } catch (const grammar_error& e) {
      BATON_FAIL(config_error, source, ": field '", field, "' holds \"", detail::excerpt(pattern),
                 "\", which is not a regex baton supports: ", e.what());
    }
  }

  std::shared_ptr<const detail::AdapterMatchers> build_matchers() const {
    auto m = std::make_shared<detail::AdapterMatchers>();
    if (target_kind == TargetKind::regex) m->target = compile_one(target_regex, "target_modules");
    for (const auto& key : rank_pattern_order) {
      m->rank.push_back(compile_one("(.*\\.)?(" + key + ")", "rank_pattern"));
    }
    for (const auto& key : alpha_pattern_order) {
      m->alpha.push_back(compile_one("(.*\\.)?(" + key + ")", "alpha_pattern"));
    }
    return m;
  }

  /// The compiled regexes; a hand-built config without compile() gets a fresh set per call.
  std::shared_ptr<const detail::AdapterMatchers> get() const {
    return matchers ? matchers : build_matchers();
  }
};

namespace detail {

/// Reasons shown when an option baton does not implement is set.
struct UnsupportedOption {
  const char* key;
  const char* why;
};
inline constexpr UnsupportedOption kUnsupportedAdapterOptions[] = {
    {"use_dora", "DoRA rescales the adapted weight by a learned magnitude"},
    {"modules_to_save", "it replaces whole modules (e.g. a head) with trained copies"},
    {"fan_in_fan_out", "it stores weights transposed (GPT-2 Conv1D style)"},
    {"layer_replication", "it duplicates layers of the base model"},
    {"use_qalora", "QA-LoRA pools the input before lora_A"},
    {"lora_bias", "it adds a bias to lora_B"},
    {"trainable_token_indices", "it trains embedding rows"},
    {"exclude_modules", "baton does not implement module exclusion"},
    {"target_parameters", "it adapts raw parameters rather than projections"},
    {"arrow_config", "Arrow routes between several LoRA experts"},
};

/// Whether a JSON value is an option's "off" value: absent/null, false, or empty.
template <class Json>
bool is_default_off(const Json& v) {
  return v.is_null() || (v.is_boolean() && !v.template get<bool>()) ||
         ((v.is_array() || v.is_object() || v.is_string()) && v.empty());
}

/// Checks a target_modules list entry: a '.'-boundary suffix of
/// "model.layers.<N>.<parent>.<name>" whose last component is one of the seven projections.
inline bool valid_target_entry(std::string_view e) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = e.find('.', start);
    parts.push_back(
        e.substr(start, dot == std::string_view::npos ? e.size() - start : dot - start));
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  const auto t = lora_target_from_name(parts.back());
  if (!t || parts.size() > 5) return false;
  const std::size_t n = parts.size();
  if (n >= 2 && parts[n - 2] != lora_target_parent(*t)) return false;
  if (n >= 3) {
    const std::string_view idx = parts[n - 3];
    if (idx.empty() || !std::all_of(idx.begin(), idx.end(), [](char c) {
          return std::isdigit(static_cast<unsigned char>(c)) != 0;
        })) {
      return false;
    }
  }
  if (n >= 4 && parts[n - 4] != "layers") return false;
  if (n >= 5 && parts[n - 5] != "model") return false;
  return true;
}

template <class Json>
AdapterConfig parse_adapter_config_impl(const Json& j, std::string_view source) {
  BATON_CHECK(j.is_object(), config_error, source, ": adapter config is not a JSON object");
  const FieldReader<Json> f(j, source);
  AdapterConfig c;
  c.source = std::string(source);

  f.require("peft_type");
  const std::string peft_type = f.string("peft_type").value_or("");
  if (peft_type != "LORA") {
    f.fail("peft_type", *f.get("peft_type"), "is not supported (baton loads LORA adapters only)");
  }
  c.r = f.required_int("r");
  if (c.r < 1) f.fail("r", *f.get("r"), "must be at least 1");
  c.lora_alpha = f.number_or("lora_alpha", 0, /*required=*/true);
  c.use_rslora = f.bool_or("use_rslora", false);
  c.base_model_name_or_path = f.string("base_model_name_or_path").value_or("");

  for (const auto& opt : kUnsupportedAdapterOptions) {
    const auto it = j.find(opt.key);
    if (it != j.end() && !is_default_off(*it)) {
      BATON_FAIL(config_error, source, ": option '", opt.key, "' = ", show(*it),
                 " is not supported by baton (", opt.why, ")");
    }
  }
  const std::string bias = f.string("bias").value_or("none");
  if (bias != "none") {
    f.fail("bias", *f.get("bias"),
           "is not supported (baton adapters carry no bias; need \"none\")");
  }
  // These initialisations rewrite the base weights; an adapter saved without converting
  // them back only works on that modified base, so running it on the original is wrong.
  if (const auto init = j.find("init_lora_weights"); init != j.end() && init->is_string()) {
    const std::string v = init->template get<std::string>();
    for (const char* prefix : {"pissa", "olora", "loftq", "corda"}) {
      if (v.starts_with(prefix)) {
        f.fail("init_lora_weights", *init,
               "means the base weights were modified for this adapter; convert it to a plain "
               "LoRA first");
      }
    }
  }

  f.require("target_modules");
  const Json& tm = *f.get("target_modules");
  if (tm.is_string()) {
    std::string s = tm.template get<std::string>();
    std::string lower = s;
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
    if (lower == "all-linear") {
      c.target_kind = AdapterConfig::TargetKind::all_linear;
    } else {
      c.target_kind = AdapterConfig::TargetKind::regex;
      c.target_regex = std::move(s);
    }
  } else if (tm.is_array()) {
    if (tm.empty()) f.fail("target_modules", tm, "is empty: the adapter targets nothing");
    for (const auto& e : tm) {
      if (!e.is_string()) f.fail("target_modules", tm, "must hold module names (strings)");
      const std::string name = e.template get<std::string>();
      BATON_CHECK(valid_target_entry(name), config_error, source, ": target module '",
                  detail::excerpt(name),
                  "' is not supported (baton adapts only q_proj, k_proj, v_proj, o_proj, "
                  "gate_proj, up_proj, down_proj)");
      c.target_modules.push_back(name);
    }
  } else {
    f.fail("target_modules", tm, "is neither a list of module names nor a regex string");
  }

  if (const Json* inv = f.get("alora_invocation_tokens")) {
    if (!inv->is_array()) f.fail("alora_invocation_tokens", *inv, "is not a list of token ids");
    // PEFT treats an empty list as "never activated"; that adapter would do nothing at all,
    // so an empty list is a mistake worth naming.
    if (inv->empty())
      f.fail("alora_invocation_tokens", *inv, "is empty: an activated LoRA needs its invocation");
    for (const auto& x : *inv) {
      const auto id = non_negative_integer(x);
      if (!id || *id > static_cast<std::uint64_t>(std::numeric_limits<std::int32_t>::max())) {
        f.fail("alora_invocation_tokens", *inv, "must hold non-negative token ids");
      }
      c.alora_invocation_tokens.push_back(static_cast<std::int32_t>(*id));
    }
  }

  if (const Json* lt = f.get("layers_to_transform")) {
    // PEFT refuses layers_to_transform with a string target_modules; so does baton.
    if (c.target_kind != AdapterConfig::TargetKind::list) {
      f.fail("layers_to_transform", *lt, "cannot be combined with a string target_modules");
    }
    const auto add = [&](const Json& x) {
      const auto layer = non_negative_integer(x);
      if (!layer || *layer > 1'000'000) {
        f.fail("layers_to_transform", *lt, "must hold non-negative layer indices");
      }
      c.layers_to_transform.push_back(static_cast<int>(*layer));
    };
    if (lt->is_array()) {
      for (const auto& x : *lt) add(x);
    } else {
      add(*lt);
    }
  }
  if (const Json* lp = f.get("layers_pattern")) {
    // Only the Hugging Face "layers" container exists in Qwen2/Llama.
    const bool ok = (lp->is_string() && lp->template get<std::string>() == "layers") ||
                    (lp->is_array() && lp->size() == 1 && (*lp)[0].is_string() &&
                     (*lp)[0].template get<std::string>() == "layers") ||
                    (lp->is_array() && lp->empty());
    if (!ok) f.fail("layers_pattern", *lp, "is not supported (Qwen2/Llama layers are 'layers')");
  }

  if (const Json* rp = f.get("rank_pattern")) {
    if (!rp->is_object()) f.fail("rank_pattern", *rp, "is not an object");
    for (const auto& [key, v] : rp->items()) {
      const auto rank = non_negative_integer(v);
      if (!rank || *rank < 1 || *rank > 1'000'000) {
        BATON_FAIL(config_error, source, ": field 'rank_pattern' entry '", key, "' = ", show(v),
                   " is not a rank >= 1");
      }
      c.rank_pattern.emplace(key, static_cast<int>(*rank));
      c.rank_pattern_order.push_back(key);
    }
  }
  if (const Json* ap = f.get("alpha_pattern")) {
    if (!ap->is_object()) f.fail("alpha_pattern", *ap, "is not an object");
    for (const auto& [key, v] : ap->items()) {
      if (!v.is_number() || !std::isfinite(v.template get<double>())) {
        BATON_FAIL(config_error, source, ": field 'alpha_pattern' entry '", key, "' = ", show(v),
                   " is not a finite number");
      }
      c.alpha_pattern.emplace(key, v.template get<double>());
      c.alpha_pattern_order.push_back(key);
    }
  }

  c.compile();
  if (c.target_kind == AdapterConfig::TargetKind::regex) {
    // A regex may reach modules outside the decoder layers; PEFT would adapt them.
    for (const char* outside : {"lm_head", "model.embed_tokens", "model.norm"}) {
      BATON_CHECK(!c.matchers->target.full_match(outside), config_error, source,
                  ": target_modules regex \"", c.target_regex, "\" matches module '", outside,
                  "', which baton does not adapt");
    }
  }
  return c;
}

}  // namespace detail

/// Builds an AdapterConfig from parsed adapter_config.json (pattern keys tried in sorted
/// order, since nlohmann::json sorts keys); config_error naming `source`, field and value.
inline AdapterConfig parse_adapter_config(const nlohmann::json& j, std::string_view source) {
  return detail::parse_adapter_config_impl(j, source);
}
/// As above, keeping the file's key order for rank_pattern / alpha_pattern (PEFT's order).
inline AdapterConfig parse_adapter_config(const nlohmann::ordered_json& j,
                                          std::string_view source) {
  return detail::parse_adapter_config_impl(j, source);
}

/// Reads `adapter_dir`/adapter_config.json (key order kept; format_error on malformed JSON
/// or duplicate keys; io_error if unreadable).
inline AdapterConfig load_adapter_config(const std::filesystem::path& adapter_dir,
                                         const ReadLimits& limits = {}) {
  const std::filesystem::path file = adapter_dir / "adapter_config.json";
  return parse_adapter_config(
      read_json_file<nlohmann::ordered_json>(file, limits.config_bytes, limits.json_depth),
      file.string());
}

/// PEFT tensor names: "base_model.model.model.layers.{i}.{self_attn|mlp}.{q_proj..}.lora_A.weight"
/// / "lora_B.weight". `which` is 'A' or 'B' (usage_error otherwise).
inline std::string lora_tensor_name(int layer, LoraTarget t, char which) {
  BATON_CHECK(which == 'A' || which == 'B', usage_error, "lora_tensor_name: which = '", which,
              "' must be 'A' or 'B'");
  return "base_model.model." + AdapterConfig::module_path(layer, t) + ".lora_" + which + ".weight";
}

}  // namespace baton::io
