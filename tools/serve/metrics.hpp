// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief What `baton serve` counts, and GET /metrics in Prometheus' text format (version
///        0.0.4): requests by relay and status, tokens, latency and time-to-first-token
///        histograms, and each relay's queue depth and batch rows.
#pragma once

#include <array>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "served_relay.hpp"

namespace baton::serve {

/// A cumulative histogram over fixed bounds (seconds).
struct Histogram {
  static constexpr std::array<double, 14> kBounds = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
                                                     1,     2.5,  5,     10,   30,  60,   120};
  std::array<long long, kBounds.size()> counts{};  ///< observations <= each bound
  long long count = 0;
  double sum = 0;
  void observe(double seconds);
};

class Metrics {
 public:
  /// A request to `model` ("" when it named none that exists) ended with HTTP `status`.
  void request(const std::string& model, int status);
  /// A finished relay request: its latency, its time to the first answer text sent (< 0: not
  /// streamed), and its tokens.
  void finished(const std::string& model, double latency_s, double ttft_s, long long prompt,
                long long completion, long long generated);
  /// A streamed request whose client went away before its end (its rows were freed).
  void disconnected(const std::string& model);
  /// The whole exposition, with each relay's live counters.
  std::string render(const std::vector<const ServedRelay*>& relays) const;

 private:
  struct PerModel {
    Histogram latency, ttft;
    long long prompt = 0, completion = 0, generated = 0;
  };
  mutable std::mutex mutex_;
  std::map<std::pair<std::string, int>, long long> requests_;
  std::map<std::string, PerModel> models_;
  std::map<std::string, long long> disconnected_;
};

}  // namespace baton::serve
