// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// Stage types for the compile-fail tests: each test names a Relay over some of them and must
// fail to compile with the static_assert message its ctest test expects.
#pragma once

#include "baton/kv/kv_buffer.hpp"
#include "baton/relay/relay.hpp"

namespace cf {
using namespace baton;
using Model = BaseModel<host, f32>;
using Slice = LoraSlice<8, host>;
using Cache = KvBuffer<layout::HeadMajor<f32, 64>, host>;
template <class... Segs>
using S = Stage<Model, Slice, Cache, wire::Input<Segs...>>;

/// Forces the class (and its static_asserts) to be instantiated without running anything.
template <class R>
constexpr std::size_t instantiate = sizeof(R);
}  // namespace cf
