// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief ExecCounters and ExecBinding: what a device-loop backend's workspace knows about the
///        execution context it runs on — which context (bound, or its own), and the counted path
///        through which every run-time allocation, free, wait, graph capture and replay goes.
///
/// The CUDA backend (backend/cuda.hpp: CudaContext, one stream) and the host grid
/// (backend/host_grid.hpp: HostGridContext, the same bookkeeping without a device) share this
/// file, so a test on the host grid counts exactly what the GPU path counts: after a stage is
/// pre-warmed, a request allocates nothing and waits once per stage run.
#pragma once

#include <cstddef>
#include <memory>

namespace baton {

/// What a context counts. A run-time allocation or free on the CUDA backend may synchronise the
/// whole device (cudaMalloc, cudaFree), so a stage run is expected to make none of either.
struct ExecCounters {
  long host_waits = 0;    ///< the host waited for the context's queued work
  long allocations = 0;   ///< buffers allocated through a workspace bound to it
  long frees = 0;         ///< buffers released because a larger one replaced them
  long captures = 0;      ///< launch sequences captured into a step graph
  long replays = 0;       ///< step-graph launches
  long direct_steps = 0;  ///< device-loop steps launched one kernel at a time (no graph)
};

/// The context a workspace runs on: one bound by the caller (a relay binds one to all its
/// stages), or, never bound, one of its own made on first use (`Ctx::for_unbound()`). `Ctx`
/// provides `for_unbound()`, `synchronize()`, `count_free()` and `allocate<T>(n)` (a zeroed
/// buffer ordered on the context, counted).
/// Rebinding a workspace that already ran waits for its old context first, so nothing queued
/// there can race what the new one runs.
template <class Ctx>
class ExecBinding {
 public:
  void bind(Ctx& ctx) {
    Ctx* old = ctx_;
    if (old == &ctx) return;
    if (old != nullptr && used_) old->synchronize();
    ctx_ = &ctx;
    owned_.reset();
    used_ = false;
  }
  /// Leaves the workspace unbound (after waiting for the context it ran on): what a relay does
  /// to the workspaces it bound to its own context when it goes.
  void unbind() {
    if (ctx_ != nullptr && used_) ctx_->synchronize();
    ctx_ = nullptr;
    owned_.reset();
    used_ = false;
  }
  /// The bound context, or the workspace's own (made now if needed). Marks the workspace used.
  Ctx& context() {
    if (!ctx_) {
      owned_ = std::make_unique<Ctx>(Ctx::for_unbound());
      ctx_ = owned_.get();
    }
    used_ = true;
    return *ctx_;
  }
  /// The context a caller bound, or null (never bound, or running on its own).
  const Ctx* bound_context() const noexcept { return owned_ ? nullptr : ctx_; }

  /// Makes `b` hold at least `need` elements, through the context's counted allocation; a
  /// replaced buffer counts as a free. Nothing happens when `b` is large enough.
  template <template <class> class Buffer, class T>
  void grow(Buffer<T>& b, std::size_t need) {
    if (b.size() >= need) return;
    Ctx& c = context();
    if (b.size() != 0) c.count_free();
    b = c.template allocate<T>(need);
  }

 private:
  Ctx* ctx_ = nullptr;
  std::unique_ptr<Ctx> owned_;
  bool used_ = false;
};

}  // namespace baton
