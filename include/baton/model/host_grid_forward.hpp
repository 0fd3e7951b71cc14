// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief BackendOps<host_grid>: GridForwardOps (and GridBatchOps) over an executor that runs
///        every kernel on the host grid, and the products as the batch-1 GEMV kernel once per
///        token.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "baton/backend/host_grid.hpp"
#include "baton/grid/host_grid.hpp"
#include "baton/kernels/phased/gemv.hpp"
#include "baton/kernels/phased/gemv_blocks.hpp"
#include "baton/model/backend_ops.hpp"
#include "baton/model/forward.hpp"
#include "baton/model/grid_batch_ops.hpp"
#include "baton/model/grid_ops.hpp"
#include "baton/model/phased_exec_ops.hpp"

namespace baton {

/// Runs phased kernels on the host grid for GridForwardOps and GridBatchOps.
class HostGridExec : public PhasedExecOps<HostGridExec> {
 public:
  using backend = host_grid;
  explicit HostGridExec(Workspace<host_grid>& ws) : ws_(ws), ctx_(ws.extras.context()) {}

  /// The workspace's scratch (PhasedExecOps' intermediates).
  auto& scratch() { return ws_.extras.scratch(); }

  template <grid::PhasedKernel K>
  void launch(const grid::LaunchConfig& cfg, const typename K::Args& args) {
    grid::run_on_host_grid<K>(cfg, args);
  }

  /// One GEMV launch per token: the device's batch-1 kernel, also for prefill.
  template <StorageType S>
  void matmul(const float* x, int n, int in, int ldx, const S* w, int out, const float* bias,
              float* y, int ldy, bool accumulate) {
    using K = kernels::GemvKernel<S>;
    for (int t = 0; t < n; ++t) {
      const float* xt = x + static_cast<std::size_t>(t) * ldx;
      typename K::Args a{w,  xt,         y + static_cast<std::size_t>(t) * ldy, bias, out,
                         in, accumulate, K::can_vectorize(w, xt, in),           idle_};
      launch<K>(K::config(out), a);
    }
  }

  /// A block-quantized model's matrix: its GEMV per token (f16 fallbacks take the f16 one).
  void matmul(const float* x, int n, int in, int ldx, BlockView w, int out, const float* bias,
              float* y, int ldy, bool accumulate) {
    if (w.format == BlockFormat::f16)
      return matmul(x, n, in, ldx, reinterpret_cast<const f16*>(w.data), out, bias, y, ldy,
                    accumulate);
    using K = kernels::GemvBlocksKernel;
    for (int t = 0; t < n; ++t) {
      typename K::Args a{w,
                         x + static_cast<std::size_t>(t) * ldx,
                         y + static_cast<std::size_t>(t) * ldy,
                         bias,
                         out,
                         in,
                         accumulate,
                         idle_};
      launch<K>(K::config(out), a);
    }
  }

  std::span<const float> logits(const float* p, std::size_t n) { return {p, n}; }

  /// Products skip their work while `desc->tokens == 0` (a device-loop forward after the end).
  void skip_when_idle(const kernels::ForwardDesc* desc) { idle_ = desc; }

  /// Runs `body`'s launches `times` times, as a graph replay does on the device; counted as
  /// the CUDA executor counts (one capture and `times` replays on a context that can be
  /// captured, `times` direct steps on an unbound workspace's).
  template <class Body>
  void replay(int times, Body&& body) {
    if (times <= 0) return;
    if (ctx_.capturable()) {
      ctx_.count_capture();
      ctx_.count_replays(times);
    } else {
      ctx_.count_direct_steps(times);
    }
    for (int i = 0; i < times; ++i) body();
  }

  /// Copies the loop's outcome back: the device backend's one wait, here a plain copy
  /// (counted on the context as the device's wait).
  void read(const std::int32_t* src, std::span<std::int32_t> dst) {
    std::copy(src, src + dst.size(), dst.data());
    ctx_.synchronize();
  }

  /// Multi-token products run as one GEMV per token: no widened copy of 16-bit weights.
  static constexpr bool widens_16bit_products = false;

 private:
  Workspace<host_grid>& ws_;
  HostGridContext& ctx_;
  const kernels::ForwardDesc* idle_ = nullptr;
};

template <>
struct BackendOps<host_grid> {
  template <class Model, class Slice, class Cache>
  using forward_ops = GridForwardOps<Model, Slice, Cache, HostGridExec>;
  /// forward_batch()'s operations (model/grid_batch_ops.hpp).
  template <class Model, class Slice, class Cache>
  using batch_ops = GridBatchOps<Model, Slice, Cache, HostGridExec>;
  using logits_view = std::span<const float>;
  /// What runs the device loop's launches (model/device_loop.hpp).
  using exec = HostGridExec;
};

}  // namespace baton
