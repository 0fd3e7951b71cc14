// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
#pragma once
// Whether this test program runs under AddressSanitizer, and the sizes its size-driven cases
// use there. A case that exists to catch a blow-up (quadratic parsing, a grammar that grows
// without bound) runs at full size in the plain builds, where its clock means something; under
// the sanitizers, many times slower and checking memory rather than time, the same code paths
// run at a tenth of the size (the sanitizer phase's budget in docs/ci.md).
#include <cstddef>

namespace baton::test {

#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif
#else
inline constexpr bool kSanitized = false;
#endif

/// `full` in plain builds, `full / divisor` (at least 1) under the sanitizers.
constexpr std::size_t sanitized_size(std::size_t full, std::size_t divisor = 10) {
  if (!kSanitized) return full;
  return full / divisor > 0 ? full / divisor : 1;
}

}  // namespace baton::test
