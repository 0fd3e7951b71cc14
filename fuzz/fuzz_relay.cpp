// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// Relay JSON files: load_relay_spec (strict JSON, fields, wiring).
#include <cstddef>
#include <cstdint>

#include "baton/relay/config.hpp"
#include "fuzz_common.hpp"

BATON_FUZZ_TARGET(relay) {
  const baton::fuzz::MemFile file(data, size);
  try {
    (void)baton::load_relay_spec(file.path());
  } catch (const baton::error&) {
  }
  return 0;
}
