// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief The loading options a Model and a Relay share (`baton`'s --backend, --storage,
///        --threads, --bf16-products, --isa), read from Python keywords and checked with
///        messages that name the keyword.
#pragma once

#include <optional>
#include <string>

#include "baton/backend/host_simd.hpp"
#include "baton/core/error.hpp"
#include "baton/core/storage.hpp"

namespace baton::python {

/// What the keywords backend=, storage=, threads=, bf16_products=, isa= asked for.
struct LoadOptions {
  std::optional<std::string> backend;  ///< "host" (or None); this module has no other
  std::optional<std::string> storage;  ///< f32, bf16, f16, q8_0, q4_0; None: the file's
  std::optional<int> threads;          ///< the host thread pool's size; None/0: every core
  std::optional<bool> bf16_products;   ///< None: where the CPU has AVX512-BF16
  std::optional<std::string> isa;      ///< avx512, avx2, portable; None: the best the CPU runs

  /// The kernel family asked for, or usage_error naming the value (unknown, or one this CPU
  /// does not run).
  std::optional<host_simd::Isa> isa_family() const {
    if (!isa) return std::nullopt;
    const auto f = host_simd::parse_isa(*isa);
    BATON_CHECK(f.has_value(), usage_error, "isa='", detail::excerpt(*isa),
                "': use 'avx512', 'avx2' or 'portable'");
    BATON_CHECK(host_simd::cpu_supports(*f), usage_error, "isa='", *isa,
                "': this CPU does not run that kernel family");
    return f;
  }

  /// The storage asked for, or usage_error naming the value.
  std::optional<Storage> storage_type() const {
    if (!storage) return std::nullopt;
    const auto s = parse_storage(*storage);
    BATON_CHECK(s.has_value(), usage_error, "storage='", detail::excerpt(*storage),
                "': use 'f32', 'bf16', 'f16', 'q8_0' or 'q4_0'");
    return s;
  }

  /// usage_error unless the backend is the host (the one this module is built with) and the
  /// thread count is in range.
  void check() const {
    BATON_CHECK(!backend || *backend == "host", usage_error, "backend='", detail::excerpt(*backend),
                "': this Python module runs the host backend only ('host'); `baton relay "
                "--backend cuda` runs CUDA");
    BATON_CHECK(!threads || *threads >= 0, usage_error, "threads=", threads.value_or(0),
                " must be >= 0 (0: every core)");
  }
};

}  // namespace baton::python
