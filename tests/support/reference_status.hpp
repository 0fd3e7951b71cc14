// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief The status file a reference-setup fixture writes ("ok", "skip: REASON",
/// "fail: REASON") read by the check programs that compare against its output.
#pragma once

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>

namespace baton::test {

/// True under CI=true, where nothing may skip (the references and the shared files are there).
inline bool on_ci() {
  const char* ci = std::getenv("CI");
  return ci != nullptr && std::string(ci) == "true";
}

/// Prints why a comparison cannot run and returns its exit code: 77 (ctest: Skipped), or 1
/// under CI=true.
inline int skip_or_fail(const std::string& why) {
  std::cout << (on_ci() ? "FAILED (CI=true: nothing may skip)" : "skipped") << ": " << why << "\n";
  return on_ci() ? 1 : 77;
}

/// The exit code the check must end with now (77: skipped; 1: failed), or nullopt when the
/// reference is there and the comparison should run. A missing status file means the
/// fixture did not run: a skip, except under CI=true where nothing may skip.
inline std::optional<int> reference_status_exit(const std::string& status_path,
                                                const std::string& what) {
  std::ifstream in(status_path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  std::string status = s.str();
  while (!status.empty() && (status.back() == '\n' || status.back() == ' ')) status.pop_back();
  if (status.empty())
    return skip_or_fail(what + " setup did not run (no status file " + status_path + ")");
  if (status.rfind("fail:", 0) == 0) {
    std::cout << "FAILED: " << what << ": " << status.substr(5) << "\n";
    return 1;
  }
  if (status != "ok") {
    std::cout << "skipped: " << (status.rfind("skip: ", 0) == 0 ? status.substr(6) : status)
              << "\n";
    return 77;
  }
  return std::nullopt;
}

}  // namespace baton::test
