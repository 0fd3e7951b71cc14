// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief The Backend concept: where memory lives and where kernels run, chosen as a type.
#pragma once

#include <concepts>
#include <cstddef>
#include <span>
#include <string_view>
#include <type_traits>

#include "baton/backend/device_ptr.hpp"

namespace baton {

/// The pointer type a backend's `buffer<T>::data()` returns: `T*` for host memory and
/// `DevicePtr<T>` for device memory, so device memory is never dereferenced on the host.
template <class T, bool IsDevice>
using backend_pointer_t = std::conditional_t<IsDevice, DevicePtr<T>, T*>;

/// A backend names itself, says whether its memory is device memory, and provides an owned
/// `buffer<T>` with data()/size(), plus the two copies across the host boundary. This is
/// everything BaseModel, LoraSlice, KvBuffer and Workspace ask of a backend:
///   - `buffer<T>`: empty by default, `buffer<T>(n)` owns n zeroed elements, movable;
///   - `B::upload(std::span<const T>)` -> buffer<T>: weights and adapters at load;
///   - `B::download(const buffer<T>&, std::span<T>)`: results back to the host.
/// Templates take the backend as a type (`KvBuffer<L, host>`), never a virtual interface, so
/// the host and CUDA paths compile to straight-line code. The forward's operations are a
/// separate customization (model/forward_ops.hpp), so a backend can hold buffers before it
/// can run a model.
template <class B>
concept Backend = requires {
  { B::name } -> std::convertible_to<std::string_view>;
  { B::is_device } -> std::convertible_to<bool>;
  typename B::template buffer<float>;
}
&&std::default_initializable<typename B::template buffer<float>>&&
    std::movable<typename B::template buffer<float>>&&
        std::constructible_from<typename B::template buffer<float>, std::size_t>&& requires(
            typename B::template buffer<float>& b, const typename B::template buffer<float>& cb,
            std::span<const float> src, std::span<float> dst) {
  { b.data() } -> std::same_as<backend_pointer_t<float, B::is_device>>;
  { b.size() } -> std::same_as<std::size_t>;
  { B::upload(src) } -> std::same_as<typename B::template buffer<float>>;
  B::download(cb, dst);
  B::copy_within(b, std::size_t{}, std::size_t{}, std::size_t{});
};

/// The raw address behind a backend pointer, for handing to kernels. Host buffers return
/// plain pointers; device pointer wrappers provide their own overload (found by ADL).
template <class T>
constexpr T* raw_pointer(T* p) noexcept {
  return p;
}

}  // namespace baton
