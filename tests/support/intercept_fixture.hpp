// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// What the interceptor tests share: the relay fixture's model, a prefix and a request over its
// 64-id vocabulary, a two-slot stage shape, and ids as ints for the reference.
#pragma once

#include <cstdint>
#include <vector>

#include "support/constrained_reference.hpp"
#include "support/relay_fixture.hpp"

namespace baton::test {

inline const std::vector<std::int32_t> kInterceptPrefix = {3, 14, 15, 9, 26, 5};
inline const std::vector<std::int32_t> kInterceptRequest = {11, 12, 13, 30, 31};
inline constexpr KvShape kInterceptShape{.prefix_capacity = 16, .tail_capacity = 64, .slots = 2};

inline std::vector<int> as_int(const std::vector<std::int32_t>& v) { return {v.begin(), v.end()}; }

}  // namespace baton::test
