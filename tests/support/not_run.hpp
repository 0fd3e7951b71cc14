// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief What this machine cannot run inside a test that otherwise passes (kernels for an
///        instruction set the CPU lacks): said in the test's output, and, when
///        BATON_NOT_RUN_LOG names a file (.ci/run sets it), appended there as one line
///        "WHAT: WHY", which the CI summary lists as NOT RUN. A check left out in silence
///        would read as a pass.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>

#include <doctest/doctest.h>

namespace baton::test {

inline void not_run(const std::string& what, const std::string& why) {
  MESSAGE("NOT RUN: ", what, ": ", why);
  if (const char* log = std::getenv("BATON_NOT_RUN_LOG"); log != nullptr && *log != '\0') {
    // One short write in append mode: lines from tests running side by side do not interleave.
    if (std::FILE* f = std::fopen(log, "a")) {
      const std::string line = what + ": " + why + "\n";
      std::fwrite(line.data(), 1, line.size(), f);
      std::fclose(f);
    }
  }
}

}  // namespace baton::test
