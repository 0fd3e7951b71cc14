// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief What the host benchmarks share: the CPU's flags (printed beside every figure) and the
///        median of a run's timings.
#pragma once

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

namespace baton::bench {

/// The first "flags" line of /proc/cpuinfo, or "" where there is none.
inline std::string cpu_flags() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("flags", 0) == 0) return line.substr(line.find(':') + 2);
  return "";
}

/// The median (the upper one of an even count); 0 for none.
inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

}  // namespace baton::bench
