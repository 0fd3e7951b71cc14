// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief The host backend: heap memory, and the forward on the CPU (baton's own kernels with
///        run-time ISA dispatch, on a HostContext's thread pool or OpenMP).
#pragma once

#include <cstddef>
#include <cstring>
#include <new>
#include <span>
#include <string_view>
#include <utility>

#include "baton/backend/backend.hpp"
#include "baton/backend/host_memory.hpp"

namespace baton {

/// Owned host memory for `n` elements of T (trivially copyable T only), zeroed: 64-byte
/// aligned, and 2 MiB aligned on huge pages from 2 MiB up (host_memory.hpp says why).
/// Movable, not copyable: a buffer is one allocation with one owner.
template <class T>
class HostBuffer {
  static_assert(std::is_trivially_copyable_v<T>, "HostBuffer holds plain data only");

 public:
  HostBuffer() = default;
  explicit HostBuffer(std::size_t n) : size_(n) {
    if (n != 0) {
      data_ = static_cast<T*>(host_memory::allocate(n * sizeof(T)));
      std::memset(static_cast<void*>(data_), 0, n * sizeof(T));
    }
  }
  HostBuffer(HostBuffer&& o) noexcept
      : data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)) {}
  HostBuffer& operator=(HostBuffer&& o) noexcept {
    if (this != &o) {
      release();
      data_ = std::exchange(o.data_, nullptr);
      size_ = std::exchange(o.size_, 0);
    }
    return *this;
  }
  HostBuffer(const HostBuffer&) = delete;
  HostBuffer& operator=(const HostBuffer&) = delete;
  ~HostBuffer() { release(); }

  T* data() noexcept { return data_; }
  const T* data() const noexcept { return data_; }
  std::size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }
  std::span<T> span() noexcept { return {data_, size_}; }
  std::span<const T> span() const noexcept { return {data_, size_}; }
  T& operator[](std::size_t i) noexcept { return data_[i]; }
  const T& operator[](std::size_t i) const noexcept { return data_[i]; }

 private:
  void release() noexcept {
    host_memory::release(static_cast<void*>(data_), size_ * sizeof(T));
    data_ = nullptr;
    size_ = 0;
  }
  T* data_ = nullptr;
  std::size_t size_ = 0;
};

// Declared only: this header reaches .cu files (through model/family/), and host_context.hpp
// brings the x86 kernels (intrinsics) that nvcc must not see; host_ops.hpp includes it.
class HostContext;

/// What a Workspace<host> keeps beside its activations: the HostContext its forward passes
/// run on (thread pool, kernel instruction set), or none (OpenMP, the CPU's best kernels).
struct HostWorkspaceExtras {
  HostContext* context = nullptr;
  /// Runs this workspace's forward passes on `c`, which must outlive the binding.
  void bind(HostContext& c) noexcept { context = &c; }
};

/// Backend tag: computation on the CPU. A real backend, not a test double.
struct host {
  static constexpr std::string_view name = "host";
  static constexpr bool is_device = false;
  /// Q8_0 / Q4_0 matrices are held in groups of eight rows (core/quant.hpp), the layout of the
  /// host's integer products (host_quant_groups.hpp).
  static constexpr bool groups_block_rows = true;
  template <class T>
  using buffer = HostBuffer<T>;
  using workspace_extras = HostWorkspaceExtras;

  /// Copies host data into a backend buffer.
  template <class T>
  static buffer<T> upload(std::span<const T> src) {
    buffer<T> b(src.size());
    if (!src.empty()) std::memcpy(b.data(), src.data(), src.size_bytes());
    return b;
  }
  /// Copies a backend range back to host memory.
  template <class T>
  static void download(std::span<const T> src, std::span<T> dst) {
    if (!src.empty()) std::memcpy(dst.data(), src.data(), src.size_bytes());
  }
  /// Copies a whole buffer into host memory of the same size.
  template <class T>
  static void download(const buffer<T>& src, std::span<T> dst) {
    download(src.span(), dst);
  }
  /// Copies `n` elements of `b` from offset `src` to offset `dst` (the ranges do not overlap;
  /// the caller checked them against the buffer's size).
  template <class T>
  static void copy_within(buffer<T>& b, std::size_t dst, std::size_t src, std::size_t n) {
    if (n != 0) std::memcpy(b.data() + dst, b.data() + src, n * sizeof(T));
  }
};

static_assert(Backend<host>);

}  // namespace baton
