// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// How far one model's next-token distributions are from a reference model's over the same
// positions: KL(P_ref || P) per position (natural log, from log-softmax in double) and whether
// the top token agrees. The quantized-weights test and benchmarks/quant_accuracy.cpp use it;
// benchmarks/llama_cpp/quant_accuracy.py computes llama.cpp's side with the same formulas.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <span>
#include <vector>

namespace baton::test {

struct DistributionGap {
  int positions = 0;
  double kl_mean = 0, kl_median = 0, kl_p99 = 0, kl_max = 0;
  double top1 = 0;  ///< fraction of positions whose argmax equals the reference's
};

class LogitComparison {
 public:
  /// One position: the reference's logits row and the compared model's.
  void add(std::span<const float> ref, std::span<const float> got) {
    const std::vector<double> lp = log_softmax(ref), lq = log_softmax(got);
    double kl = 0.0;
    for (std::size_t v = 0; v < lp.size(); ++v) kl += std::exp(lp[v]) * (lp[v] - lq[v]);
    kl_.push_back(std::max(kl, 0.0));  // rounding may leave -1e-17 where they are equal
    const auto top = [](std::span<const float> r) {
      return std::max_element(r.begin(), r.end()) - r.begin();
    };
    agree_ += top(ref) == top(got);
  }

  DistributionGap summary() const {
    DistributionGap g;
    g.positions = static_cast<int>(kl_.size());
    if (kl_.empty()) return g;
    std::vector<double> s = kl_;
    std::sort(s.begin(), s.end());
    for (double v : s) g.kl_mean += v;
    g.kl_mean /= static_cast<double>(s.size());
    g.kl_median = s[s.size() / 2];
    g.kl_p99 = s[std::min(s.size() - 1, s.size() * 99 / 100)];
    g.kl_max = s.back();
    g.top1 = static_cast<double>(agree_) / static_cast<double>(s.size());
    return g;
  }

 private:
  static std::vector<double> log_softmax(std::span<const float> row) {
    double m = -INFINITY;
    for (float v : row) m = std::max(m, static_cast<double>(v));
    double z = 0.0;
    for (float v : row) z += std::exp(static_cast<double>(v) - m);
    const double lz = m + std::log(z);
    std::vector<double> out(row.size());
    for (std::size_t i = 0; i < row.size(); ++i) out[i] = static_cast<double>(row[i]) - lz;
    return out;
  }

  std::vector<double> kl_;
  long agree_ = 0;
};

}  // namespace baton::test
