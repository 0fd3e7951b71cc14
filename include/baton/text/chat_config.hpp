// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief A checkpoint folder's chat conventions, read as transformers reads them: the chat
/// template (chat_template.jinja, else tokenizer_config.json's `chat_template`, a string or a
/// list of named templates), the special tokens a template is given (`bos_token`,
/// `eos_token`, ...), `add_bos_token`, and generation_config.json's `eos_token_id` (one id or,
/// on Llama 3.x, a list: every one ends generation).
#pragma once

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "baton/core/error.hpp"
#include "baton/io/json_util.hpp"
#include "baton/text/chat_template.hpp"

namespace baton {

/// What a model folder says about chat.
struct ChatConfig {
  std::optional<ChatTemplate> chat_template;  ///< absent: the folder has none
  /// The variables transformers gives every template from the tokenizer's special tokens map
  /// (bos_token, eos_token, unk_token, pad_token, additional_special_tokens); a token the
  /// config sets to null is left out, so `bos_token is defined` is false, as in Python.
  nlohmann::ordered_json special_tokens = nlohmann::ordered_json::object();
  bool add_bos_token = false;  ///< tokenizer_config.json's add_bos_token (default false)
  /// generation_config.json's eos_token_id, as a list (empty when the file or field is absent).
  std::vector<std::int32_t> eos_token_ids;

  /// Options for ChatTemplate::render with the folder's special tokens.
  ChatRenderOptions render_options(bool add_generation_prompt) const {
    ChatRenderOptions o;
    o.add_generation_prompt = add_generation_prompt;
    o.extra = special_tokens;
    return o;
  }
  /// The template, or config_error naming `folder` when there is none.
  const ChatTemplate& require_template(const std::string& folder) const {
    BATON_CHECK(chat_template.has_value(), config_error, folder,
                ": no chat template (neither chat_template.jinja nor a \"chat_template\" in "
                "tokenizer_config.json)");
    return *chat_template;
  }
};

namespace detail {

/// A special token in tokenizer_config.json: a string, or an AddedToken object {"content": ...}.
inline std::optional<std::string> token_text(const nlohmann::json& v, const std::string& where) {
  if (v.is_null()) return std::nullopt;
  if (v.is_string()) return v.get<std::string>();
  if (v.is_object() && v.contains("content") && v["content"].is_string())
    return v["content"].get<std::string>();
  BATON_FAIL(format_error, where, ": not a token (a string or {\"content\": ...})");
}

}  // namespace detail

/// generation_config.json's eos_token_id as a list (one id, or several on Llama 3.x); empty
/// when the file or the field is absent. These end generation by default.
inline std::vector<std::int32_t> generation_eos_ids(const std::filesystem::path& dir,
                                                    const io::ReadLimits& read = {}) {
  std::vector<std::int32_t> ids;
  const auto gc_path = dir / "generation_config.json";
  if (!std::filesystem::exists(gc_path)) return ids;
  const auto gc = io::read_json_file(gc_path, read.config_bytes, read.json_depth);
  if (!gc.is_object() || !gc.contains("eos_token_id") || gc["eos_token_id"].is_null()) return ids;
  const auto& e = gc["eos_token_id"];
  const auto add = [&](const nlohmann::json& v) {
    const auto id = io::non_negative_integer(v);
    BATON_CHECK(id && *id <= INT32_MAX, format_error, gc_path.string(), ": \"eos_token_id\" holds ",
                io::detail::show(v), ", not a token id");
    ids.push_back(static_cast<std::int32_t>(*id));
  };
  if (e.is_array())
    for (const auto& v : e) add(v);
  else
    add(e);
  return ids;
}

/// The ids that end generation by default in the model folder `dir`: `config_eos` (config.json's
/// eos_token_id), then generation_config.json's that are new and below `vocab_size`.
inline std::vector<std::int32_t> default_stop_ids(std::vector<std::int32_t> config_eos,
                                                  const std::filesystem::path& dir,
                                                  int vocab_size) {
  for (const std::int32_t id : generation_eos_ids(dir))
    if (id < vocab_size && std::find(config_eos.begin(), config_eos.end(), id) == config_eos.end())
      config_eos.push_back(id);
  return config_eos;
}

/// Reads the chat conventions of the model folder `dir`. Files that are absent leave their part
/// empty; files that are present and malformed throw (format_error, template_error).
/// `template_name` picks one of several named templates ("default" unless given).
inline ChatConfig load_chat_config(const std::filesystem::path& dir,
                                   const std::string& template_name = "default",
                                   const TemplateLimits& limits = {},
                                   const io::ReadLimits& read = {}) {
  ChatConfig cfg;
  const auto tc_path = dir / "tokenizer_config.json";
  nlohmann::json tc = nlohmann::json::object();
  if (std::filesystem::exists(tc_path))
    tc = io::read_json_file(tc_path, read.config_bytes, read.json_depth);
  const std::string src = tc_path.string();
  BATON_CHECK(tc.is_object(), format_error, src, ": not a JSON object");
  for (const char* key : {"bos_token", "eos_token", "unk_token", "pad_token"}) {
    if (!tc.contains(key)) continue;
    if (auto t = detail::token_text(tc[key], src + ": \"" + key + "\""))
      cfg.special_tokens[key] = *t;
  }
  if (tc.contains("additional_special_tokens") && tc["additional_special_tokens"].is_array()) {
    auto list = nlohmann::ordered_json::array();
    for (const auto& t : tc["additional_special_tokens"])
      if (auto s = detail::token_text(t, src + ": \"additional_special_tokens\""))
        list.push_back(*s);
    cfg.special_tokens["additional_special_tokens"] = list;
  }
  if (tc.contains("add_bos_token")) {
    BATON_CHECK(tc["add_bos_token"].is_boolean(), format_error, src,
                ": \"add_bos_token\" is not true or false");
    cfg.add_bos_token = tc["add_bos_token"].get<bool>();
  }
  // transformers reads chat_template.jinja first: a folder saved by a recent version keeps
  // the template there and not in tokenizer_config.json.
  const auto jinja_path = dir / "chat_template.jinja";
  if (std::filesystem::exists(jinja_path)) {
    cfg.chat_template.emplace(io::read_text_file(jinja_path, read.config_bytes),
                              jinja_path.string(), limits);
  } else if (tc.contains("chat_template") && !tc["chat_template"].is_null()) {
    const auto& t = tc["chat_template"];
    if (t.is_string()) {
      cfg.chat_template.emplace(t.get<std::string>(), src + ": chat_template", limits);
    } else {
      BATON_CHECK(t.is_array(), format_error, src,
                  ": \"chat_template\" is neither a string nor a list of named templates");
      std::vector<std::string> names;
      for (const auto& e : t) {
        BATON_CHECK(e.is_object() && e.contains("name") && e["name"].is_string() &&
                        e.contains("template") && e["template"].is_string(),
                    format_error, src,
                    ": each \"chat_template\" entry needs a \"name\" and a \"template\" string");
        names.push_back(e["name"].get<std::string>());
        if (names.back() == template_name)
          cfg.chat_template.emplace(e["template"].get<std::string>(),
                                    src + ": chat_template '" + template_name + "'", limits);
      }
      if (!cfg.chat_template) {
        std::string all;
        for (const auto& n : names) all += (all.empty() ? "" : ", ") + n;
        BATON_FAIL(config_error, src, ": no chat template named '", detail::excerpt(template_name),
                   "' (it has: ", all, ")");
      }
    }
  }
  cfg.eos_token_ids = generation_eos_ids(dir, read);
  return cfg;
}

}  // namespace baton
