// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// The one doctest main every host test program links. Several test files share a program
// (tests/CMakeLists.txt), and ctest runs each file's cases through a --source-file filter; a
// filter that matches no test case would pass having checked nothing, so that is a failure.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>

namespace {

unsigned g_cases_run = 0;  // test cases that passed the filters in this process's one run

struct CountCases : doctest::IReporter {
  explicit CountCases(const doctest::ContextOptions&) {}
  void report_query(const doctest::QueryData&) override {}
  void test_run_start() override {}
  void test_run_end(const doctest::TestRunStats& s) override {
    g_cases_run = s.numTestCasesPassingFilters;
  }
  void test_case_start(const doctest::TestCaseData&) override {}
  void test_case_reenter(const doctest::TestCaseData&) override {}
  void test_case_end(const doctest::CurrentTestCaseStats&) override {}
  void test_case_exception(const doctest::TestCaseException&) override {}
  void subcase_start(const doctest::SubcaseSignature&) override {}
  void subcase_end() override {}
  void log_assert(const doctest::AssertData&) override {}
  void log_message(const doctest::MessageData&) override {}
  void test_case_skipped(const doctest::TestCaseData&) override {}
};

}  // namespace

DOCTEST_REGISTER_LISTENER("baton_count_cases", 1, CountCases);

int main(int argc, char** argv) {
  doctest::Context context(argc, argv);
  const int result = context.run();
  if (context.shouldExit()) return result;  // --help, --list-test-cases, ...
  if (result == 0 && g_cases_run == 0) {
    std::fputs("FAILED: no test case matched the filters; nothing was checked\n", stderr);
    return 1;
  }
  return result;
}
