// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// Core: storage-type conversions against hand-computed bit patterns, the error hierarchy, and
// host memory (alignment, huge-page advice).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <limits>
#include <string>
#include <utility>

#include "baton/backend/host.hpp"
#include "baton/core/dtype.hpp"
#include "baton/core/error.hpp"

using namespace baton;

TEST_CASE("bf16 widening is exact and narrowing rounds to nearest even") {
  CHECK(widen(bf16{0x3f80}) == 1.0f);
  CHECK(widen(bf16{0xc040}) == -3.0f);
  CHECK(to_bf16(1.0f).bits == 0x3f80);
  // 1 + 2^-8 is exactly halfway between bf16 1.0 and 1.0078125: ties go to the even one (1.0).
  CHECK(to_bf16(1.0f + 1.0f / 256).bits == 0x3f80);
  // 1 + 3*2^-8 is halfway between 0x3f81 and 0x3f82: even is 0x3f82.
  CHECK(to_bf16(1.0f + 3.0f / 256).bits == 0x3f82);
  CHECK(std::isnan(widen(to_bf16(std::numeric_limits<float>::quiet_NaN()))));
}

TEST_CASE("f16 conversions match hand-computed bit patterns") {
  CHECK(widen(f16{0x3c00}) == 1.0f);
  CHECK(widen(f16{0xc000}) == -2.0f);
  CHECK(widen(f16{0x7bff}) == 65504.0f);
  CHECK(widen(f16{0x0001}) == std::ldexp(1.0f, -24));  // smallest subnormal
  CHECK(widen(f16{0x03ff}) == std::ldexp(1023.0f, -24));
  CHECK(std::isinf(widen(f16{0x7c00})));
  CHECK(to_f16(1.0f).bits == 0x3c00);
  CHECK(to_f16(65504.0f).bits == 0x7bff);
  CHECK(to_f16(70000.0f).bits == 0x7c00);
  CHECK(to_f16(std::ldexp(1.0f, -24)).bits == 0x0001);
  CHECK(to_f16(std::ldexp(1.0f, -25)).bits == 0x0000);         // tie to even (zero)
  CHECK(to_f16(std::ldexp(3.0f, -25)).bits == 0x0002);         // 1.5 units: tie to even (2)
  CHECK(to_f16(1.0f + std::ldexp(1.0f, -11)).bits == 0x3c00);  // tie to even
  // Every f16 value survives widen -> narrow unchanged.
  for (unsigned b = 0; b < 0x7c00; ++b) {
    REQUIRE(to_f16(widen(f16{static_cast<std::uint16_t>(b)})).bits == b);
  }
}

TEST_CASE("errors derive from baton::error; the source location only where asked for") {
  try {
    BATON_FAIL(shape_error, "tensor ", "x", " has ", 3, " dims");
    FAIL("no throw");
  } catch (const error& e) {
    const std::string what = e.what();
    CHECK(what.find("tensor x has 3 dims") == 0);
    // A user's message must not carry the build machine's paths (issue #22); a debugging
    // build defines BATON_ERROR_SOURCE_LOCATION to get them.
#if defined(BATON_ERROR_SOURCE_LOCATION)
    CHECK(what.find("test_core.cpp") != std::string::npos);
#else
    CHECK(what == "tensor x has 3 dims");
#endif
  }
  CHECK_THROWS_AS(BATON_CHECK(1 + 1 == 3, usage_error, "math"), usage_error);
  CHECK_NOTHROW(BATON_CHECK(true, usage_error, "never"));
}

namespace {

/// The "THPeligible:" figure of the mapping that holds `p` (/proc/self/smaps), or -1 where
/// the file or the field is missing (not Linux, an old kernel).
int thp_eligible(const void* p) {
  std::ifstream smaps("/proc/self/smaps");
  const auto addr = reinterpret_cast<std::uintptr_t>(p);
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    unsigned long long lo = 0, hi = 0;
    if (std::sscanf(line.c_str(), "%llx-%llx ", &lo, &hi) == 2 && line.find(':') > line.find(' ')) {
      inside = lo <= addr && addr < hi;
    } else if (inside && line.rfind("THPeligible:", 0) == 0) {
      return std::stoi(line.substr(12));
    }
  }
  return -1;
}

std::string thp_mode() {
  std::ifstream f("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string s;
  std::getline(f, s);
  const auto open = s.find('['), close = s.find(']');
  return open == std::string::npos || close == std::string::npos
             ? ""
             : s.substr(open + 1, close - open - 1);
}

}  // namespace

TEST_CASE("host buffers: zeroed, cache-line aligned, large ones on 2 MiB advised huge pages") {
  HostBuffer<float> small(1000);
  CHECK(reinterpret_cast<std::uintptr_t>(small.data()) % host_memory::kCacheLine == 0);
  HostBuffer<float> large(3 * host_memory::kHugePage / sizeof(float) + 5);
  CHECK(reinterpret_cast<std::uintptr_t>(large.data()) % host_memory::kHugePage == 0);
  for (std::size_t i = 0; i < large.size(); i += 4093) CHECK(large[i] == 0.0f);
  CHECK(large[large.size() - 1] == 0.0f);
  // Under THP's "madvise" mode only advised memory is eligible: this fails if the advice is
  // not given. ("always" makes every mapping eligible, "never" none: nothing to tell there.)
  const int eligible = thp_eligible(large.data());
  if (thp_mode() == "madvise" && eligible >= 0) {
    CHECK(eligible == 1);
    CHECK(thp_eligible(small.data()) == 0);
  } else {
    MESSAGE("THP mode '", thp_mode(), "', THPeligible ", eligible,
            ": the advice is not observable");
  }
  HostBuffer<float> moved = std::move(large);  // released once, with its own alignment
  CHECK(moved.size() == 3 * host_memory::kHugePage / sizeof(float) + 5);
}
