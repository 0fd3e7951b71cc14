// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief The CUDA backend tag: cudaMalloc'd buffers, upload/download, status checks, and an
/// RAII stream + cuBLAS handle.
///
/// This header is plain C++: g++ can include it (it uses only the C headers of the CUDA
/// runtime and cuBLAS, never CUB or Thrust). Kernels and anything else that needs nvcc live
/// in `.cuh` headers such as baton/backend/cuda_kernels.cuh. Link with baton::cuda.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <source_location>
#include <span>
#include <string_view>
#include <type_traits>
#include <utility>

#include "baton/backend/backend.hpp"
#include "baton/backend/device_ptr.hpp"
#include "baton/core/error.hpp"

namespace baton {

namespace detail {

inline void cuda_check(cudaError_t status, const char* call, const std::source_location& where) {
  if (status != cudaSuccess) [[unlikely]] {
    // The runtime records the last error per thread; clear it so a later, unrelated
    // cudaGetLastError() check does not report this failure a second time.
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

/// True when the CUDA runtime sees at least one usable device. Never throws: a machine
/// without a driver or GPU (every CI machine) simply answers false.
inline bool cuda_device_available() noexcept {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  return count > 0;
}

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
      if (const cudaError_t status = cudaMemset(p, 0, n * sizeof(T)); status != cudaSuccess) {
        release();
        detail::cuda_check(status, "cudaMemset(p, 0, n * sizeof(T))",
                           std::source_location::current());
      }
    }
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

/// Backend tag: computation on an NVIDIA GPU (raw cudaMalloc memory, cuBLAS, own kernels).
struct cuda {
  static constexpr std::string_view name = "cuda";
  static constexpr bool is_device = true;
  template <class T>
  using buffer = DeviceBuffer<T>;

  /// Copies host data into a new device buffer. Synchronous: the host memory may be reused
  /// as soon as this returns.
  template <class T>
  static buffer<T> upload(std::span<const T> src) {
    buffer<T> b(src.size());
    if (!src.empty()) {
      BATON_CUDA_CHECK(
          cudaMemcpy(b.data().get(), src.data(), src.size_bytes(), cudaMemcpyHostToDevice));
    }
    return b;
  }
  /// Copies `dst.size()` elements starting at device address `src` into host memory.
  /// Synchronous: waits for the copy (and for preceding work on the legacy default stream).
  template <class T>
  static void download(DevicePtr<const T> src, std::span<T> dst) {
    if (!dst.empty()) {
      BATON_CUDA_CHECK(cudaMemcpy(dst.data(), src.get(), dst.size_bytes(), cudaMemcpyDeviceToHost));
    }
  }
  /// Copies a whole device buffer into host memory of the same size.
  template <class T>
  static void download(const buffer<T>& src, std::span<T> dst) {
    BATON_CHECK(dst.size() == src.size(), usage_error, "download of ", src.size(),
                " elements into a host span of ", dst.size());
    download(src.data(), dst);
  }
};

static_assert(Backend<cuda>);

/// One CUDA stream and a cuBLAS handle bound to it: the execution context a relay runs on
/// (one per relay, so relays on different streams overlap). Created on the current device;
/// move-only; destroys both on destruction.
class CudaContext {
 public:
  CudaContext() {
    BATON_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    try {
      BATON_CUBLAS_CHECK(cublasCreate(&blas_));
      BATON_CUBLAS_CHECK(cublasSetStream(blas_, stream_));
    } catch (...) {
      release();
      throw;
    }
  }
  CudaContext(CudaContext&& o) noexcept
      : stream_(std::exchange(o.stream_, nullptr)), blas_(std::exchange(o.blas_, nullptr)) {}
  CudaContext& operator=(CudaContext&& o) noexcept {
    if (this != &o) {
      release();
      stream_ = std::exchange(o.stream_, nullptr);
      blas_ = std::exchange(o.blas_, nullptr);
    }
    return *this;
  }
  CudaContext(const CudaContext&) = delete;
  CudaContext& operator=(const CudaContext&) = delete;
  ~CudaContext() { release(); }

  cudaStream_t stream() const noexcept { return stream_; }
  cublasHandle_t blas() const noexcept { return blas_; }
  /// Waits for all work queued on the stream; throws device_error if any of it failed.
  void synchronize() const { BATON_CUDA_CHECK(cudaStreamSynchronize(stream_)); }

 private:
  void release() noexcept {
    if (blas_) (void)cublasDestroy(blas_);
    if (stream_) (void)cudaStreamDestroy(stream_);
    blas_ = nullptr;
    stream_ = nullptr;
  }
  cudaStream_t stream_ = nullptr;
  cublasHandle_t blas_ = nullptr;
};

}  // namespace baton
