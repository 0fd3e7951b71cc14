// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
#include "adapter_api.hpp"

#include <initializer_list>

#include "baton/core/error.hpp"
#include "openai_api.hpp"

namespace baton::serve {

namespace {

constexpr std::size_t kMaxNameBytes = 128;

ApiError bad_field(std::string param, std::string message) {
  ApiError e;
  e.param = std::move(param);
  e.message = std::move(message);
  return e;
}

/// The object's fields must be `known`, and each of them a non-empty string.
nlohmann::json fields(std::string_view body, std::initializer_list<const char*> known) {
  const nlohmann::json j = parse_body(body);
  for (const auto& [key, value] : j.items()) {
    bool ok = false;
    for (const char* k : known) ok = ok || key == k;
    if (!ok) {
      ApiError e = bad_field(key, "unknown field '" + detail::excerpt(key) + "'");
      e.code = "unknown_parameter";
      throw e;
    }
  }
  for (const char* k : known) {
    if (!j.contains(k)) throw bad_field(k, std::string("'") + k + "' is required");
    if (!j[k].is_string() || j[k].get_ref<const std::string&>().empty())
      throw bad_field(k, std::string("'") + k + "' must be a non-empty string");
  }
  return j;
}

std::string checked_name(const std::string& name) {
  if (auto why = adapter_name_problem(name)) throw bad_field("lora_name", "'lora_name' " + *why);
  return name;
}

}  // namespace

std::optional<std::string> adapter_name_problem(const std::string& name) {
  if (name.empty()) return "is empty";
  if (name.size() > kMaxNameBytes)
    return "is " + std::to_string(name.size()) + " bytes; at most " + std::to_string(kMaxNameBytes);
  for (const char c : name)
    if (c <= ' ' || c > '~' || c == ',' || c == '"' || c == '\\') {
      // Appended in steps: g++ 12 warns (-Wrestrict, falsely) on "'" + std::string&&.
      std::string why = "'";
      why += detail::excerpt(name);
      why +=
          "' holds a space, a comma, a quote, a backslash or a character outside printable "
          "ASCII (the gateway's metric lists names comma-separated in a label)";
      return why;
    }
  return std::nullopt;
}

LoadAdapterRequest parse_load_adapter(std::string_view body) {
  const nlohmann::json j = fields(body, {"lora_name", "lora_path"});
  return {checked_name(j["lora_name"].get<std::string>()), j["lora_path"].get<std::string>()};
}

std::string parse_unload_adapter(std::string_view body) {
  return checked_name(fields(body, {"lora_name"})["lora_name"].get<std::string>());
}

nlohmann::json adapter_model_entry(const AdapterSnapshot::Entry& a, const std::string& parent,
                                   long long created) {
  return {{"id", a.name},
          {"object", "model"},
          {"created", created},
          {"owned_by", "baton"},
          {"root", a.path},
          {"parent", parent},
          {"baton",
           {{"adapter", a.path},
            {"sha256", a.sha256},
            {"slot", a.slot >= 0 ? nlohmann::json(a.slot) : nlohmann::json()},
            {"in_memory", a.in_memory},
            {"in_flight", a.in_flight}}}};
}

}  // namespace baton::serve
