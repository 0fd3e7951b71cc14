// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief The Backend concept: where memory lives and where kernels run, chosen as a type.
#pragma once

#include <concepts>
#include <cstddef>
#include <string_view>
#include <type_traits>

#include "baton/backend/device_ptr.hpp"

namespace baton {

/// The pointer type a backend's `buffer<T>::data()` returns: `T*` for host memory and
/// `DevicePtr<T>` for device memory, so device memory is never dereferenced on the host.
template <class T, bool IsDevice>
using backend_pointer_t = std::conditional_t<IsDevice, DevicePtr<T>, T*>;

/// A backend names itself, says whether its memory is device memory, and provides an owned
/// `buffer<T>` with data()/size(). Templates take the backend as a type (`KvBuffer<L, host>`),
/// never a virtual interface, so the host and CUDA paths compile to straight-line code.
template <class B>
concept Backend = requires {
  { B::name } -> std::convertible_to<std::string_view>;
  { B::is_device } -> std::convertible_to<bool>;
  typename B::template buffer<float>;
}
&&requires(typename B::template buffer<float>& b) {
  { b.data() } -> std::same_as<backend_pointer_t<float, B::is_device>>;
  { b.size() } -> std::same_as<std::size_t>;
};

/// The raw address behind a backend pointer, for handing to kernels. Host buffers return
/// plain pointers; device pointer wrappers provide their own overload (found by ADL).
template <class T>
constexpr T* raw_pointer(T* p) noexcept {
  return p;
}

}  // namespace baton
