// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief The host-grid backend: host memory, and the forward run as the CUDA backend runs
///        it — the same phased kernels, launch shapes and scratch — on the host grid
///        (grid/host_grid.hpp). Slow on purpose (one thread at a time); it exists so the
///        device forward's composition is tested on machines without a GPU.
#pragma once

#include <cstddef>
#include <span>
#include <string_view>

#include "baton/backend/backend.hpp"
#include "baton/backend/exec_binding.hpp"
#include "baton/backend/host.hpp"
#include "baton/grid/forward_scratch.hpp"

namespace baton {

/// What the host grid runs on: the bookkeeping of a CudaContext without a device — the same
/// counters (waits, run-time allocations and frees, graph captures and replays), so tests on
/// the host grid see the path the GPU takes. A context a caller made stands for a stream of
/// its own, which a graph can capture; the one an unbound workspace makes for itself stands
/// for the legacy default stream, which cannot be captured (the device loop then launches each
/// step directly, as the CUDA backend does).
class HostGridContext {
 public:
  HostGridContext() = default;
  const ExecCounters& counters() const noexcept { return counters_; }
  long host_waits() const noexcept { return counters_.host_waits; }
  /// Nothing to wait for on the host; counted, as the device's wait would be.
  void synchronize() noexcept { ++counters_.host_waits; }
  template <class T>
  HostBuffer<T> allocate(std::size_t n) {
    ++counters_.allocations;
    return HostBuffer<T>(n);
  }
  void count_free() noexcept { ++counters_.frees; }
  void count_capture() noexcept { ++counters_.captures; }
  void count_replays(long n) noexcept { counters_.replays += n; }
  void count_direct_steps(long n) noexcept { counters_.direct_steps += n; }
  /// Whether a step graph can be captured here (false: the stand-in for the legacy stream).
  bool capturable() const noexcept { return capturable_; }
  static HostGridContext for_unbound() {
    HostGridContext c;
    c.capturable_ = false;
    return c;
  }

 private:
  ExecCounters counters_;
  bool capturable_ = true;
};

/// What a Workspace<host_grid> keeps beside the activations (as CudaWorkspaceExtras).
class HostGridExtras : public ExecBinding<HostGridContext> {
 public:
  grid::GridScratch<host>& scratch() noexcept { return scratch_; }

 private:
  grid::GridScratch<host> scratch_;
};

/// Backend tag: host memory (HostBuffer, as baton::host), forward through phased kernels on
/// the host grid. Include model/host_grid_forward.hpp for its operations.
struct host_grid {
  static constexpr std::string_view name = "host-grid";
  static constexpr bool is_device = false;
  template <class T>
  using buffer = HostBuffer<T>;
  using workspace_extras = HostGridExtras;
  template <class T>
  static buffer<T> upload(std::span<const T> src) {
    return host::upload(src);
  }
  template <class T>
  static void download(const buffer<T>& src, std::span<T> dst) {
    host::download(src, dst);
  }
  template <class T>
  static void copy_within(buffer<T>& b, std::size_t dst, std::size_t src, std::size_t n) {
    host::copy_within(b, dst, src, n);
  }
};

static_assert(Backend<host_grid>);

}  // namespace baton
