// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// The sampler's naive reference: the exact probabilities a request's options give a row of
// logits, in double precision, after each transform in the documented order (docs/sampling.md),
// by full sorts — nothing shared with kernels/sample.hpp but the option struct. And the
// chi-square critical value the distribution tests compare with.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "baton/model/sampling.hpp"

namespace baton::test {

/// The logits after logit_bias, then the penalties over `seen` (the generated tokens): the
/// repetition penalty divides a positive logit and multiplies a negative one, then presence
/// and frequency are subtracted (OpenAI's formula).
inline std::vector<double> penalized_logits(const std::vector<float>& logits,
                                            const SamplingOptions& o,
                                            const std::vector<kernels::SeenToken>& seen) {
  std::vector<double> l(logits.begin(), logits.end());
  for (const auto& b : o.logit_bias) l[static_cast<std::size_t>(b.id)] += b.bias;
  const auto& p = o.params;
  for (const auto& s : seen) {
    double& x = l[static_cast<std::size_t>(s.id)];
    x = x > 0 ? x / p.repeat_penalty : x * p.repeat_penalty;
    x -= s.count * static_cast<double>(p.frequency_penalty) + p.presence_penalty;
  }
  return l;
}

/// The naive reference: exact probabilities after every transform, in double, by full sorts.
inline std::vector<double> reference_probs(const std::vector<float>& logits,
                                           const SamplingOptions& o,
                                           const std::vector<kernels::SeenToken>& seen) {
  const int n = static_cast<int>(logits.size());
  std::vector<double> l = penalized_logits(logits, o, seen);
  const auto& p = o.params;
  std::vector<double> prob(static_cast<std::size_t>(n), 0.0);
  std::vector<int> order;
  for (int i = 0; i < n; ++i)
    if (std::isfinite(l[static_cast<std::size_t>(i)])) order.push_back(i);
  if (p.temperature == 0) {
    int best = order[0];
    for (int i : order)
      if (l[static_cast<std::size_t>(i)] > l[static_cast<std::size_t>(best)]) best = i;
    prob[static_cast<std::size_t>(best)] = 1;
    return prob;
  }
  std::vector<double> z(static_cast<std::size_t>(n));
  for (int i : order)
    z[static_cast<std::size_t>(i)] = l[static_cast<std::size_t>(i)] / p.temperature;
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return z[static_cast<std::size_t>(a)] > z[static_cast<std::size_t>(b)];
  });
  auto normalized = [&](std::size_t keep) {
    std::vector<double> q(keep);
    double sum = 0;
    for (std::size_t k = 0; k < keep; ++k)
      sum += q[k] =
          std::exp(z[static_cast<std::size_t>(order[k])] - z[static_cast<std::size_t>(order[0])]);
    for (double& x : q) x /= sum;
    return q;
  };
  std::size_t keep = order.size();
  if (p.top_k > 0) keep = std::min(keep, static_cast<std::size_t>(p.top_k));
  if (p.top_p < 1) {  // the smallest top set whose (renormalized) mass reaches top_p
    const std::vector<double> q = normalized(keep);
    double cum = 0;
    std::size_t k = 0;
    while (k < keep && cum < p.top_p) cum += q[k++];
    keep = std::max<std::size_t>(k, 1);
  }
  if (p.min_p > 0) {
    const std::vector<double> q = normalized(keep);
    std::size_t k = 0;
    while (k < keep && q[k] >= p.min_p * q[0]) ++k;
    keep = k;
  }
  const std::vector<double> q = normalized(keep);
  for (std::size_t k = 0; k < keep; ++k) prob[static_cast<std::size_t>(order[k])] = q[k];
  return prob;
}

/// The p = 1e-4 upper critical value of chi-square with `df` degrees of freedom
/// (Wilson–Hilferty; z = 3.7190 is the standard normal's 1 - 1e-4 quantile).
inline double chi2_critical(int df) {
  const double a = 2.0 / (9.0 * df);
  return df * std::pow(1 - a + 3.7190 * std::sqrt(a), 3);
}

/// The token the inverse CDF of `probs` (walked in id order) gives for uniform `u`, and how close
/// u lies to a boundary of it (a replay skips draws closer than rounding can decide).
struct InverseCdf {
  int id = -1;
  double margin = 0;
};
inline InverseCdf inverse_cdf(const std::vector<double>& probs, double u) {
  double cum = 0;
  InverseCdf r;
  for (std::size_t i = 0; i < probs.size(); ++i) {
    if (probs[i] == 0) continue;
    const double lo = cum;
    cum += probs[i];
    r.id = static_cast<int>(i);
    if (u < cum) {
      r.margin = std::min(u - lo, cum - u);
      return r;
    }
  }
  r.margin = 0;  // u past the (rounded) total: undecidable
  return r;
}

/// log-softmax of the logits after logit_bias and the penalties, over the temperature (1 when
/// it is 0): what a request's log-probabilities report.
inline std::vector<double> reference_logprobs(const std::vector<float>& logits,
                                              const SamplingOptions& o,
                                              const std::vector<kernels::SeenToken>& seen) {
  std::vector<double> l = penalized_logits(logits, o, seen);
  const auto& p = o.params;
  const double t = p.temperature > 0 ? p.temperature : 1.0;
  double m = -INFINITY, sum = 0;
  for (double& x : l) m = std::max(m, x /= t);
  for (double x : l) sum += std::exp(x - m);
  for (double& x : l) x -= m + std::log(sum);
  return l;
}

}  // namespace baton::test
