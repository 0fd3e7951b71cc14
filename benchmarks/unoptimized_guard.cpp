// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// Linked into every benchmark of a build configured with BATON_OPTIMIZE_BENCHMARKS=OFF (CI's
// compile check, benchmarks/CMakeLists.txt): the program stops before main, since whatever it
// measured at -O0 would be wrong, and says where the real ones are built.
#include <cstdio>
#include <cstdlib>

namespace {

[[maybe_unused]] const bool refused = [] {
  std::fputs(
      "this benchmark was compiled unoptimized (BATON_OPTIMIZE_BENCHMARKS=OFF: a compile check) "
      "and does not measure; build it in the dev preset (benchmarks/README.md)\n",
      stderr);
  std::exit(2);
  return true;
}();

}  // namespace
