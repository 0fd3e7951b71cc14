// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief DevicePtr: a pointer into device memory that host code cannot dereference.
#pragma once

#include <concepts>
#include <cstddef>
#include <type_traits>

namespace baton {

/// A typed address in a device's memory. Deliberately has no `operator*`, `operator->` or
/// `operator[]`: dereferencing device memory on the host is a crash (or silent garbage), so
/// the type makes it a compile error. Kernels and library calls (cuBLAS, cudaMemcpy) take the
/// raw address from `get()` at the boundary where device code begins.
/// @tparam T element type; `DevicePtr<const T>` is the read-only view.
template <class T>
class DevicePtr {
 public:
  using element_type = T;

  constexpr DevicePtr() noexcept = default;
  constexpr explicit DevicePtr(T* p) noexcept : p_(p) {}

  /// A mutable pointer converts to a read-only one, as `T*` converts to `const T*`.
  template <class U>
  requires std::same_as<const U, T>
  constexpr DevicePtr(DevicePtr<U> other) noexcept : p_(other.get()) {}

  /// The raw device address, for kernel arguments and CUDA/cuBLAS calls.
  constexpr T* get() const noexcept { return p_; }
  constexpr explicit operator bool() const noexcept { return p_ != nullptr; }

  constexpr DevicePtr operator+(std::ptrdiff_t n) const noexcept { return DevicePtr(p_ + n); }
  constexpr DevicePtr operator-(std::ptrdiff_t n) const noexcept { return DevicePtr(p_ - n); }
  constexpr std::ptrdiff_t operator-(DevicePtr other) const noexcept { return p_ - other.p_; }

  friend constexpr bool operator==(DevicePtr, DevicePtr) noexcept = default;

 private:
  T* p_ = nullptr;
};

/// The raw device address, for kernel arguments (the `raw_pointer(T*)` overload in
/// backend.hpp covers host memory, so backend-generic code calls `raw_pointer(b.data())`).
template <class T>
constexpr T* raw_pointer(DevicePtr<T> p) noexcept {
  return p.get();
}

}  // namespace baton
