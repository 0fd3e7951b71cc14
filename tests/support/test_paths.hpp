// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief Where a host test finds the folders of its build (the golden fixtures, a scratch
///        folder, the tokenizer test data, the demo model): from the environment ctest gives
///        every test (tests/CMakeLists.txt), not compiled in, so that a test's object file is
///        the same in every clone and build folder and the compiler cache shares it.
#pragma once

#include <cstdlib>
#include <stdexcept>
#include <string>

namespace baton::test {

/// The value of environment variable `var`; throws when it is unset (the test was started
/// outside ctest), naming it.
inline std::string test_path(const char* var) {
  const char* v = std::getenv(var);
  if (v == nullptr || *v == '\0')
    throw std::runtime_error(std::string(var) +
                             " is not set: run the test through ctest, which sets it");
  return v;
}

}  // namespace baton::test

#define BATON_GOLDEN_DIR ::baton::test::test_path("BATON_GOLDEN_DIR")
#define BATON_GOLDEN_JSON ::baton::test::test_path("BATON_GOLDEN_JSON")
#define BATON_TEST_TMP ::baton::test::test_path("BATON_TEST_TMP")
#define BATON_TOKENIZER_DATA ::baton::test::test_path("BATON_TOKENIZER_DATA")
#define BATON_DEMO_DIR ::baton::test::test_path("BATON_DEMO_DIR")
