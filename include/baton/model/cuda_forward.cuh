// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief BackendOps<cuda>: GridForwardOps (model/grid_ops.hpp) over an executor that
///        launches the phased kernels on the workspace's stream, multiplies with the batch-1
///        GEMV kernel for one token and with cuBLAS (f32 GEMM, 16-bit weights widened first)
///        for more (the decode step chooses through the same executor: model/device_choice.hpp).
///
/// `.cuh`: it instantiates `__global__` kernels, so only nvcc compiles it. Everything it runs
/// is also run on the host grid by model/host_grid_forward.hpp, which is how it is tested
/// without a GPU.
#pragma once

#if !defined(__CUDACC__)
#error "baton/model/cuda_forward.cuh needs nvcc; plain C++ runs the host or host-grid backend"
#endif

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>
#include <vector>

#include "baton/backend/cuda.hpp"
#include "baton/grid/device_grid.cuh"
#include "baton/kernels/phased/elementwise.hpp"
#include "baton/kernels/phased/gemv.hpp"
#include "baton/kernels/phased/gemv_blocks.hpp"
#include "baton/model/backend_ops.hpp"
#include "baton/model/forward.hpp"
#include "baton/model/grid_batch_ops.hpp"
#include "baton/model/grid_ops.hpp"
#include "baton/model/phased_exec_ops.hpp"

namespace baton {

/// A forward's logits in device memory, with the workspace whose stream produced them.
struct CudaLogits {
  DevicePtr<const float> data;
  std::size_t count = 0;
  CudaWorkspaceExtras* owner = nullptr;
  std::size_t size() const noexcept { return count; }
  bool empty() const noexcept { return count == 0; }
  /// `n` logits from `offset` on (one row of a batched forward's logits).
  CudaLogits subspan(std::size_t offset, std::size_t n) const {
    return {data + static_cast<std::ptrdiff_t>(offset), n, owner};
  }
};

/// The logits copied to the host (one counted wait on the owner's context).
inline std::vector<float> download_logits(const CudaLogits& l) {
  std::vector<float> out(l.count);
  if (l.count) l.owner->context().copy_to_host(l.data, std::span<float>(out));
  return out;
}

/// Runs phased kernels and products on the GPU for GridForwardOps and GridBatchOps.
class CudaExec : public PhasedExecOps<CudaExec> {
 public:
  using backend = cuda;
  explicit CudaExec(Workspace<cuda>& ws) : ws_(ws), ctx_(ws.extras.context()) {}

  /// The workspace's scratch (PhasedExecOps' intermediates).
  auto& scratch() { return ws_.extras.scratch(); }

  template <grid::PhasedKernel K>
  void launch(const grid::LaunchConfig& cfg, const typename K::Args& args) {
    grid::launch_on_device<K>(cfg, args, ctx_.stream());
  }

  template <StorageType S>
  void matmul(const float* x, int n, int in, int ldx, const S* w, int out, const float* bias,
              float* y, int ldy, bool accumulate) {
    if (n == 1) {
      using K = kernels::GemvKernel<S>;
      launch<K>(K::config(out),
                {w, x, y, bias, out, in, accumulate, K::can_vectorize(w, x, in), idle_});
      return;
    }
    // Row-major y[n, out] = x[n, in] · W[out, in]^T is, column-major, Y^T = W · X^T with
    // A = W read column-major as [in, out] (ld in) and transposed, B = X^T [in, n] (ld ldx).
    const float alpha = 1.0f, beta = accumulate ? 1.0f : 0.0f;
    if constexpr (std::is_same_v<S, f32>) {
      BATON_CUBLAS_CHECK(cublasSgemm(ctx_.blas(), CUBLAS_OP_T, CUBLAS_OP_N, out, n, in, &alpha, w,
                                     in, x, ldx, &beta, y, ldy));
    } else {
      // cuBLAS has no f32 x bf16/f16 product: widen the matrix into scratch (prefill only), a
      // tile of output rows at a time, so the scratch stays at kWidenTileElems however large
      // the matrix (the output head of a 128k vocabulary would need 2 GiB at once).
      auto& s = ws_.extras.scratch();
      ws_.extras.grow(s.widened, std::min(static_cast<std::size_t>(out) * in, kWidenTileElems));
      // (reserve() sized it from the model: widened_tile_elems; this grows only for a matrix
      // of another model run through the same workspace, counted.)
      const int tile = static_cast<int>(std::max<std::size_t>(1, s.widened.size() / in));
      float* wf = raw_pointer(s.widened.data());
      for (int r = 0; r < out; r += tile) {
        const int rows = std::min(tile, out - r);
        const std::size_t elems = static_cast<std::size_t>(rows) * in;
        using K = kernels::WidenKernel<S>;
        launch<K>(K::config(elems), {w + static_cast<std::size_t>(r) * in, wf, elems});
        BATON_CUBLAS_CHECK(cublasSgemm(ctx_.blas(), CUBLAS_OP_T, CUBLAS_OP_N, rows, n, in, &alpha,
                                       wf, in, x, ldx, &beta, y + r, ldy));
      }
    }
    if (bias) {
      using K = kernels::BiasAddKernel;
      launch<K>(K::config(n, out), {y, bias, n, out, ldy});
    }
  }

  /// A block-quantized model's matrix: one token runs the block GEMV; more dequantize a tile
  /// of rows at a time into the widened scratch for cuBLAS (the 16-bit path's tiles). f16
  /// fallbacks take the f16 path.
  void matmul(const float* x, int n, int in, int ldx, BlockView w, int out, const float* bias,
              float* y, int ldy, bool accumulate) {
    if (w.format == BlockFormat::f16)
      return matmul(x, n, in, ldx, reinterpret_cast<const f16*>(w.data), out, bias, y, ldy,
                    accumulate);
    if (n == 1) {
      using K = kernels::GemvBlocksKernel;
      launch<K>(K::config(out), {w, x, y, bias, out, in, accumulate, idle_});
      return;
    }
    const float alpha = 1.0f, beta = accumulate ? 1.0f : 0.0f;
    auto& s = ws_.extras.scratch();
    ws_.extras.grow(s.widened, std::min(static_cast<std::size_t>(out) * in, kWidenTileElems));
    const int tile = static_cast<int>(std::max<std::size_t>(1, s.widened.size() / in));
    float* wf = raw_pointer(s.widened.data());
    const std::size_t row_bytes = block_row_bytes(w.format, static_cast<std::size_t>(in));
    for (int r = 0; r < out; r += tile) {
      const int rows = std::min(tile, out - r);
      using K = kernels::DequantizeKernel;
      const BlockView part{w.data + static_cast<std::size_t>(r) * row_bytes, w.format};
      launch<K>(K::config(static_cast<std::size_t>(rows) * in),
                {part, wf, static_cast<std::size_t>(rows), static_cast<std::size_t>(in)});
      BATON_CUBLAS_CHECK(cublasSgemm(ctx_.blas(), CUBLAS_OP_T, CUBLAS_OP_N, rows, n, in, &alpha, wf,
                                     in, x, ldx, &beta, y + r, ldy));
    }
    if (bias) {
      using K = kernels::BiasAddKernel;
      launch<K>(K::config(n, out), {y, bias, n, out, ldy});
    }
  }

  /// Products of several tokens widen 16-bit weights into scratch first (cuBLAS multiplies
  /// f32), a tile at a time (widened_tile_elems, model/grid_ops.hpp).
  static constexpr bool widens_16bit_products = true;

  CudaLogits logits(const float* p, std::size_t n) {
    return {DevicePtr<const float>(p), n, &ws_.extras};
  }

  /// Products skip their work while `desc->tokens == 0` (a device-loop forward after the end).
  void skip_when_idle(const kernels::ForwardDesc* desc) { idle_ = desc; }

  /// Queues `body`'s launches `times` times without waiting: captured once into the
  /// workspace's step graph and replayed. A context on the legacy default stream cannot be
  /// captured; there the launches are queued directly (still no wait).
  template <class Body>
  void replay(int times, Body&& body) {
    if (times <= 0) return;
    if (ctx_.stream() == nullptr) {
      ctx_.count_direct_steps(times);
      for (int i = 0; i < times; ++i) body();
      return;
    }
    CudaGraph& graph = ws_.extras.step_graph();
    graph.capture(ctx_.stream(), body);
    ctx_.count_capture();
    for (int i = 0; i < times; ++i) graph.launch(ctx_.stream());
    ctx_.count_replays(times);
  }

  /// Copies the loop's outcome to the host after everything queued: the loop's one wait.
  void read(const std::int32_t* src, std::span<std::int32_t> dst) {
    ctx_.copy_to_host(DevicePtr<const std::int32_t>(src), dst);
  }

 private:
  Workspace<cuda>& ws_;
  CudaContext& ctx_;
  const kernels::ForwardDesc* idle_ = nullptr;
};

template <>
struct BackendOps<cuda> {
  template <class Model, class Slice, class Cache>
  using forward_ops = GridForwardOps<Model, Slice, Cache, CudaExec>;
  /// forward_batch()'s operations (model/grid_batch_ops.hpp).
  template <class Model, class Slice, class Cache>
  using batch_ops = GridBatchOps<Model, Slice, Cache, CudaExec>;
  using logits_view = CudaLogits;
  /// What runs the device loop's launches (model/device_loop.hpp).
  using exec = CudaExec;
};

}  // namespace baton
