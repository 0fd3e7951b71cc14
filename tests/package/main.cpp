// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// Uses the installed headers the way a host-only user would; exits non-zero on any mismatch.
#include <baton/backend/host.hpp>
#include <baton/core/dtype.hpp>
#include <baton/core/error.hpp>
#if __has_include(<baton/baton.hpp>)
#include <baton/baton.hpp>  // the umbrella, once it exists, must work from an install as well
#endif

#include <array>
#include <cstdio>
#include <span>
#include <string>

namespace {
int failures = 0;
void expect(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "FAILED: %s\n", what);
    ++failures;
  }
}
}  // namespace

int main() {
  expect(baton::widen(baton::to_bf16(1.5f)) == 1.5f, "bf16 round trip of 1.5");
  expect(baton::to_bf16(-2.0f).bits == 0xc000, "bf16 bits of -2");
  expect(baton::widen(baton::to_f16(0.5f)) == 0.5f, "f16 round trip of 0.5");

  try {
    BATON_FAIL(baton::config_error, "hidden size ", 42, " is not a multiple of ", 8);
  } catch (const baton::error& e) {
    expect(std::string(e.what()).find("hidden size 42 is not a multiple of 8") == 0,
           "baton::error carries the streamed message");
  }

  const std::array<float, 3> src{1.0f, 2.0f, 3.0f};
  auto buf = baton::host::upload(std::span<const float>(src));
  std::array<float, 3> back{};
  baton::host::download<float>(buf.span(), back);
  expect(back == src, "host upload/download round trip");

  if (failures == 0) std::puts("baton package consumer: OK");
  return failures == 0 ? 0 : 1;
}
