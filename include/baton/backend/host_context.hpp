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
#include <optional>
#include <thread>

#include "baton/backend/host_simd.hpp"
#include "baton/backend/thread_pool.hpp"
#include "baton/core/error.hpp"

namespace baton {

struct HostContextOptions {
  int threads = 0;                     ///< 0: std::thread::hardware_concurrency()
  std::optional<host_simd::Isa> isa;   ///< unset: the best the CPU runs; set: forced
  std::chrono::microseconds spin{50};  ///< how long idle threads spin before sleeping
};

class HostContext {
 public:
  explicit HostContext(HostContextOptions o = {})
      : isa_(o.isa.value_or(host_simd::best_isa())), pool_(threads_of(o), o.spin) {
    BATON_CHECK(host_simd::cpu_supports(isa_), usage_error, "HostContext: isa ",
                host_simd::isa_name(isa_), " requested, but this CPU does not run it");
  }

  ThreadPool& pool() noexcept { return pool_; }
  host_simd::Isa isa() const noexcept { return isa_; }
  int threads() const noexcept { return pool_.size(); }

 private:
  static int threads_of(const HostContextOptions& o) {
    if (o.threads > 0) return o.threads;
    const unsigned h = std::thread::hardware_concurrency();
    return h == 0 ? 1 : static_cast<int>(h);
  }
  host_simd::Isa isa_;
  ThreadPool pool_;
};

}  // namespace baton
