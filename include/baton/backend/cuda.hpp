// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief The CUDA backend tag: cudaMalloc'd buffers, upload/download, status checks, the
/// execution context (stream, cuBLAS handle and workspace, counted host waits), the captured
/// step graph and the workspace extras a forward needs.
///
/// This header is plain C++: g++ can include it (it uses only the C headers of the CUDA
/// runtime and cuBLAS, never CUB or Thrust). Kernels and anything else that needs nvcc live
/// in `.cuh` headers such as baton/backend/cuda_kernels.cuh. Link with baton::cuda.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <memory>
#include <source_location>
#include <span>
#include <string_view>
#include <type_traits>
#include <utility>

#include "baton/backend/backend.hpp"
#include "baton/backend/cuda_status.hpp"
#include "baton/backend/device_ptr.hpp"
#include "baton/backend/exec_binding.hpp"
#include "baton/core/error.hpp"
#include "baton/grid/forward_scratch.hpp"

namespace baton {

namespace detail {

inline void cuda_check(cudaError_t status, const char* call, const std::source_location& where) {
  if (status != cudaSuccess) [[unlikely]] {
    // The runtime records the last error per thread; clear it so a later, unrelated
    // cudaGetLastError() check does not report this failure a second time. (A sticky error,
    // such as a runtime that could not initialise under an old driver, stays: every later call
    // reports it again, which is what it is.)
    (void)cudaGetLastError();
    fail_at<device_error>(where, call, " failed: ", cudaGetErrorName(status), " (",
                          cudaGetErrorString(status), ")");
  }
}

inline void cublas_check(cublasStatus_t status, const char* call,
                         const std::source_location& where) {
  if (status != CUBLAS_STATUS_SUCCESS) [[unlikely]] {
    fail_at<device_error>(where, call, " failed: ", cublasGetStatusName(status), " (",
                          cublasGetStatusString(status), ")");
  }
}

}  // namespace detail

}  // namespace baton

/// Evaluates a CUDA runtime call and throws baton::device_error naming the call and the
/// status (e.g. `cudaMalloc(&p, n) failed: cudaErrorMemoryAllocation (out of memory)`).
#define BATON_CUDA_CHECK(expr) \
  ::baton::detail::cuda_check((expr), #expr, std::source_location::current())

/// Evaluates a cuBLAS call and throws baton::device_error naming the call and the status.
#define BATON_CUBLAS_CHECK(expr) \
  ::baton::detail::cublas_check((expr), #expr, std::source_location::current())

namespace baton {

namespace detail {

/// The one function through which the host waits for the device: every synchronize and
/// every blocking copy of the CUDA backend ends here, and a context's waits are counted
/// (`counter`; null for load-time work that belongs to no context: uploads, zero-fills).
inline void host_wait(cudaStream_t stream, long* counter) {
  if (counter) ++*counter;
  BATON_CUDA_CHECK(cudaStreamSynchronize(stream));
}

/// Copies `bytes` from device to host memory on `stream` and waits for it (host_wait).
inline void blocking_copy_to_host(void* dst, const void* src, std::size_t bytes,
                                  cudaStream_t stream, long* counter) {
  BATON_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, stream));
  host_wait(stream, counter);
}

}  // namespace detail

/// True when the CUDA runtime sees at least one usable device. Never throws: a machine
/// without a driver or GPU (every CI machine) simply answers false; cuda_status() says why.
inline bool cuda_device_available() noexcept { return cuda_status().usable(); }

/// Owned device memory for `n` elements of T (plain data only), zero-filled like HostBuffer.
/// Move-only: one allocation, one owner. `data()` returns a DevicePtr, which the host cannot
/// dereference; copy through cuda::upload/download instead.
template <class T>
class DeviceBuffer {
  static_assert(std::is_trivially_copyable_v<T>, "DeviceBuffer holds plain data only");

 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t n) : size_(n) {
    if (n != 0) {
      void* p = nullptr;
      BATON_CUDA_CHECK(cudaMalloc(&p, n * sizeof(T)));
      data_ = static_cast<T*>(p);
      // The zero-fill runs on the legacy stream, which does not order with the backend's
      // non-blocking streams: wait for it, so no later kernel can race it.
      try {
        BATON_CUDA_CHECK(cudaMemsetAsync(p, 0, n * sizeof(T), nullptr));
        detail::host_wait(nullptr, nullptr);
      } catch (...) {
        release();
        throw;
      }
    }
  }
  /// `n` zeroed elements whose zero-fill is queued on `stream` (no wait): what a context's
  /// counted allocation returns. Work later queued on the same stream sees the zeros.
  static DeviceBuffer zeroed_on(cudaStream_t stream, std::size_t n) {
    DeviceBuffer b;
    if (n != 0) {
      void* p = nullptr;
      BATON_CUDA_CHECK(cudaMalloc(&p, n * sizeof(T)));
      b.data_ = static_cast<T*>(p);
      b.size_ = n;
      BATON_CUDA_CHECK(cudaMemsetAsync(p, 0, n * sizeof(T), stream));
    }
    return b;
  }
  DeviceBuffer(DeviceBuffer&& o) noexcept
      : data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      release();
      data_ = std::exchange(o.data_, nullptr);
      size_ = std::exchange(o.size_, 0);
    }
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() { release(); }

  DevicePtr<T> data() noexcept { return DevicePtr<T>(data_); }
  DevicePtr<const T> data() const noexcept { return DevicePtr<const T>(data_); }
  std::size_t size() const noexcept { return size_; }
  std::size_t size_bytes() const noexcept { return size_ * sizeof(T); }
  bool empty() const noexcept { return size_ == 0; }

 private:
  void release() noexcept {
    // cudaFree's status is dropped: a destructor must not throw, and a failure here means
    // the context is already broken, which the next checked call reports.
    if (data_) (void)cudaFree(data_);
    data_ = nullptr;
    size_ = 0;
  }
  T* data_ = nullptr;
  std::size_t size_ = 0;
};

class CudaWorkspaceExtras;

/// Backend tag: computation on an NVIDIA GPU (raw cudaMalloc memory, cuBLAS, own kernels).
/// The forward's operations are in baton/model/cuda_forward.cuh (nvcc).
struct cuda {
  static constexpr std::string_view name = "cuda";
  static constexpr bool is_device = true;
  template <class T>
  using buffer = DeviceBuffer<T>;
  /// A Workspace<cuda>'s stream binding and kernel scratch.
  using workspace_extras = CudaWorkspaceExtras;

  /// Copies host data into a new device buffer. Synchronous: the host memory may be reused
  /// as soon as this returns.
  template <class T>
  static buffer<T> upload(std::span<const T> src) {
    buffer<T> b(src.size());
    if (!src.empty()) {
      BATON_CUDA_CHECK(cudaMemcpyAsync(b.data().get(), src.data(), src.size_bytes(),
                                       cudaMemcpyHostToDevice, nullptr));
      detail::host_wait(nullptr, nullptr);
    }
    return b;
  }
  /// Copies `dst.size()` elements starting at device address `src` into host memory.
  /// Synchronous: waits for the copy (and for preceding work on the legacy default stream).
  template <class T>
  static void download(DevicePtr<const T> src, std::span<T> dst) {
    if (!dst.empty()) {
      detail::blocking_copy_to_host(dst.data(), src.get(), dst.size_bytes(), nullptr, nullptr);
    }
  }
  /// Copies a whole device buffer into host memory of the same size.
  template <class T>
  static void download(const buffer<T>& src, std::span<T> dst) {
    BATON_CHECK(dst.size() == src.size(), usage_error, "download of ", src.size(),
                " elements into a host span of ", dst.size());
    download(src.data(), dst);
  }
  /// Copies `n` elements of `b` from offset `src` to offset `dst` (the ranges do not overlap)
  /// and waits for it. The buffer may be written by work on any context's stream, so the
  /// device is synchronized first (what wrote the source is done) and the copy waited for (what
  /// reads the destination next sees it). Rare by design: a KV slot forked for `n` choices.
  template <class T>
  static void copy_within(buffer<T>& b, std::size_t dst, std::size_t src, std::size_t n) {
    if (n == 0) return;
    BATON_CUDA_CHECK(cudaDeviceSynchronize());
    T* base = b.data().get();
    BATON_CUDA_CHECK(
        cudaMemcpyAsync(base + dst, base + src, n * sizeof(T), cudaMemcpyDeviceToDevice, nullptr));
    detail::host_wait(nullptr, nullptr);
  }
};

static_assert(Backend<cuda>);

/// One CUDA stream, a cuBLAS handle bound to it with its own workspace (graph capture needs
/// one that is not allocated on the fly), and the count of host waits: the execution context
/// a relay runs on (one per relay, so relays on different streams overlap). Created on the
/// current device; move-only; destroys everything on destruction.
class CudaContext {
 public:
  /// cuBLAS's own recommendation for Hopper-class GPUs.
  static constexpr std::size_t kBlasWorkspaceBytes = 32u << 20;

  /// Which stream a context runs on.
  enum class Stream {
    own,            ///< a new non-blocking stream: relays on different contexts overlap
    legacy_default  ///< the legacy default stream, which orders with every other user of it
  };

  explicit CudaContext(Stream kind = Stream::own) {
    if (kind == Stream::own) {
      BATON_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
      owns_stream_ = true;
    }
    try {
      BATON_CUBLAS_CHECK(cublasCreate(&blas_));
      BATON_CUBLAS_CHECK(cublasSetStream(blas_, stream_));
      blas_workspace_ = DeviceBuffer<std::byte>(kBlasWorkspaceBytes);
      BATON_CUBLAS_CHECK(
          cublasSetWorkspace(blas_, blas_workspace_.data().get(), blas_workspace_.size_bytes()));
      // Plain f32 products (no TF32): the forward is compared with f32 host logits.
      BATON_CUBLAS_CHECK(cublasSetMathMode(blas_, CUBLAS_PEDANTIC_MATH));
    } catch (...) {
      release();
      throw;
    }
  }
  CudaContext(CudaContext&& o) noexcept
      : stream_(std::exchange(o.stream_, nullptr)),
        owns_stream_(std::exchange(o.owns_stream_, false)),
        blas_(std::exchange(o.blas_, nullptr)),
        blas_workspace_(std::move(o.blas_workspace_)),
        counters_(std::exchange(o.counters_, {})) {}
  CudaContext& operator=(CudaContext&& o) noexcept {
    if (this != &o) {
      release();
      stream_ = std::exchange(o.stream_, nullptr);
      owns_stream_ = std::exchange(o.owns_stream_, false);
      blas_ = std::exchange(o.blas_, nullptr);
      blas_workspace_ = std::move(o.blas_workspace_);
      counters_ = std::exchange(o.counters_, {});
    }
    return *this;
  }
  CudaContext(const CudaContext&) = delete;
  CudaContext& operator=(const CudaContext&) = delete;
  ~CudaContext() { release(); }

  cudaStream_t stream() const noexcept { return stream_; }
  cublasHandle_t blas() const noexcept { return blas_; }
  /// Waits for all work queued on the stream (counted); throws device_error if any failed.
  void synchronize() { detail::host_wait(stream_, &counters_.host_waits); }
  /// Copies device memory into host memory after the work queued before it (counted wait).
  template <class T>
  void copy_to_host(DevicePtr<const T> src, std::span<T> dst) {
    if (!dst.empty()) {
      detail::blocking_copy_to_host(dst.data(), src.get(), dst.size_bytes(), stream_,
                                    &counters_.host_waits);
    }
  }
  /// How many times the host has waited on this context.
  long host_waits() const noexcept { return counters_.host_waits; }
  /// Everything the context counted (waits, run-time allocations and frees, graph captures
  /// and replays).
  const ExecCounters& counters() const noexcept { return counters_; }

  /// A run-time allocation (counted): cudaMalloc, its zero-fill queued on this stream. cudaMalloc
  /// may synchronise the device, which is why a pre-warmed stage makes none (docs/cuda.md).
  template <class T>
  DeviceBuffer<T> allocate(std::size_t n) {
    ++counters_.allocations;
    return DeviceBuffer<T>::zeroed_on(stream_, n);
  }
  /// A run-time buffer is about to be released (cudaFree, which synchronises the device).
  void count_free() noexcept { ++counters_.frees; }
  void count_capture() noexcept { ++counters_.captures; }
  void count_replays(long n) noexcept { counters_.replays += n; }
  void count_direct_steps(long n) noexcept { counters_.direct_steps += n; }
  /// The context of a workspace nobody bound: the legacy default stream, which orders with
  /// every other user of it (so unbound workspaces stay ordered with each other), and which
  /// cannot be captured into a graph.
  static CudaContext for_unbound() { return CudaContext(Stream::legacy_default); }

 private:
  void release() noexcept {
    if (blas_) (void)cublasDestroy(blas_);
    if (owns_stream_) (void)cudaStreamDestroy(stream_);
    blas_ = nullptr;
    stream_ = nullptr;
    owns_stream_ = false;
  }
  cudaStream_t stream_ = nullptr;  ///< null: the legacy default stream
  bool owns_stream_ = false;
  cublasHandle_t blas_ = nullptr;
  DeviceBuffer<std::byte> blas_workspace_;
  ExecCounters counters_;
};

/// One captured launch sequence, replayed many times: the device loop's step (forward +
/// decode step, model/device_loop.hpp). capture() records what `body` queues on `stream`; the
/// first capture instantiates the graph, a later one updates the instantiated graph in place
/// when only kernel arguments changed (a new branch state, another adapter) and instantiates
/// anew otherwise. Move-only; destroys the graph on destruction.
class CudaGraph {
 public:
  CudaGraph() = default;
  CudaGraph(CudaGraph&& o) noexcept
      : exec_(std::exchange(o.exec_, nullptr)),
        captures_(o.captures_),
        instantiations_(o.instantiations_) {}
  CudaGraph& operator=(CudaGraph&& o) noexcept {
    if (this != &o) {
      release();
      exec_ = std::exchange(o.exec_, nullptr);
      captures_ = o.captures_;
      instantiations_ = o.instantiations_;
    }
    return *this;
  }
  CudaGraph(const CudaGraph&) = delete;
  CudaGraph& operator=(const CudaGraph&) = delete;
  ~CudaGraph() { release(); }

  /// Records `body`'s launches on `stream` (a stream the context owns: the legacy default
  /// stream cannot be captured). If `body` throws, the capture is ended and discarded.
  template <class Body>
  void capture(cudaStream_t stream, Body&& body) {
    BATON_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    cudaGraph_t graph = nullptr;
    try {
      body();
    } catch (...) {
      (void)cudaStreamEndCapture(stream, &graph);
      if (graph) (void)cudaGraphDestroy(graph);
      (void)cudaGetLastError();
      throw;
    }
    BATON_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
    if (exec_) {
      cudaGraphExecUpdateResultInfo info{};
      if (cudaGraphExecUpdate(exec_, graph, &info) != cudaSuccess) {
        (void)cudaGetLastError();  // a changed topology: instantiate anew below
        (void)cudaGraphExecDestroy(exec_);
        exec_ = nullptr;
      }
    }
    if (!exec_) {
      const cudaError_t status = cudaGraphInstantiate(&exec_, graph, 0);
      if (status != cudaSuccess) {
        exec_ = nullptr;
        (void)cudaGraphDestroy(graph);
        BATON_CUDA_CHECK(status);
      }
      ++instantiations_;
    }
    (void)cudaGraphDestroy(graph);  // the instantiated graph keeps what it needs
    ++captures_;
  }
  /// Queues one replay on `stream` (no wait).
  void launch(cudaStream_t stream) {
    BATON_CHECK(exec_ != nullptr, usage_error, "CudaGraph: launch before any capture");
    BATON_CUDA_CHECK(cudaGraphLaunch(exec_, stream));
  }
  long captures() const noexcept { return captures_; }
  long instantiations() const noexcept { return instantiations_; }

 private:
  void release() noexcept {
    if (exec_) (void)cudaGraphExecDestroy(exec_);
    exec_ = nullptr;
  }
  cudaGraphExec_t exec_ = nullptr;
  long captures_ = 0;
  long instantiations_ = 0;
};

/// What a Workspace<cuda> keeps beside the activations: the context its forwards run on and
/// the phased kernels' scratch. bind() one context per relay to every workspace of that relay:
/// their work is then ordered on one stream (a relay checks it, relay/engine.hpp). A workspace
/// never bound gets a context on the legacy default stream on first use, so unbound workspaces
/// are ordered with each other too (a prefix pre-warmed through one is complete before another
/// reads it), at the price of not overlapping and of running the decode loop without a graph.
/// bind, context and grow come from ExecBinding: every run-time allocation is counted there.
class CudaWorkspaceExtras : public ExecBinding<CudaContext> {
 public:
  grid::GridScratch<cuda>& scratch() noexcept { return scratch_; }
  /// The device loop's step graph: one per workspace, i.e. per (stage slot, batch size 1).
  CudaGraph& step_graph() noexcept { return step_graph_; }

 private:
  grid::GridScratch<cuda> scratch_;
  CudaGraph step_graph_;
};

}  // namespace baton
