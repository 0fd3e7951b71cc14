// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// The safetensors reader: the input is a whole file (length field, header, data). When it
// validates, every tensor's bytes are read as the model loader would.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "baton/io/safetensors.hpp"
#include "fuzz_common.hpp"

BATON_FUZZ_TARGET(safetensors) {
  const baton::fuzz::MemFile file(data, size);
  try {
    const auto f = baton::io::SafetensorsFile::open(file.path());
    for (const auto& t : f.tensors()) {
      if (!t.type || t.numel() > (1u << 20)) continue;
      std::vector<float> out(t.numel());
      baton::io::read_tensor<float>(f, t, t.shape, std::span<float>(out));
    }
  } catch (const baton::error&) {
  }
  return 0;
}
