// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// adapter_config.json, through the same path as load_adapter_config (file order kept).
#include <cstddef>
#include <cstdint>

#include "baton/io/peft_config.hpp"
#include "fuzz_common.hpp"

BATON_FUZZ_TARGET(peft_config) {
  const baton::fuzz::MemFile file(data, size);
  try {
    // load_adapter_config takes a folder; read the file the way it does.
    const auto j = baton::io::parse_json_strict<nlohmann::ordered_json>(
        baton::io::read_text_file(file.path()), "adapter_config.json");
    (void)baton::io::detail::parse_adapter_config_impl(j, "adapter_config.json");
  } catch (const baton::error&) {
  }
  return 0;
}
