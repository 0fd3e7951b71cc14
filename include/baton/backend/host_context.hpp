// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief HostContext: what the host backend runs on, created and owned by the caller — a
///        persistent thread pool (spin-then-sleep, see thread_pool.hpp) and the instruction
///        set of decode's kernels (chosen at run time, see host_simd.hpp).
///
/// A Workspace<host> bound to a context runs its forward passes' loops on the context's pool;
/// an unbound one uses OpenMP as before. One context can serve many workspaces that are used
/// one after another from one thread (a relay's stages); workspaces used concurrently need a
/// context each.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <thread>
#include <vector>

#include "baton/backend/host_simd.hpp"
#include "baton/backend/thread_pool.hpp"
#include "baton/core/dtype.hpp"
#include "baton/core/error.hpp"

namespace baton {

struct HostContextOptions {
  int threads = 0;                     ///< 0: std::thread::hardware_concurrency()
  std::optional<host_simd::Isa> isa;   ///< unset: the best the CPU runs; set: forced
  std::chrono::microseconds spin{50};  ///< how long idle threads spin before sleeping
  /// Products with bf16 weights split each activation into two bf16 terms (x ~ hi + lo, a
  /// relative error up to 2^-17) and multiply in pairs (AVX512-BF16's vdpbf16ps, or AMX-BF16's
  /// tiles), every row count alike, so a row's result never depends on the batch (host_dot.hpp,
  /// docs/batching.md). Unset: on wherever the context's isa is avx512 and the
  /// CPU has AVX512-BF16; true: required (an error without them); false: f32 products (the
  /// widened weights times the f32 activations).
  std::optional<bool> bf16_products;
  /// With bf16 products: multiply on the AMX tile unit where the CPU has AMX-BF16 (the same
  /// split of the activations; the output rows past the last whole 32 on vdpbf16ps);
  /// false: always vdpbf16ps.
  bool amx = true;
};

class HostContext {
 public:
  explicit HostContext(HostContextOptions o = {})
      : isa_(o.isa.value_or(host_simd::best_isa())),
        bf16_products_(o.bf16_products.value_or(isa_ == host_simd::Isa::avx512 &&
                                                host_simd::cpu_supports_bf16_products())),
        amx_(bf16_products_ && o.amx && host_simd::cpu_supports_amx_bf16()),
        pool_(threads_of(o), o.spin) {
    BATON_CHECK(host_simd::cpu_supports(isa_), usage_error, "HostContext: isa ",
                host_simd::isa_name(isa_), " requested, but this CPU does not run it");
    BATON_CHECK(!bf16_products_ ||
                    (isa_ == host_simd::Isa::avx512 && host_simd::cpu_supports_bf16_products()),
                usage_error, "HostContext: bf16_products requested with isa ",
                host_simd::isa_name(isa_),
                ", but it needs isa avx512 on a CPU with AVX512-BF16 (vdpbf16ps)");
  }

  ThreadPool& pool() noexcept { return pool_; }
  host_simd::Isa isa() const noexcept { return isa_; }
  int threads() const noexcept { return pool_.size(); }
  /// Whether products with bf16 weights multiply bf16 terms of the activations
  /// (HostContextOptions::bf16_products).
  bool bf16_products() const noexcept { return bf16_products_; }
  /// Whether those products run on the AMX tiles (HostContextOptions::amx and the CPU).
  bool amx() const noexcept { return amx_; }
  /// Scratch of `words` 32-bit words for one product's split activations (the AMX products):
  /// grown, never shrunk, so a step allocates nothing once its largest product has run. One
  /// product at a time, as the pool runs one loop at a time.
  std::uint32_t* product_scratch(std::size_t words) {
    if (scratch_.size() < words) scratch_.resize(words);
    return scratch_.data();
  }
  /// Scratch of `n` bf16 values for one product's activations split row by row (the vdpbf16ps
  /// products), grown as product_scratch is.
  bf16* split_rows(std::size_t n) {
    if (split_.size() < n) split_.resize(n);
    return split_.data();
  }

 private:
  static int threads_of(const HostContextOptions& o) {
    if (o.threads > 0) return o.threads;
    const unsigned h = std::thread::hardware_concurrency();
    return h == 0 ? 1 : static_cast<int>(h);
  }
  host_simd::Isa isa_;
  bool bf16_products_;
  bool amx_;
  std::vector<std::uint32_t> scratch_;
  std::vector<bf16> split_;
  ThreadPool pool_;
};

}  // namespace baton
