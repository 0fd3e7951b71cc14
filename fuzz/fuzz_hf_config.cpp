// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// config.json: strict JSON parsing, then the Hugging Face config reader and its invariants.
#include <cstddef>
#include <cstdint>

#include "baton/io/hf_config.hpp"
#include "fuzz_common.hpp"

BATON_FUZZ_TARGET(hf_config) {
  try {
    const auto j = baton::io::parse_json_strict(baton::fuzz::as_text(data, size), "config.json");
    (void)baton::io::parse_model_config(j, "config.json");
  } catch (const baton::error&) {
  }
  return 0;
}
