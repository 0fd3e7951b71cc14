// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// The sampler's math (kernels/sample.hpp, kernels/philox.hpp, model/sampling.hpp) against
// references written here: Philox4x32-10 against Random123's published known-answer vectors;
// the selections against a full sort; and each configuration's distribution against exact
// probabilities computed naively in double precision after each transform in the documented
// order (logit_bias, repetition penalty, presence/frequency penalties, temperature, top-k,
// top-p, min-p), by a chi-square test over 20,000 seeded draws per seed (fixed seeds, so the
// test is deterministic; passes when the statistic is below the p = 1e-4 critical value) plus
// an exact check that no token of probability 0 is ever drawn. Log-probabilities against a
// naive double log-softmax within 1e-4.
//
// Mutation checks (2026-12-06), each alone, this program rebuilt:
//   top-p keeping one token too few (truncate drops the last of top-p's set)  -> 10 chi2 fail
//   temperature applied after top-p (the cut's weights from unscaled logits) -> probability-0
//                                                                               tokens drawn
//   repetition penalty multiplying positive logits instead of dividing       -> chi2 and
//                                                                               logprobs fail
//   min-p filtering before top-p (top-p's mass without min-p's drops)        -> "top-p 0.7,
//                                                                               min-p 0.2" fails
//   the draw's walk taking acc >= target instead of >                        -> passes: it moves
//                                                                               only u on a
//                                                                               boundary
// The host's AVX2 passes (backend/host_sample.hpp) against the scalar ones (later, same day):
//   the list's bound taken as z > floor instead of >=               -> the kept sets differ (ties)
//   the argmax returning the last of the tied maxima                 -> the argmax differs
//   the block's finite count one too high past 8 entries            -> top-p's bound, the lists
//                                                                      differ
// The AVX-512 passes and the log-probabilities' reuse (2026-12-07):
//   each vector's high half added to the lanes before its low half  -> the totals differ
//   the band's "at least high" taken as > (AVX-512, and AVX2)       -> caught only once the band
//                                                                      gather is checked with
//                                                                      bounds at the row's own
//                                                                      (tied) weights
//   AVX2's least weight taking > floor instead of >=                -> the least weights differ
//   top-p over top-k handing its renormalized sum to the log-probs -> the reuse check fails
#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "baton/backend/host_sample_avx512.hpp"
#include "baton/kernels/philox.hpp"
#include "baton/kernels/sample.hpp"
#include "baton/model/sampling.hpp"
#include "reference/sampling_reference.hpp"
#include "support/expect_error.hpp"
#include "support/not_run.hpp"
#include "support/sanitized.hpp"

using namespace baton;

namespace sampling_test {

struct Case {
  const char* name;
  SamplingOptions options;
  std::vector<kernels::SeenToken> seen;
};

// Twelve logits with a spread of gaps, a tie (ids 4 and 5) and a masked id (-Inf, as a
// grammar or token-set mask leaves it).
const std::vector<float> kLogits{2.0f,      1.5f, 0.3f,  -0.7f, 1.1f,  1.1f,
                                 -INFINITY, 0.9f, -1.6f, 2.4f,  -0.2f, 0.6f};

std::vector<Case> cases() {
  auto with = [](float t, int k, float tp, float mp) {
    SamplingOptions o;
    o.params.temperature = t;
    o.params.top_k = k;
    o.params.top_p = tp;
    o.params.min_p = mp;
    o.stream = 7;
    return o;
  };
  std::vector<Case> c;
  c.push_back({"temperature 1", with(1.0f, 0, 1.0f, 0.0f), {}});
  c.push_back({"temperature 0.6", with(0.6f, 0, 1.0f, 0.0f), {}});
  c.push_back({"temperature 1.7, top-k 5", with(1.7f, 5, 1.0f, 0.0f), {}});
  c.push_back({"top-p 0.8", with(1.0f, 0, 0.8f, 0.0f), {}});
  c.push_back({"temperature 2, top-p 0.6", with(2.0f, 0, 0.6f, 0.0f), {}});
  c.push_back({"min-p 0.2", with(1.0f, 0, 1.0f, 0.2f), {}});
  c.push_back({"top-k 6, top-p 0.9, min-p 0.1", with(1.3f, 6, 0.9f, 0.1f), {}});
  // min-p after top-p: top-p's mass counts the tokens min-p will drop (the order matters here).
  c.push_back({"top-p 0.7, min-p 0.2", with(1.0f, 0, 0.7f, 0.2f), {}});
  Case pen{"penalties and logit_bias", with(0.9f, 0, 1.0f, 0.0f), {{9, 3}, {0, 1}, {3, 2}}};
  pen.options.params.repeat_penalty = 1.8f;
  pen.options.params.presence_penalty = 0.4f;
  pen.options.params.frequency_penalty = 0.25f;
  pen.options.logit_bias = {{2, 1.5f}, {11, -0.8f}};
  c.push_back(pen);
  Case all{"everything", with(0.8f, 8, 0.85f, 0.05f), {{9, 2}, {4, 1}}};
  all.options.params.repeat_penalty = 1.3f;
  all.options.params.frequency_penalty = 0.5f;
  all.options.logit_bias = {{1, 0.7f}};
  c.push_back(all);
  return c;
}

}  // namespace sampling_test

using namespace sampling_test;
using test::chi2_critical;
using test::reference_probs;

TEST_CASE("Philox4x32-10 matches Random123's known-answer vectors") {
  // Random123 tests/kat_vectors, the three "philox4x32 10" lines: counter, key -> output.
  struct Kat {
    kernels::Philox4x32Block ctr;
    std::uint32_t k0, k1;
    std::uint32_t want[4];
  };
  const Kat kats[] = {
      {{{0, 0, 0, 0}}, 0, 0, {0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}},
      {{{0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu}},
       0xffffffffu,
       0xffffffffu,
       {0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu}},
      {{{0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}},
       0xa4093822u,
       0x299f31d0u,
       {0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}},
  };
  for (const Kat& k : kats) {
    const kernels::Philox4x32Block out = kernels::philox4x32_10(k.ctr, k.k0, k.k1);
    for (int w = 0; w < 4; ++w) CHECK(out.w[w] == k.want[w]);
  }
  // The uniform: in [0, 1), and a function of (seed, stream, step) alone.
  const double u = kernels::sample_uniform(42, 3, 9);
  CHECK(u >= 0.0);
  CHECK(u < 1.0);
  CHECK(kernels::sample_uniform(42, 3, 9) == u);
  CHECK(kernels::sample_uniform(43, 3, 9) != u);
  CHECK(kernels::sample_uniform(42, 4, 9) != u);
  CHECK(kernels::sample_uniform(42, 3, 10) != u);
}

TEST_CASE("each run of a stream draws afresh: the run word changes the draws, nothing else does") {
  // A looping relay stage samples once per cycle on the same stream; cycle c draws with run
  // c - 1 (docs/sampling.md). The same run replays; another run gives other tokens.
  const int vocab = static_cast<int>(kLogits.size());
  SamplingOptions o;
  o.params.temperature = 1.5f;
  o.seed = 99;
  const auto draws = [&](std::uint32_t run) {
    SamplingOptions r = o;
    r.run = run;
    Sampler sampler(r, vocab, 16);
    std::vector<std::int32_t> ids;
    for (int step = 0; step < 200; ++step) {
      std::vector<float> row = kLogits;
      ids.push_back(sampler.choose(row, step).id);
    }
    return ids;
  };
  const auto first = draws(0), again = draws(0), second = draws(1);
  CHECK(first == again);
  int differ = 0;
  for (std::size_t k = 0; k < first.size(); ++k) differ += first[k] != second[k];
  CHECK(differ >= 60);
  CHECK(kernels::sample_uniform(42, 3, 9, 0) == kernels::sample_uniform(42, 3, 9));
  CHECK(kernels::sample_uniform(42, 3, 9, 1) != kernels::sample_uniform(42, 3, 9));
}

TEST_CASE("the selections cut exactly where a full sort does, ties by id") {
  std::mt19937 rng(5);
  for (int trial = 0; trial < 400; ++trial) {
    const int n = 1 + static_cast<int>(rng() % 60);
    std::vector<kernels::Candidate> a(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) {
      const float z = static_cast<float>(rng() % 9) * 0.5f;  // many ties
      a[static_cast<std::size_t>(i)] = {z, std::exp(z), i};
    }
    std::vector<kernels::Candidate> sorted = a;
    std::sort(sorted.begin(), sorted.end(), kernels::ranks_before);
    auto same_set = [&](std::vector<kernels::Candidate> got, int k) {
      std::sort(got.begin(), got.begin() + k, kernels::ranks_before);
      for (int i = 0; i < k; ++i)
        if (got[static_cast<std::size_t>(i)].id != sorted[static_cast<std::size_t>(i)].id)
          return false;
      return true;
    };
    if (n > 1) {
      const int k = 1 + static_cast<int>(rng() % static_cast<unsigned>(n - 1));
      std::vector<kernels::Candidate> got = a;
      kernels::select_top_k(got.data(), n, k);
      CHECK(same_set(got, k));
    }
    double total = 0;
    for (const auto& c : a) total += c.w;
    const double target = total * static_cast<double>(rng() % 1000) / 1000.0;
    std::size_t want = 0;
    double cum = 0;
    while (want < sorted.size() && cum < target) cum += sorted[want++].w;
    want = std::max<std::size_t>(want, 1);
    std::vector<kernels::Candidate> got = a;
    const int l = kernels::select_top_mass(got.data(), n, target);
    CHECK(l == static_cast<int>(want));
    CHECK(same_set(got, l));
  }
}

TEST_CASE("on large rows the bounds keep exactly a full sort's set, and the draw is its own") {
  // truncate() drops tokens by bounds before its selections (top-k's block maxima, top-p's
  // (1 - p) / n, min-p); the reference sorts every finite token and cuts by the definitions.
  std::mt19937 rng(20261206);
  std::normal_distribution<float> gauss(0.0f, 1.0f);
  int checked = 0, listed_sets = 0, dense_sets = 0;
  // Under the sanitizers (memory, not results, and 20 times slower), every fifth configuration:
  // 5 does not divide a row's 96, so each row takes another fifth of the options, and every
  // shape and size still takes the listed and the dense paths.
  const std::size_t stride = test::kSanitized ? 5 : 1;
  std::size_t configuration = 0;
  for (const int n : {1000, 40000}) {
    for (int shape = 0; shape < 6; ++shape) {
      std::vector<float> row(static_cast<std::size_t>(n));
      std::uniform_real_distribution<float> faint(0.01f, 2.0f);
      for (int i = 0; i < n; ++i) {
        float l = gauss(rng) * (shape == 1 ? 3.0f : 0.7f);
        if (shape == 2 && i % 97 == 5) l += 9.0f;         // a few peaks
        if (shape == 3) l = std::round(l * 2.0f) / 2.0f;  // many ties
        // One token over a long faint tail holding about 1e-3 of the mass: top-p near 1 cuts
        // deep in the tail, where top-p's bound drops tokens.
        if (shape == 4)
          l = i == n / 2 ? 0.0f : std::log(faint(rng) * 1e-3f / static_cast<float>(n));
        // Tokens below exp's range (weight 0) that are not masked: kept when nothing cuts,
        // counted, never drawn.
        if (shape == 5 && i % 13 == 7) l = -120.0f;
        if (i % 11 == 3) l = -INFINITY;  // masked
        row[static_cast<std::size_t>(i)] = l;
      }
      for (const int top_k : {0, 1, 40, 900})
        for (const float top_p : {1.0f, 0.9f, 0.5f, 0.999f})
          for (const float min_p : {0.0f, 0.05f, 0.5f})
            for (const float t : {0.7f, 1.3f}) {
              if (configuration++ % stride != 0) continue;
              const kernels::SampleParams p{
                  .temperature = t, .top_k = top_k, .top_p = top_p, .min_p = min_p};
              CAPTURE(n);
              CAPTURE(shape);
              CAPTURE(top_k);
              CAPTURE(top_p);
              CAPTURE(min_p);
              CAPTURE(t);
              // The reference: every finite token, sorted by rank.
              float m = -INFINITY;
              for (const float l : row) m = std::max(m, kernels::scaled_logit(l, t));
              std::vector<kernels::Candidate> all;
              double total = 0;
              for (int i = 0; i < n; ++i) {
                const float z = kernels::scaled_logit(row[static_cast<std::size_t>(i)], t);
                if (z == -INFINITY) continue;
                all.push_back({z, std::exp(z - m), i});
                total += all.back().w;
              }
              std::sort(all.begin(), all.end(), kernels::ranks_before);
              std::size_t keep = all.size();
              if (top_k > 0 && static_cast<std::size_t>(top_k) < keep) {
                keep = static_cast<std::size_t>(top_k);
                total = 0;
                for (std::size_t i = 0; i < keep; ++i) total += all[i].w;
              }
              if (top_p < 1.0f && keep > 1) {
                const double target = static_cast<double>(top_p) * total;
                std::size_t l = 0;
                double cum = 0;
                while (l < keep && cum < target) cum += all[l++].w;
                keep = std::max<std::size_t>(l, 1);
              }
              std::vector<kernels::Candidate> kept_set;
              for (std::size_t i = 0; i < keep; ++i)
                if (min_p <= 0.0f || all[i].w >= min_p) kept_set.push_back(all[i]);
              std::vector<kernels::Candidate> scratch(
                  static_cast<std::size_t>(kernels::sample_scratch_size(n)));
              std::vector<kernels::Candidate> plain_scratch(scratch.size());
              std::vector<float> weights(static_cast<std::size_t>(n));
              std::vector<double> bins(kernels::kSampleBins);
              // Without weights and bins (every set listed, top-p by quickselect alone), then
              // with them (a long set dense, top-p by bands of bins): the same set.
              const kernels::KeptSet plain =
                  kernels::truncate(row.data(), n, p, {plain_scratch.data()});
              const kernels::KeptSet got = kernels::truncate(
                  row.data(), n, p, {scratch.data(), weights.data(), bins.data()});
              CHECK(plain.list != nullptr);
              REQUIRE(plain.count == static_cast<int>(kept_set.size()));
              // The bound is the worst kept token.
              CHECK(plain.cut.id == kept_set.back().id);
              if (got.list) {
                CHECK(got.count == plain.count);
                CHECK(got.cut.id == plain.cut.id);
              }
              CHECK(got.listed <= n);
              ++(got.list ? listed_sets : dense_sets);
              // The draw: a listed set's is the inverse CDF of the kept set's weights in id
              // order; a dense set's, by rejection, a kept token (its distribution: the
              // chi-square test on dense rows below).
              std::sort(kept_set.begin(), kept_set.end(),
                        [](const auto& a, const auto& b) { return a.id < b.id; });
              double kept_mass = 0;
              for (const auto& c : kept_set) kept_mass += c.w;
              auto is_kept = [&](std::int32_t id) {
                return std::binary_search(kept_set.begin(), kept_set.end(),
                                          kernels::Candidate{0.0f, 0.0f, id},
                                          [](const auto& a, const auto& b) { return a.id < b.id; });
              };
              for (const double u : {0.0, 0.3, 0.77, 0.999999}) {
                double acc = 0;
                std::int32_t want = kept_set.back().id;
                for (const auto& c : kept_set) {
                  acc += c.w;
                  if (acc > u * kept_mass) {
                    want = c.id;
                    break;
                  }
                }
                CHECK(kernels::draw(plain, u) == want);
                if (got.list) CHECK(kernels::draw(got, u) == want);
              }
              if (!got.list) {
                // A round's masses: each block's of the tokens ranked before a kept token, as
                // the reference sums them (all ranked before it in the sorted order).
                std::vector<kernels::Candidate> ranked = all;
                double before = 0;
                for (std::size_t r = 0; r < ranked.size(); r += ranked.size() / 7 + 1) {
                  if (r > 0)
                    for (std::size_t q = r - (ranked.size() / 7 + 1); q < r; ++q)
                      before += ranked[q].w;
                  const kernels::Candidate& at = ranked[r];
                  std::vector<double> mass(static_cast<std::size_t>(kernels::kMaxDrawBlocks));
                  kernels::RowPasses::mass_before(
                      row.data(), n, t, weights.data(),
                      {at.z, weights[static_cast<std::size_t>(at.id)], at.id}, got.block,
                      mass.data());
                  double sum = 0;
                  for (int b = 0; b < (n + got.block - 1) / got.block; ++b)
                    sum += mass[static_cast<std::size_t>(b)];
                  CHECK(std::abs(sum - before) <= 1e-6 * total);
                }
                int outside = 0;
                for (int k = 0; k < (test::kSanitized ? 16 : 64); ++k)
                  outside += !is_kept(kernels::draw(got, kernels::sample_uniform(7, 0, k)));
                CHECK(outside == 0);
              }
              ++checked;
            }
    }
  }
  CHECK(checked == static_cast<int>((2 * 6 * 4 * 4 * 3 * 2 + stride - 1) / stride));
  // Both forms ran: short sets listed, long ones (40,000 ids, no top-k) dense.
  CHECK(listed_sets > 0);
  CHECK(dense_sets > 0);
}

TEST_CASE("sample_exp: within 2 ulp of exp on [-87.3, 0], 0 below, 1 at 0") {
  // The sampler's weights (kernels::sample_exp, the steps every loop repeats) against exp in
  // double: every 1e-4 over [-87.3, 0] and the edges.
  double worst = 0.0;
  for (int k = 0; k <= 873000; ++k) {
    const float x = -static_cast<float>(k) * 1e-4f;
    const double want = std::exp(static_cast<double>(x));
    const float got = kernels::sample_exp(x);
    const double ulp = std::ldexp(1.0, std::ilogb(want) - 23);
    worst = std::max(worst, std::abs(static_cast<double>(got) - want) / ulp);
  }
  MESSAGE("sample_exp: worst error " << worst << " ulp");
  CHECK(worst <= 2.0);
  CHECK(kernels::sample_exp(0.0f) == 1.0f);
  CHECK(kernels::sample_exp(-0.0f) == 1.0f);
  CHECK(kernels::sample_exp(-87.31f) == 0.0f);
  CHECK(kernels::sample_exp(-INFINITY) == 0.0f);
  CHECK(kernels::sample_exp(NAN) == 0.0f);
  for (float x = -0.35f; x <= 0.0f; x += 1e-3f) CHECK(kernels::sample_exp(x) <= 1.0f);
}

/// Two log-probability results (the token's, and `count` alternatives) equal bit for bit.
void check_same_logprobs(float lp_got, const kernels::TopLogprob* got, int count_got, float lp_want,
                         const kernels::TopLogprob* want, int count_want) {
  REQUIRE(count_got == count_want);
  CHECK(std::bit_cast<std::uint32_t>(lp_got) == std::bit_cast<std::uint32_t>(lp_want));
  for (int k = 0; k < count_want; ++k) {
    CHECK(got[k].id == want[k].id);
    CHECK(std::bit_cast<std::uint32_t>(got[k].logprob) ==
          std::bit_cast<std::uint32_t>(want[k].logprob));
  }
}

// The host's vector passes (backend/host_sample.hpp, host_sample_avx512.hpp) against
// kernels::RowPasses: the argmax, every field of the kept set and its list, and the token drawn,
// on rows with masks, ties, signed zeros, peaks, NaN and +Inf, at lengths around the vector
// widths, the 32 sum lanes and the chunks of 256 entries.
template <class Vec>
void check_vector_passes() {
  std::mt19937 rng(7);
  std::normal_distribution<float> gauss(0.0f, 1.0f);
  int rows = 0, dense = 0;
  for (const int n : {1, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 255, 256, 257, 1000, 32001}) {
    for (int shape = 0; shape < 7; ++shape) {
      std::vector<float> row(static_cast<std::size_t>(n));
      for (int i = 0; i < n; ++i) {
        float l = gauss(rng) * 2.0f;
        if (shape == 1) l = std::round(l);                 // ties
        if (shape == 2) l = (i % 3 == 0) ? -0.0f : 0.0f;   // signed zeros, all tied
        if (shape == 3 && i % 5 != 1) l = -INFINITY;       // mostly masked
        if (shape == 4) l = -INFINITY;                     // all masked
        if (shape == 5 && i == n / 2) l = NAN;             // a NaN
        if (shape == 6 && i == (n * 2) / 3) l = INFINITY;  // +Inf
        row[static_cast<std::size_t>(i)] = l;
      }
      CAPTURE(n);
      CAPTURE(shape);
      CHECK(Vec::argmax(row.data(), n) == kernels::argmax(row.data(), n));
      for (int b = 0; b < 3; ++b) {
        const int begin = n * b / 3, end = n * (b + 1) / 3;
        const kernels::BlockScan want = kernels::RowPasses::block(row.data(), begin, end);
        const kernels::BlockScan got = Vec::block(row.data(), begin, end);
        CHECK(got.bad == want.bad);
        if (!want.bad) CHECK(got.max == want.max);
      }
      std::vector<kernels::Candidate> s1(static_cast<std::size_t>(kernels::sample_scratch_size(n)));
      std::vector<kernels::Candidate> s2(s1.size());
      std::vector<float> w1(static_cast<std::size_t>(n)), w2(w1.size());
      std::vector<double> b1(kernels::kSampleBins), b2(kernels::kSampleBins);
      for (const int top_k : {0, 1, 5, 40})
        for (const float top_p : {1.0f, 0.9f})
          for (const float min_p : {0.0f, 0.05f})
            for (const float t : {0.7f, 1.3f}) {
              const kernels::SampleParams p{
                  .temperature = t, .top_k = top_k, .top_p = top_p, .min_p = min_p};
              const kernels::KeptSet want =
                  kernels::truncate(row.data(), n, p, {s1.data(), w1.data(), b1.data()});
              const kernels::KeptSet got =
                  kernels::truncate<Vec>(row.data(), n, p, {s2.data(), w2.data(), b2.data()});
              REQUIRE(got.count == want.count);
              REQUIRE(got.listed == want.listed);
              REQUIRE((got.list == nullptr) == (want.list == nullptr));
              if (want.count == 0) continue;
              if (!want.list) {  // dense: the same weights, first round's masses and target
                ++dense;
                CHECK(std::memcmp(w1.data(), w2.data(), w1.size() * sizeof(float)) == 0);
                const int blocks = (n + want.block - 1) / want.block;
                CHECK(std::memcmp(want.block_mass, got.block_mass,
                                  static_cast<std::size_t>(blocks) * sizeof(double)) == 0);
                CHECK(std::bit_cast<std::uint64_t>(got.top_mass) ==
                      std::bit_cast<std::uint64_t>(want.top_mass));
              }
              CHECK(got.cut.id == want.cut.id);
              CHECK(got.max_z == want.max_z);
              CHECK(std::bit_cast<std::uint64_t>(got.row_weight) ==
                    std::bit_cast<std::uint64_t>(want.row_weight));
              bool same_list = true;
              for (int i = 0; i < want.listed; ++i)
                same_list = same_list && got.list[i].id == want.list[i].id &&
                            got.list[i].z == want.list[i].z && got.list[i].w == want.list[i].w;
              CHECK(same_list);
              // Sixteen uniforms: a dense draw past top-p's mass takes further rounds.
              bool same_draws = true;
              for (std::uint32_t k = 0; k < 16; ++k) {
                const double u = k == 0 ? 0.0 : kernels::sample_uniform(11, 0, k);
                same_draws = same_draws && kernels::draw<Vec>(got, u) == kernels::draw(want, u);
              }
              CHECK(same_draws);
            }
      // top-p's pass alone: the same weights, list and total, bit for bit (the total's lanes).
      const kernels::BlockScan all = kernels::RowPasses::block(row.data(), 0, n);
      if (!all.bad && all.max != -INFINITY) {
        for (const float t : {0.7f, 1.3f}) {
          double total_want = 0.0, total_got = 0.0;
          const float m = kernels::scaled_logit(all.max, t);
          const int block = kernels::draw_block_size(n), blocks = (n + block - 1) / block;
          std::vector<double> mass_want(static_cast<std::size_t>(blocks), -1.0),
              mass_got(mass_want.size(), -2.0);
          const int c_want =
              kernels::RowPasses::weigh(row.data(), n, t, m, 1e-3f, n, s1.data(), w1.data(),
                                        &total_want, mass_want.data(), block, nullptr);
          const int c_got = Vec::weigh(row.data(), n, t, m, 1e-3f, n, s2.data(), w2.data(),
                                       &total_got, mass_got.data(), block, nullptr);
          CHECK(std::memcmp(w1.data(), w2.data(), w1.size() * sizeof(float)) == 0);
          REQUIRE(c_got == c_want);
          CHECK(std::bit_cast<std::uint64_t>(total_got) ==
                std::bit_cast<std::uint64_t>(total_want));
          CHECK(std::memcmp(mass_want.data(), mass_got.data(), mass_want.size() * sizeof(double)) ==
                0);
          bool same = true;
          for (int i = 0; i < c_want; ++i)
            same = same &&
                   s1[static_cast<std::size_t>(i)].id == s2[static_cast<std::size_t>(i)].id &&
                   std::bit_cast<std::uint32_t>(s1[static_cast<std::size_t>(i)].w) ==
                       std::bit_cast<std::uint32_t>(s2[static_cast<std::size_t>(i)].w);
          CHECK(same);
          // A dense draw's round: each block's mass before bounds at tokens of the row itself,
          // so that tied weights and logits (the rounded rows, the signed zeros) sit exactly on
          // them, and before a floor at one of its weights: the same masses, bit for bit.
          for (const int at : {n / 3, n / 2, n - 1}) {
            const float w_at = w1[static_cast<std::size_t>(at)];
            if (!(w_at > 0.0f)) continue;
            const kernels::Candidate bounds[] = {
                {kernels::scaled_logit(row[static_cast<std::size_t>(at)], t), w_at, at},
                {INFINITY, std::nextafter(w_at, 0.0f), 0}};
            for (const kernels::Candidate& bound : bounds) {
              std::fill(mass_want.begin(), mass_want.end(), -1.0);
              std::fill(mass_got.begin(), mass_got.end(), -2.0);
              kernels::RowPasses::mass_before(row.data(), n, t, w1.data(), bound, block,
                                              mass_want.data());
              Vec::mass_before(row.data(), n, t, w1.data(), bound, block, mass_got.data());
              CHECK(std::memcmp(mass_want.data(), mass_got.data(),
                                mass_want.size() * sizeof(double)) == 0);
            }
          }
          // And the log-probabilities: the same sum, list and values, bit for bit.
          const std::int32_t chosen = kernels::argmax(row.data(), n);
          for (const int top_n : {0, 5, 20}) {
            kernels::TopLogprob top_want[kernels::kMaxTopLogprobs],
                top_got[kernels::kMaxTopLogprobs];
            float lp_want = 0.0f, lp_got = 0.0f;
            const int k_want =
                kernels::log_probs(row.data(), n, t, chosen, top_n, &lp_want, top_want);
            const int k_got =
                kernels::log_probs<Vec>(row.data(), n, t, chosen, top_n, &lp_got, top_got);
            check_same_logprobs(lp_got, top_got, k_got, lp_want, top_want, k_want);
          }
        }
      }
      ++rows;
    }
  }
  CHECK(rows == 112);
  CHECK(dense > 0);  // the 32,001-id rows without top-k: too long to list
}

TEST_CASE("the host's AVX2 passes give exactly the scalar passes' results") {
  if (!host_simd::sample_passes_on_avx2()) {
    test::not_run("test_sampling: the AVX2 sampling passes", "this CPU lacks AVX2");
    return;
  }
  check_vector_passes<host_simd::Avx2RowPasses>();
}

TEST_CASE("the host's AVX-512 passes give exactly the scalar passes' results") {
  if (!host_simd::sample_passes_on_avx512()) {
    test::not_run("test_sampling: the AVX-512 sampling passes", "this CPU lacks AVX-512");
    return;
  }
  check_vector_passes<host_simd::Avx512RowPasses>();
}

TEST_CASE("temperature 0 is the exact argmax, ties to the lowest id") {
  std::vector<float> row{0.5f, 3.0f, -1.0f, 3.0f, 2.9f};
  kernels::SampleParams p;
  CHECK(kernels::sample_row(row.data(), 5, p, 0.99, {}) == 1);
  CHECK(kernels::sample_row(row.data(), 5, p, 0.0, {}) == kernels::argmax(row.data(), 5));
  row[2] = NAN;
  CHECK(kernels::sample_row(row.data(), 5, p, 0.5, {}) == -1);
  // Sampled: a NaN or +Inf row, or a row masked entirely, gives no token either.
  p.temperature = 1.0f;
  std::vector<kernels::Candidate> scratch(kernels::sample_scratch_size(5));
  CHECK(kernels::sample_row(row.data(), 5, p, 0.5, {scratch.data()}) == -1);
  std::vector<float> masked(5, -INFINITY);
  CHECK(kernels::sample_row(masked.data(), 5, p, 0.5, {scratch.data()}) == -1);
  masked[3] = -40.0f;  // the only allowed token is drawn whatever its logit
  CHECK(kernels::sample_row(masked.data(), 5, p, 0.999, {scratch.data()}) == 3);
}

TEST_CASE("each configuration draws its exact distribution (chi-square, fixed seeds)") {
  const int vocab = static_cast<int>(kLogits.size());
  constexpr int kDraws = 20000;
  for (const Case& c : cases()) {
    CAPTURE(c.name);
    c.options.check(vocab);
    const std::vector<double> want = reference_probs(kLogits, c.options, c.seen);
    for (std::uint64_t seed : {11ull, 20261206ull}) {
      SamplingOptions o = c.options;
      o.seed = seed;
      Sampler sampler(o, vocab, 16);
      for (const auto& s : c.seen)
        for (int k = 0; k < s.count; ++k) sampler.accepted(s.id);
      std::vector<int> hits(static_cast<std::size_t>(vocab), 0);
      std::vector<float> row;
      for (int step = 0; step < kDraws; ++step) {
        row = kLogits;
        const std::int32_t id = sampler.choose(row, step).id;
        REQUIRE(id >= 0);
        REQUIRE(id < vocab);
        ++hits[static_cast<std::size_t>(id)];
      }
      double chi2 = 0;
      int bins = 0;
      for (int i = 0; i < vocab; ++i) {
        const double e = want[static_cast<std::size_t>(i)] * kDraws;
        if (e == 0) {
          CHECK_MESSAGE(hits[static_cast<std::size_t>(i)] == 0, "token ", i,
                        " has probability 0 but was drawn");
          continue;
        }
        ++bins;
        const double d = hits[static_cast<std::size_t>(i)] - e;
        chi2 += d * d / e;
      }
      const double crit = bins > 1 ? chi2_critical(bins - 1) : 0.0;
      MESSAGE(std::string(c.name), " seed ", seed, ": chi2 = ", chi2, " over ", bins,
              " bins (critical ", crit, ")");
      CHECK(chi2 <= crit);
    }
  }
}

TEST_CASE("a dense kept set's draw by rejection has the kept set's exact distribution") {
  // Rows too wide to list (flat logits over 30,000 ids), drawn 20,000 times a seed from one
  // truncation: every token drawn is in the reference's kept set (a full sort, in double), and
  // the kept set's tokens, grouped by rank into 24 groups of about equal probability, are hit
  // as often as the reference says (chi-square, p > 1e-4). Top-p 0.3 rejects most first rounds,
  // so later rounds (their own uniforms) carry much of the distribution.
  const int n = 30000;
  std::mt19937 rng(5);
  std::normal_distribution<float> gauss(0.0f, 1.0f);
  std::vector<float> row(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i)
    row[static_cast<std::size_t>(i)] = i % 17 == 4 ? -INFINITY : gauss(rng) * 0.3f;
  // The same logits in descending order: the inverse CDF in id order then walks the ranking, so
  // a round that reused the first's uniform would land next to the last rejected token.
  std::vector<float> sorted_row = row;
  std::sort(sorted_row.begin(), sorted_row.end(), std::greater<>());
  // The host's vector passes where the CPU has them (the same draws as the scalar ones: the
  // tests above), so the 200,000 draws take a second.
  const bool avx2 = host_simd::sample_passes_on_avx2();
  auto draw = [&](const kernels::KeptSet& kept, double u) {
    return avx2 ? kernels::draw<host_simd::Avx2RowPasses>(kept, u) : kernels::draw(kept, u);
  };
  struct DenseCase {
    const char* name;
    kernels::SampleParams p;
    const std::vector<float>* row;
  };
  const DenseCase cases[] = {
      {"top_p 0.3", {.temperature = 1.0f, .top_p = 0.3f}, &row},
      {"top_p 0.5, logits in descending order", {.temperature = 1.0f, .top_p = 0.5f}, &sorted_row},
      {"T 0.8, top_p 0.9, min_p 0.05", {.temperature = 0.8f, .top_p = 0.9f, .min_p = 0.05f}, &row},
      {"T 1.3, min_p 0.3", {.temperature = 1.3f, .min_p = 0.3f}, &row},
      {"T 1.0 alone", {.temperature = 1.0f}, &row}};
  // Under the sanitizers (20 times slower at -O0) 4,000 draws a seed: the same test, wider.
  const int kDraws = test::kSanitized ? 4000 : 20000;
  constexpr int kGroups = 24;
  std::vector<kernels::Candidate> scratch(
      static_cast<std::size_t>(kernels::sample_scratch_size(n)));
  std::vector<float> weights(static_cast<std::size_t>(n));
  std::vector<double> bins(kernels::kSampleBins);
  for (const DenseCase& c : cases) {
    CAPTURE(c.name);
    SamplingOptions o;
    o.params = c.p;
    const std::vector<double> want = reference_probs(*c.row, o, {});
    std::vector<int> order;
    for (int i = 0; i < n; ++i)
      if (want[static_cast<std::size_t>(i)] > 0) order.push_back(i);
    REQUIRE(order.size() > static_cast<std::size_t>(kernels::kListCap));
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
      return want[static_cast<std::size_t>(a)] > want[static_cast<std::size_t>(b)];
    });
    std::vector<int> group(static_cast<std::size_t>(n), -1);
    std::vector<double> expected(kGroups, 0.0);
    double cum = 0;
    for (const int id : order) {
      const int g = std::min(kGroups - 1, static_cast<int>(cum * kGroups));
      group[static_cast<std::size_t>(id)] = g;
      expected[static_cast<std::size_t>(g)] += want[static_cast<std::size_t>(id)];
      cum += want[static_cast<std::size_t>(id)];
    }
    const kernels::KeptSet kept =
        kernels::truncate(c.row->data(), n, c.p, {scratch.data(), weights.data(), bins.data()});
    REQUIRE(kept.list == nullptr);  // dense
    for (const std::uint64_t seed : {3ull, 20261207ull}) {
      std::vector<int> hits(kGroups, 0);
      int outside = 0;
      for (int step = 0; step < kDraws; ++step) {
        const std::int32_t id =
            draw(kept, kernels::sample_uniform(seed, 0, static_cast<std::uint32_t>(step)));
        REQUIRE(id >= 0);
        REQUIRE(id < n);
        const int g = group[static_cast<std::size_t>(id)];
        if (g < 0)
          ++outside;
        else
          ++hits[static_cast<std::size_t>(g)];
      }
      CHECK(outside == 0);
      double chi2 = 0;
      for (int g = 0; g < kGroups; ++g) {
        const double e = expected[static_cast<std::size_t>(g)] * kDraws;
        const double d = hits[static_cast<std::size_t>(g)] - e;
        chi2 += d * d / e;
      }
      MESSAGE(std::string(c.name), " seed ", seed, ": chi2 = ", chi2, " over ", kGroups,
              " groups (critical ", chi2_critical(kGroups - 1), ")");
      CHECK(chi2 <= chi2_critical(kGroups - 1));
    }
  }
}

TEST_CASE("log-probabilities equal a naive log-softmax after the penalties and temperature") {
  const int vocab = static_cast<int>(kLogits.size());
  for (const Case& c : cases())
    for (const int top_n : {5, 0}) {  // 0: the token's own log-probability, no alternatives
      CAPTURE(c.name);
      CAPTURE(top_n);
      SamplingOptions o = c.options;
      o.logprobs = true;
      o.top_logprobs = top_n;
      Sampler sampler(o, vocab, 16);
      for (const auto& s : c.seen)
        for (int k = 0; k < s.count; ++k) sampler.accepted(s.id);
      std::vector<float> row = kLogits;
      const StepChoice choice = sampler.choose(row, 3);
      const std::int32_t id = choice.id;
      const TokenLogprobs& lp = choice.logprobs;
      CHECK(lp.id == id);
      // Reference: the logits after bias and penalties (in double), over T, log-softmax.
      std::vector<double> l(kLogits.begin(), kLogits.end());
      for (const auto& b : o.logit_bias) l[static_cast<std::size_t>(b.id)] += b.bias;
      for (const auto& s : c.seen) {
        double& x = l[static_cast<std::size_t>(s.id)];
        x = x > 0 ? x / o.params.repeat_penalty : x * o.params.repeat_penalty;
        x -= s.count * static_cast<double>(o.params.frequency_penalty) + o.params.presence_penalty;
      }
      double lse = 0;
      for (double& x : l) x /= o.params.temperature;
      for (double x : l)
        if (std::isfinite(x)) lse += std::exp(x);
      lse = std::log(lse);
      CHECK(lp.id == id);
      CHECK(std::abs(lp.logprob - (l[static_cast<std::size_t>(id)] - lse)) < 1e-4);
      std::vector<int> order(static_cast<std::size_t>(vocab));
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
        return l[static_cast<std::size_t>(a)] > l[static_cast<std::size_t>(b)];
      });
      REQUIRE(lp.n_top == top_n);
      for (int k = 0; k < top_n; ++k) {
        CHECK(lp.top[static_cast<std::size_t>(k)].id == order[static_cast<std::size_t>(k)]);
        CHECK(std::abs(lp.top[static_cast<std::size_t>(k)].logprob -
                       (l[static_cast<std::size_t>(order[static_cast<std::size_t>(k)])] - lse)) <
              1e-4);
      }
    }
  // A masked token is never listed: with 3 allowed tokens, a top-5 list holds 3.
  std::vector<float> row(8, -INFINITY);
  row[1] = 0.5f;
  row[4] = 0.25f;
  row[6] = 2.0f;
  kernels::TopLogprob top[kernels::kMaxTopLogprobs];
  float chosen = 0;
  CHECK(kernels::log_probs(row.data(), 8, 0.0f, 6, 5, &chosen, top) == 3);
  CHECK(top[0].id == 6);
  CHECK(top[2].id == 4);
  const double lse = std::log(std::exp(0.5) + std::exp(0.25) + std::exp(2.0));
  CHECK(std::abs(chosen - (2.0 - lse)) < 1e-6);
}

TEST_CASE("a draw's log-probabilities reuse its weighing bit for bit, and only its own") {
  // draw_token takes the softmax's normalizer from truncate()'s pass when that pass weighed the
  // whole row at the same temperature (top-p, or a dense set, without top-k); the values must be
  // the bits log_probs() computes on its own, listed and dense sets, on the scalar passes and
  // the host's vector passes. Top-p over top-k renormalizes its mass over the k kept tokens:
  // that sum is not the row's and must not be taken.
  std::mt19937 rng(11);
  std::normal_distribution<float> gauss(0.0f, 1.0f);
  std::vector<float> row(40000);
  for (float& l : row) l = gauss(rng) * 1.5f;
  row[123] = -INFINITY;                         // a masked id
  row[500] = row[7000] = row[39000] = 9.0f;     // the top three tied: ranked by id
  row[20000] = row[20001] = row[31000] = 8.0f;  // and three more, around the fifth place
  const int n = static_cast<int>(row.size());
  std::vector<kernels::Candidate> cand(static_cast<std::size_t>(kernels::sample_scratch_size(n)));
  std::vector<float> weights(row.size());
  std::vector<double> bins(kernels::kSampleBins);
  const kernels::SampleScratch scratch{cand.data(), weights.data(), bins.data()};
  struct Params {
    float t;
    int k;
    float p, min_p;
  };
  int runs = 0;
  for (const Params q :
       {Params{0.7f, 0, 0.9f, 0.0f}, Params{1.0f, 0, 0.95f, 0.0f}, Params{1.0f, 0, 1.0f, 0.0f},
        Params{1.3f, 0, 0.5f, 0.05f}, Params{0.8f, 40, 0.95f, 0.05f}, Params{2.0f, 0, 0.2f, 0.0f},
        Params{0.0f, 0, 1.0f, 0.0f}})
    for (const std::uint32_t step : {0u, 1u, 2u}) {
      CAPTURE(q.t);
      CAPTURE(q.k);
      CAPTURE(q.p);
      kernels::TokenDraw d;
      d.params.temperature = q.t;
      d.params.top_k = q.k;
      d.params.top_p = q.p;
      d.params.min_p = q.min_p;
      d.seed = 5;
      d.step = step;
      d.top_logprobs = 5;
      auto check = [&](auto passes) {
        using P = decltype(passes);
        float lp = 0.0f, lp_alone = 0.0f;
        int n_top = 0;
        kernels::TopLogprob top[kernels::kMaxTopLogprobs], top_alone[kernels::kMaxTopLogprobs];
        const std::int32_t id =
            kernels::draw_token<P>(row.data(), n, d, scratch, {&lp, top, &n_top});
        REQUIRE(id >= 0);
        const int k_alone = kernels::log_probs<P>(row.data(), n, q.t, id, 5, &lp_alone, top_alone);
        check_same_logprobs(lp, top, n_top, lp_alone, top_alone, k_alone);
        ++runs;
      };
      check(kernels::RowPasses{});
      if (host_simd::sample_passes_on_avx2()) check(host_simd::Avx2RowPasses{});
      if (host_simd::sample_passes_on_avx512()) check(host_simd::Avx512RowPasses{});
    }
  CHECK(runs >= 21);  // 7 options x 3 steps, at least the scalar passes
}

TEST_CASE("out-of-range options fail naming the field") {
  auto fails = [](auto edit, const char* field) {
    SamplingOptions o;
    edit(o);
    test::expect_error<usage_error>([&] { o.check(100); }, {field});
  };
  fails([](SamplingOptions& o) { o.params.temperature = -0.5f; }, "temperature");
  fails([](SamplingOptions& o) { o.params.temperature = NAN; }, "temperature");
  fails([](SamplingOptions& o) { o.params.top_k = -1; }, "top_k");
  fails([](SamplingOptions& o) { o.params.top_p = 1.5f; }, "top_p");
  fails([](SamplingOptions& o) { o.params.min_p = -0.1f; }, "min_p");
  fails([](SamplingOptions& o) { o.params.repeat_penalty = 0.0f; }, "repeat_penalty");
  fails([](SamplingOptions& o) { o.params.presence_penalty = 2.5f; }, "presence_penalty");
  fails([](SamplingOptions& o) { o.params.frequency_penalty = -3.0f; }, "frequency_penalty");
  fails([](SamplingOptions& o) { o.top_logprobs = 21; }, "top_logprobs");
  fails([](SamplingOptions& o) { o.logit_bias = {{100, 1.0f}}; }, "logit_bias");
  fails([](SamplingOptions& o) { o.logit_bias = {{3, 101.0f}}; }, "logit_bias[3]");
}
