// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief The adapter endpoints' wire format, vLLM's: POST /v1/load_lora_adapter
///        {"lora_name", "lora_path"} and POST /v1/unload_lora_adapter {"lora_name"}, and how
///        /v1/models lists a served adapter. The server (server.cpp) does what they ask.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "adapter_table.hpp"

namespace baton::serve {

struct LoadAdapterRequest {
  std::string name;
  std::string path;
};

/// Why `name` cannot name an adapter, or nothing: a name is 1..128 printable ASCII characters
/// without spaces, commas, quotes or backslashes, because the gateway's metric lists adapters
/// comma-separated in a label (gateway_metrics.hpp).
std::optional<std::string> adapter_name_problem(const std::string& name);
/// The body of POST /v1/load_lora_adapter; ApiError (400) naming the field at fault.
LoadAdapterRequest parse_load_adapter(std::string_view body);
/// The adapter name in the body of POST /v1/unload_lora_adapter; ApiError (400) as above.
std::string parse_unload_adapter(std::string_view body);

/// /v1/models' entry for the adapter `a`, served on the model `parent`: vLLM's shape ("root"
/// its folder, "parent" the base model's id) and baton's own facts.
nlohmann::json adapter_model_entry(const AdapterSnapshot::Entry& a, const std::string& parent,
                                   long long created);

}  // namespace baton::serve
