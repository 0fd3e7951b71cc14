// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// Every phased kernel of the CUDA backend (kernels/phased/) on the host grid, with the launch
// configuration the device gets, against naive double-precision loops written here: random
// inputs, shapes that are not multiples of the block size, every GQA ratio of the golden
// fixtures (8/2, 5/5) plus 4/1, contexts long enough to split across blocks (with empty
// splits), prefix + tail spans, and strides wider than the rows.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "baton/backend/host.hpp"
#include "baton/grid/host_grid.hpp"
#include "baton/kernels/phased/argmax_split.hpp"
#include "baton/kernels/phased/attention_split.hpp"
#include "baton/kernels/phased/decode_step.hpp"
#include "baton/kernels/phased/elementwise.hpp"
#include "baton/kernels/phased/embed.hpp"
#include "baton/kernels/phased/gemv.hpp"
#include "baton/kernels/phased/gemv_blocks.hpp"
#include "baton/kernels/phased/lora_delta.hpp"
#include "baton/kernels/phased/rmsnorm.hpp"
#include "baton/kernels/phased/rmsnorm_split.hpp"
#include "baton/kernels/phased/rope_append.hpp"
#include "baton/kernels/rope.hpp"
#include "reference/naive_model.hpp"

using namespace baton;
using grid::run_on_host_grid;

namespace {

std::vector<float> random_floats(std::size_t n, unsigned seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

template <StorageType S>
std::vector<S> narrowed(const std::vector<float>& v) {
  std::vector<S> out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) out[i] = narrow<S>(v[i]);
  return out;
}

/// |got - want| <= rel * scale + 1e-6, where scale is the sum of |terms| that formed want.
void check_close(double got, double want, double scale, double rel, const char* what, int i) {
  INFO(std::string(what) << " [" << i << "]: got " << got << ", want " << want);
  REQUIRE(std::abs(got - want) <= rel * scale + 1e-6);
}

/// y = RMSNorm(x) * w for `rows` rows of `n` at stride `ld`, against double; the gap between
/// rows (filled with 7 before the launch) is not written.
void check_rmsnorm(const std::vector<float>& x, const std::vector<float>& w,
                   const std::vector<float>& y, int rows, int n, int ld, const char* what) {
  for (int r = 0; r < rows; ++r) {
    double ss = 0;
    for (int i = 0; i < n; ++i) ss += double(x[r * ld + i]) * x[r * ld + i];
    const double inv = 1.0 / std::sqrt(ss / n + 1e-6);
    for (int i = 0; i < n; ++i) {
      const double want = x[r * ld + i] * inv * w[i];
      check_close(y[r * ld + i], want, std::abs(want), 1e-5, what, i);
    }
    for (int i = n; i < ld; ++i) REQUIRE(y[r * ld + i] == 7.0f);
  }
}

}  // namespace

TEST_CASE_TEMPLATE("embedding gather widens the token rows exactly", S, f32, bf16, f16) {
  using K = kernels::EmbedKernel<S>;
  const int vocab = 50, hidden = 300;  // hidden: more than one 256-thread pass, not a multiple
  const auto table = narrowed<S>(random_floats(std::size_t(vocab) * hidden, 1));
  const std::vector<std::int32_t> tokens = {3, 49, 0, 3};
  std::vector<float> x(tokens.size() * hidden, -99.0f);
  run_on_host_grid<K>(K::config(4), {table.data(), tokens.data(), x.data(), hidden});
  for (int t = 0; t < 4; ++t)
    for (int i = 0; i < hidden; ++i)
      REQUIRE(x[t * hidden + i] == widen(table[std::size_t(tokens[t]) * hidden + i]));
}

TEST_CASE("RMSNorm rows: block-reduced sum of squares against double") {
  using K = kernels::RmsNormKernel<float>;
  for (const int n : {64, 200, 1000}) {
    const int rows = 3, ld = n + 5;
    const auto x = random_floats(std::size_t(rows) * ld, 2 + n, -3.0f, 3.0f);
    const auto w = random_floats(n, 3 + n, 0.5f, 1.5f);
    std::vector<float> y(std::size_t(rows) * ld, 7.0f);
    run_on_host_grid<K>(K::config(rows),
                        {x.data(), y.data(), ld, ld, n, 1, 1, w.data(), w.data(), 1e-6f});
    check_rmsnorm(x, w, y, rows, n, ld, "rmsnorm");
  }
}

TEST_CASE("RMSNorm split over blocks: slice sums of squares, then scale, against double") {
  using KS = kernels::RmsSquaresKernel;
  using KN = kernels::RmsScaleKernel<float>;
  // One slice (64, 200, 512), several (1000, 1536, 4096, 5000: a short last slice), and the
  // most the scale kernel adds up (100000: 128 slices of 782).
  for (const int n : {64, 200, 512, 1000, 1536, 4096, 5000, 100000}) {
    CAPTURE(n);
    const grid::Slices split = kernels::rms_split(n);
    CHECK(split.count <= int(kernels::kRmsSplitThreads));
    CHECK(split.count * split.chunk >= n);
    const int rows = 3, ld = n + 5;
    const auto x = random_floats(std::size_t(rows) * ld, 2 + n, -3.0f, 3.0f);
    const auto w = random_floats(n, 3 + n, 0.5f, 1.5f);
    std::vector<float> y(std::size_t(rows) * ld, 7.0f);
    std::vector<float> squares(std::size_t(rows) * split.count, NAN);
    const grid::LaunchConfig cfg = kernels::rms_split_config(rows, n);
    run_on_host_grid<KS>(cfg, {x.data(), ld, n, split.chunk, squares.data()});
    run_on_host_grid<KN>(
        cfg, {x.data(), y.data(), ld, ld, n, split.chunk, squares.data(), w.data(), 1e-6f});
    check_rmsnorm(x, w, y, rows, n, ld, "split rmsnorm");
  }
  // In place (y = x), as RmsNormKernel allows.
  const int n = 3000;
  const auto x0 = random_floats(n, 81, -2.0f, 2.0f);
  const auto w = random_floats(n, 82, 0.5f, 1.5f);
  std::vector<float> x = x0, squares(kernels::rms_split(n).count);
  const int chunk = kernels::rms_split(n).chunk;
  run_on_host_grid<KS>(kernels::rms_split_config(1, n), {x.data(), n, n, chunk, squares.data()});
  run_on_host_grid<KN>(kernels::rms_split_config(1, n),
                       {x.data(), x.data(), n, n, n, chunk, squares.data(), w.data(), 1e-6f});
  check_rmsnorm(x0, w, x, 1, n, n, "split rmsnorm in place");
}

TEST_CASE("per-head q/k RMSNorm (Qwen3) in place, v heads untouched") {
  using K = kernels::RmsNormKernel<float>;
  struct Shape {
    int nq, nkv, D;
  };
  for (const Shape s : {Shape{8, 2, 16}, Shape{5, 5, 128}, Shape{4, 1, 64}}) {
    const int tokens = 3, width = (s.nq + 2 * s.nkv) * s.D;
    const auto before = random_floats(std::size_t(tokens) * width, 4 + s.D, -2.0f, 2.0f);
    const auto qw = random_floats(s.D, 5, 0.5f, 1.5f), kw = random_floats(s.D, 6, 0.5f, 1.5f);
    std::vector<float> qkv = before;
    const int heads = s.nq + s.nkv;
    run_on_host_grid<K>(K::config(tokens * heads), {qkv.data(), qkv.data(), width, width, s.D,
                                                    heads, s.nq, qw.data(), kw.data(), 1e-6f});
    for (int t = 0; t < tokens; ++t) {
      for (int h = 0; h < heads; ++h) {
        const float* x = before.data() + t * width + h * s.D;
        const auto& w = h < s.nq ? qw : kw;
        double ss = 0;
        for (int d = 0; d < s.D; ++d) ss += double(x[d]) * x[d];
        const double inv = 1.0 / std::sqrt(ss / s.D + 1e-6);
        for (int d = 0; d < s.D; ++d) {
          const double want = x[d] * inv * w[d];
          check_close(qkv[t * width + h * s.D + d], want, std::abs(want), 1e-5, "head norm", d);
        }
      }
      for (int i = heads * s.D; i < width; ++i)
        REQUIRE(qkv[t * width + i] == before[t * width + i]);
    }
  }
}

namespace {

/// RoPE (llama3 scaling: the reference computes its own frequencies) + append to a tail block
/// whose index 0 is absolute position `base`; checks q/k in place and every K/V element.
template <KvLayout L>
void check_rope_append(int nq, int nkv) {
  using K = kernels::RopeAppendKernel<L>;
  using E = typename L::element;
  constexpr int D = L::head_dim;
  ModelConfig c;
  c.head_dim = D;
  c.rope_theta = 500000.0;
  c.rope_scaling = RopeScaling{RopeScaling::Type::llama3, 8.0, 1.0, 4.0, 8192};
  const std::vector<double> lib_inv =
      kernels::rope_inverse_frequencies(D, c.rope_theta, c.rope_scaling);
  const std::vector<float> inv(lib_inv.begin(), lib_inv.end());
  // The table the kernel reads is f32: check it against the reference's own llama3
  // frequencies, then rotate in the reference with exactly those f32 values (at position 9000
  // an f32 rounding of inv_freq alone moves the angle by ~5e-4).
  const std::vector<double> naive_inv = test::NaiveModel::inverse_frequencies(c);
  for (int i = 0; i < D / 2; ++i)
    check_close(inv[i], naive_inv[i], naive_inv[i], 1e-6, "inv_freq", i);
  const std::vector<double> ref_inv(inv.begin(), inv.end());

  const int tokens = 5, capacity = 40, base = 10, first_pos = 9000;  // past the llama3 band
  const int width = (nq + 2 * nkv) * D + 3;                          // a gap after v
  const auto before = random_floats(std::size_t(tokens) * width, 7 + D);
  std::vector<float> qkv = before;
  const std::size_t block = std::size_t(nkv) * capacity * D;
  std::vector<E> kmem(block, narrow<E>(-42.0f)), vmem(block, narrow<E>(-42.0f));
  const KvAppend<L> dst{KvBlock<L>{kmem.data(), vmem.data(), capacity, nkv}, first_pos - base};
  const kernels::ForwardDesc desc{first_pos, tokens};
  run_on_host_grid<K>(K::config(tokens), {qkv.data(), width, nq, nkv, inv.data(), dst, &desc});

  const double kv_rel = std::is_same_v<E, f32> ? 1e-6 : (std::is_same_v<E, bf16> ? 8e-3 : 1e-3);
  std::vector<bool> written(block, false);
  for (int t = 0; t < tokens; ++t) {
    const int pos = first_pos + t;
    for (int h = 0; h < nq + nkv; ++h) {
      for (int i = 0; i < D / 2; ++i) {
        const double a = before[t * width + h * D + i], b = before[t * width + h * D + i + D / 2];
        const double ang = pos * ref_inv[i];
        const double ra = a * std::cos(ang) - b * std::sin(ang);
        const double rb = b * std::cos(ang) + a * std::sin(ang);
        check_close(qkv[t * width + h * D + i], ra, 1.0, 2e-5, "rope a", i);
        check_close(qkv[t * width + h * D + i + D / 2], rb, 1.0, 2e-5, "rope b", i);
        if (h >= nq) {  // a k head: what was stored must be the rotated value
          const std::size_t off = L::offset(h - nq, pos - (first_pos - base), capacity, nkv);
          check_close(widen(kmem[off + i]), ra, std::abs(ra), kv_rel, "k stored", i);
          check_close(widen(kmem[off + i + D / 2]), rb, std::abs(rb), kv_rel, "k stored", i);
          written[off + i] = written[off + i + D / 2] = true;
        }
      }
    }
    for (int h = 0; h < nkv; ++h) {
      const std::size_t off = L::offset(h, pos - (first_pos - base), capacity, nkv);
      for (int d = 0; d < D; ++d) {
        const double v = before[t * width + (nq + nkv + h) * D + d];
        REQUIRE(qkv[t * width + (nq + nkv + h) * D + d] ==
                before[t * width + (nq + nkv + h) * D + d]);
        check_close(widen(vmem[off + d]), v, std::abs(v), kv_rel, "v stored", d);
      }
    }
    for (int i = (nq + 2 * nkv) * D; i < width; ++i)
      REQUIRE(qkv[t * width + i] == before[t * width + i]);
  }
  for (std::size_t e = 0; e < block; ++e) {
    if (!written[e]) REQUIRE(widen(kmem[e]) == -42.0f);  // nothing else in the block moved
  }
}

}  // namespace

TEST_CASE("RoPE (llama3 scaling) fused with the KV append, both layouts") {
  check_rope_append<layout::HeadMajor<f32, 16>>(8, 2);
  check_rope_append<layout::TokenMajor<bf16, 16>>(5, 5);
  check_rope_append<layout::TokenMajor<f32, 64>>(4, 1);
  check_rope_append<layout::HeadMajor<f16, 8>>(8, 2);
}

namespace {

struct AttnCase {
  int q_heads, kv_heads;
  int prefix;     ///< positions in the prefix block (span.first)
  int first_pos;  ///< absolute position of query token 0
  int tokens;
  int tail_cap = 400;  ///< past 4096 positions of capacity a split covers more than 128
};

/// Split attention + combine against a double softmax over [0, first_pos + t].
template <KvLayout L>
double check_attention(const AttnCase& tc) {
  using E = typename L::element;
  constexpr int D = L::head_dim;
  using KS = kernels::SplitAttentionKernel<L>;
  using KC = kernels::AttentionCombineKernel<D>;
  const int prefix_cap = tc.prefix + 3, tail_cap = tc.tail_cap;
  const int total = tc.first_pos + tc.tokens;
  REQUIRE(total <= tc.prefix + tail_cap);
  const int nkv = tc.kv_heads, nq = tc.q_heads, group = nq / nkv;
  std::vector<E> ka(std::size_t(nkv) * prefix_cap * D), va(ka.size());
  std::vector<E> kb(std::size_t(nkv) * tail_cap * D), vb(kb.size());
  std::vector<double> kref(std::size_t(total) * nkv * D), vref(kref.size());
  const auto kr = random_floats(kref.size(), 11 + total, -2.0f, 2.0f);
  const auto vr = random_floats(vref.size(), 12 + total);
  for (int p = 0; p < total; ++p) {
    for (int h = 0; h < nkv; ++h) {
      const bool in_prefix = p < tc.prefix;
      E* kd = in_prefix ? ka.data() + L::offset(h, p, prefix_cap, nkv)
                        : kb.data() + L::offset(h, p - tc.prefix, tail_cap, nkv);
      E* vd = in_prefix ? va.data() + L::offset(h, p, prefix_cap, nkv)
                        : vb.data() + L::offset(h, p - tc.prefix, tail_cap, nkv);
      for (int d = 0; d < D; ++d) {
        const std::size_t i = (std::size_t(p) * nkv + h) * D + d;
        kd[d] = narrow<E>(kr[i]);
        vd[d] = narrow<E>(vr[i]);
        kref[i] = widen(kd[d]);
        vref[i] = widen(vd[d]);
      }
    }
  }
  const int q_stride = nq * D + 3, out_stride = nq * D + 5;
  const auto q = random_floats(std::size_t(tc.tokens) * q_stride, 13 + nq);
  std::vector<float> out(std::size_t(tc.tokens) * out_stride, 5.0f);
  const kernels::AttentionSplit split = kernels::attention_split(tc.prefix + tail_cap);
  const int splits = split.splits;
  REQUIRE(split.span % kernels::kAttentionChunk == 0);
  REQUIRE(split.span <= kernels::kAttentionMaxSpan);
  REQUIRE(static_cast<long>(splits) * split.span >= tc.prefix + tail_cap);
  std::vector<float> max_sum(std::size_t(tc.tokens) * nq * splits * 2);
  std::vector<float> acc(std::size_t(tc.tokens) * nq * splits * D);
  const kernels::AttentionPartials parts{max_sum.data(), acc.data(), splits};
  const KvSpan<L> span{KvBlock<L>{ka.data(), va.data(), prefix_cap, nkv}, tc.prefix,
                       KvBlock<L>{kb.data(), vb.data(), tail_cap, nkv}, total - tc.prefix};
  const kernels::ForwardDesc desc{tc.first_pos, tc.tokens};
  const float scale = 1.0f / std::sqrt(float(D));
  run_on_host_grid<KS>(KS::config(tc.tokens, nq, splits),
                       {span, q.data(), q_stride, nq, group, scale, &desc, parts, split.span});
  run_on_host_grid<KC>(KC::config(tc.tokens, nq), {parts, out.data(), out_stride, nq});

  double worst = 0;
  for (int t = 0; t < tc.tokens; ++t) {
    const int len = tc.first_pos + t + 1;
    for (int h = 0; h < nq; ++h) {
      const int kvh = h / group;
      std::vector<double> s(len);
      double mx = -1e300;
      for (int p = 0; p < len; ++p) {
        double dot = 0;
        for (int d = 0; d < D; ++d)
          dot += double(q[t * q_stride + h * D + d]) * kref[(std::size_t(p) * nkv + kvh) * D + d];
        s[p] = dot / std::sqrt(double(D));
        mx = std::max(mx, s[p]);
      }
      double sum = 0;
      for (double& e : s) sum += (e = std::exp(e - mx));
      for (int d = 0; d < D; ++d) {
        double want = 0;
        for (int p = 0; p < len; ++p)
          want += s[p] / sum * vref[(std::size_t(p) * nkv + kvh) * D + d];
        const double got = out[t * out_stride + h * D + d];
        worst = std::max(worst, std::abs(got - want));
        INFO("token " << t << " head " << h << " dim " << d << " (len " << len << ", " << splits
                      << " splits): got " << got << ", want " << want);
        REQUIRE(std::abs(got - want) <= 2e-5);
      }
    }
    for (int i = nq * D; i < out_stride; ++i) REQUIRE(out[t * out_stride + i] == 5.0f);
  }
  return worst;
}

}  // namespace

TEST_CASE("split attention + combine: prefix and tail, causal mask, every GQA ratio") {
  const AttnCase cases[] = {
      {8, 2, 0, 0, 7},      // prefill from position 0, one split holds everything
      {5, 5, 100, 300, 1},  // decode at 300 over prefix 100 + tail: 3 full/partial splits
      {8, 2, 130, 130, 5},  // prefill of a tail whose tokens cross the chunk boundary at 128
      {4, 1, 257, 260, 1},  // a prefix that ends just past two chunks
      {5, 5, 64, 383, 2},   // the last positions of the capacity's fourth split
      // Capacity 5003: 32 splits of 256 positions (two passes of the block per split).
      {4, 2, 0, 4990, 2, 5003},     // decode-like tokens near the end of the capacity
      {4, 1, 200, 250, 3, 5003},    // a few tokens, most splits empty
      {2, 2, 300, 1100, 1, 40000},  // capacity 40300: 32 splits of 1280 positions
  };
  double worst = 0;
  for (const AttnCase& c : cases) {
    CAPTURE(c.q_heads);
    CAPTURE(c.kv_heads);
    CAPTURE(c.prefix);
    CAPTURE(c.first_pos);
    worst = std::max(worst, check_attention<layout::HeadMajor<f32, 16>>(c));
    worst = std::max(worst, check_attention<layout::TokenMajor<bf16, 8>>(c));
    worst = std::max(worst, check_attention<layout::HeadMajor<f16, 64>>(c));
  }
  MESSAGE("split attention: max |got - double| = " << worst);
}

TEST_CASE("SwiGLU over [gate | up] rows") {
  using K = kernels::SwigluKernel;
  const int tokens = 3, F = 300;
  const auto gu = random_floats(std::size_t(tokens) * 2 * F, 21, -6.0f, 6.0f);
  std::vector<float> act(std::size_t(tokens) * F);
  run_on_host_grid<K>(K::config(tokens, F), {gu.data(), act.data(), tokens, F});
  for (int t = 0; t < tokens; ++t)
    for (int i = 0; i < F; ++i) {
      const double g = gu[t * 2 * F + i], u = gu[t * 2 * F + F + i];
      const double want = g / (1.0 + std::exp(-g)) * u;
      check_close(act[t * F + i], want, std::abs(want), 1e-5, "swiglu", i);
    }
}

TEST_CASE("LoRA shrink then expand, ranks 1, 16 and 256") {
  using KS = kernels::LoraShrinkKernel;
  using KE = kernels::LoraExpandKernel;
  for (const int rank : {1, 16, 256}) {
    CAPTURE(rank);
    const int tokens = 3, in = 200, out = 300, ldx = in + 7, ldy = out + 11;
    const float scale = 0.75f;
    const auto a = random_floats(std::size_t(rank) * in, 31 + rank);
    const auto b = random_floats(std::size_t(out) * rank, 32 + rank);
    const auto x = random_floats(std::size_t(tokens) * ldx, 33);
    const auto y0 = random_floats(std::size_t(tokens) * ldy, 34);
    std::vector<float> y = y0, u(std::size_t(tokens) * rank);
    run_on_host_grid<KS>(KS::config(tokens, rank), {a.data(), x.data(), ldx, in, rank, u.data()});
    run_on_host_grid<KE>(KE::config(tokens, out),
                         {b.data(), u.data(), rank, out, scale, y.data(), ldy});
    for (int t = 0; t < tokens; ++t) {
      std::vector<double> ax(rank, 0.0);
      double ax_scale = 0;
      for (int j = 0; j < rank; ++j)
        for (int i = 0; i < in; ++i) {
          ax[j] += double(a[j * in + i]) * x[t * ldx + i];
          ax_scale += std::abs(double(a[j * in + i]) * x[t * ldx + i]);
        }
      for (int o = 0; o < out; ++o) {
        double bax = 0, mag = 0;
        for (int j = 0; j < rank; ++j) {
          bax += double(b[o * rank + j]) * ax[j];
          mag += std::abs(double(b[o * rank + j])) * ax_scale / rank;
        }
        const double want = y0[t * ldy + o] + scale * bax;
        check_close(y[t * ldy + o], want, std::abs(y0[t * ldy + o]) + scale * mag, 1e-5, "lora", o);
      }
      for (int o = out; o < ldy; ++o) REQUIRE(y[t * ldy + o] == y0[t * ldy + o]);
    }
  }
}

namespace {

/// y = W x (+ bias) (+ y0) in double, and the sum of |terms| (check_close's scale).
template <StorageType W>
void check_gemv(const W* w, const float* x, const std::vector<float>& y, const float* bias,
                const std::vector<float>& y0, int rows, int cols, bool accumulate) {
  for (int r = 0; r < rows; ++r) {
    double want = (accumulate ? y0[r] : 0.0) + (bias ? bias[r] : 0.0), mag = 0;
    for (int i = 0; i < cols; ++i) {
      const double term = double(widen(w[std::size_t(r) * cols + i])) * x[i];
      want += term;
      mag += std::abs(term);
    }
    check_close(y[r], want, mag + 1.0, 1e-6, "gemv", r);
  }
}

}  // namespace

TEST_CASE_TEMPLATE("batch-1 GEMV: 128-bit and scalar paths, bias, accumulate", W, f32, bf16, f16) {
  using K = kernels::GemvKernel<W>;
  struct Shape {
    int rows, cols;
    bool vectorized;
    int offset = 0;  ///< elements the matrix starts past an aligned address
  };
  // Rows not a multiple of 8; 1032 columns leave a remainder after the unrolled loop for every
  // type (129 bf16/f16 packs: 128 + 1; 258 f32 packs: 256 + 2), 1536 leaves one for 16-bit
  // types only; a matrix one element off 16 bytes takes the scalar path.
  for (const Shape s : {Shape{1, 8, true}, Shape{37, 67, false}, Shape{13, 256, true},
                        Shape{300, 1536, true}, Shape{37, 1032, true}, Shape{11, 1032, false, 1}}) {
    for (const bool with_bias : {false, true}) {
      for (const int accumulate : {0, 1}) {
        CAPTURE(s.rows);
        CAPTURE(s.cols);
        CAPTURE(s.offset);
        const auto wf = random_floats(std::size_t(s.rows) * s.cols, 41 + s.cols);
        HostBuffer<W> storage(wf.size() + s.offset);
        W* w = storage.data() + s.offset;
        for (std::size_t i = 0; i < wf.size(); ++i) w[i] = narrow<W>(wf[i]);
        HostBuffer<float> x(s.cols);
        const auto xf = random_floats(s.cols, 42);
        std::copy(xf.begin(), xf.end(), x.data());
        const auto bias = random_floats(s.rows, 43);
        const auto y0 = random_floats(s.rows, 44);
        std::vector<float> y = y0;
        const int vec = K::can_vectorize(w, x.data(), s.cols);
        // 16-byte rows exist for every type at these widths except 67 columns.
        REQUIRE(bool(vec) == (s.vectorized && (s.cols * sizeof(W)) % 16 == 0));
        const float* b = with_bias ? bias.data() : nullptr;
        run_on_host_grid<K>(K::config(s.rows),
                            {w, x.data(), y.data(), b, s.rows, s.cols, accumulate, vec});
        check_gemv(w, x.data(), y, b, y0, s.rows, s.cols, accumulate);
      }
    }
  }
}

TEST_CASE("batch-1 GEMV: rows past the capped grid are reached by rounds; idle launches") {
  using K = kernels::GemvKernel<bf16>;
  // 65,535 blocks of 8 rows, then 13 rows more: a second round (blocks 0 and 1 take them).
  const int rows = 65535 * 8 + 13, cols = 8;  // 16 bytes per row: one packed load
  const auto w = narrowed<bf16>(random_floats(std::size_t(rows) * cols, 45));
  HostBuffer<float> x(cols);
  const auto xf = random_floats(cols, 46);
  std::copy(xf.begin(), xf.end(), x.data());
  const grid::LaunchConfig cfg = K::config(rows);
  typename K::Args a{w.data(), x.data(), nullptr, nullptr, rows, cols, 0, 1};
  REQUIRE(K::can_vectorize(w.data(), x.data(), cols));
  CHECK(cfg.grid_x == 65535);
  CHECK(grid::rounds_of<K>(cfg, a) == 2);
  std::vector<float> y(rows, NAN);  // a row nobody writes stays NaN and fails below
  a.y = y.data();
  run_on_host_grid<K>(cfg, a);
  check_gemv(w.data(), x.data(), y, nullptr, {}, rows, cols, false);

  // A device-loop forward after the loop ended (descriptor tokens = 0) writes nothing.
  const kernels::ForwardDesc done{5, 0}, live{5, 1};
  const std::vector<float> before(16, 3.0f);
  std::vector<float> small = before;
  a = {w.data(), x.data(), small.data(), nullptr, 16, cols, 0, 1, &done};
  run_on_host_grid<K>(K::config(16), a);
  CHECK(small == before);
  a.idle = &live;
  run_on_host_grid<K>(K::config(16), a);
  check_gemv(w.data(), x.data(), small, nullptr, {}, 16, cols, false);
}

namespace {

/// Writes item * 64 + (thread + 1) % 64 (what thread + 1 stored in shared memory in phase 0)
/// to out[item * 64 + thread] for every item, one item per (block, round); records what
/// thread 0 of each round finds in the shared word the round before it wrote last.
struct RoundsToy {
  static constexpr unsigned kThreads = 64;
  static constexpr int kPhases = 2;
  struct Args {
    int items = 0;
    int* out = nullptr;            ///< [items, 64]
    std::int32_t* seen = nullptr;  ///< [grid_x * rounds]
  };
  struct Shared {
    int v[kThreads];
    std::int32_t last;
  };
  struct Regs {
    int item;
  };
  static unsigned rounds(const grid::LaunchConfig& cfg, const Args& a) {
    return grid::rounds_for(static_cast<std::size_t>(a.items), cfg.grid_x);
  }
  template <int P>
  static void phase(const grid::ThreadIndex& at, Shared& sh, Regs& r, const Args& a) {
    if constexpr (P == 0) {
      r.item = static_cast<int>(at.round * at.grid_x + at.block_x);
      sh.v[at.thread] = r.item * 64 + static_cast<int>(at.thread);
      if (at.thread == 0) a.seen[at.round * at.grid_x + at.block_x] = sh.last;
    } else {
      if (r.item < a.items) a.out[r.item * 64 + at.thread] = sh.v[(at.thread + 1) % kThreads];
      sh.last = 1234;  // a later round must not see this
    }
  }
};

}  // namespace

TEST_CASE("rounds: a grid-stride over blocks, each round a fresh block") {
  static_assert(grid::HasRounds<RoundsToy> && !grid::HasRounds<kernels::SwigluKernel>);
  CHECK(grid::rounds_of<kernels::SwigluKernel>({7, 1, 256}, {}) == 1);
  for (const int items : {0, 1, 5, 7, 8, 20}) {
    CAPTURE(items);
    const grid::LaunchConfig cfg{7, 1, RoundsToy::kThreads};
    const unsigned rounds = grid::rounds_for(items, 7);
    CHECK(rounds == unsigned((items + 6) / 7));
    std::vector<int> out(std::size_t(items) * 64, -5);
    std::vector<std::int32_t> seen(7 * rounds, 99);
    run_on_host_grid<RoundsToy>(cfg, {items, out.data(), seen.data()});
    for (int i = 0; i < items; ++i)
      for (int t = 0; t < 64; ++t) REQUIRE(out[i * 64 + t] == i * 64 + (t + 1) % 64);
    for (const std::int32_t v : seen) CHECK(v == -1);  // poisoned, not 1234 from the round before
  }
}

namespace {

/// A device chain for the split argmax and the decode step: masks one id, adds the state's
/// amount to another, counts the tokens it advances over and never stops.
struct BoostMask {
  static constexpr bool alters_on_device = true;
  static constexpr bool has_device_members = true;
  struct device_params {
    int masked = -1;
    int boosted = -1;
  };
  struct device_state {
    float add = 0.0f;
    int advanced = 0;
  };
  static float transform_logit(const device_params& p, const device_state& s, std::int32_t id,
                               float logit) {
    if (id == p.masked) return -INFINITY;
    return id == p.boosted ? logit + s.add : logit;
  }
  static int advance(const device_params&, device_state& s, std::int32_t) {
    ++s.advanced;
    return -1;
  }
};

/// The split argmax on the host grid: partials over blocks, then their combine.
template <class Chain = kernels::PlainLogits>
std::int32_t split_argmax(const std::vector<float>& row, typename Chain::device_params p = {},
                          const typename Chain::device_state* st = nullptr) {
  using KP = kernels::ArgmaxPartialKernel<Chain>;
  using KC = kernels::ArgmaxCombineKernel;
  const int n = int(row.size());
  const grid::Slices split = kernels::argmax_split(n);
  std::vector<kernels::ArgmaxPair> partials(split.count);
  std::int32_t id = -7;
  run_on_host_grid<KP>(KP::config(n),
                       {row.data(), n, split.chunk, p, st, nullptr, partials.data()});
  run_on_host_grid<KC>(KC::config(), {partials.data(), split.count, &id});
  return id;
}

}  // namespace

TEST_CASE("split argmax: lowest id on ties across blocks, -1 for NaN or +Inf, any length") {
  for (const int n : {1, 37, 256, 257, 1024, 1025, 5003, 151936, 300007}) {
    CAPTURE(n);
    const grid::Slices split = kernels::argmax_split(n);
    // Every slice holds something, and the combine has a thread per slice.
    CHECK(split.count <= kernels::kMaxArgmaxPartials);
    CHECK((split.count - 1) * split.chunk < n);
    CHECK(split.count * split.chunk >= n);
    auto row = random_floats(n, 51 + n, -10.0f, 10.0f);
    int want = 0;
    for (int i = 1; i < n; ++i)
      if (row[i] > row[want]) want = i;
    CHECK(split_argmax(row) == want);
    // The winner on each slice's first and last entry (the longest row only in its first and
    // last slice, for time).
    for (int b = 0; b < split.count; ++b) {
      if (n > 200000 && b > 0 && b < split.count - 1) continue;
      for (const int at : {b * split.chunk, std::min(n, (b + 1) * split.chunk) - 1}) {
        auto edge = row;
        edge[at] = 30.0f;
        REQUIRE(split_argmax(edge) == at);
      }
    }
    if (n > 3) {
      row[n - 1] = row[2] = 20.0f;  // a tie between the first and the last slice: id 2
      CHECK(split_argmax(row) == 2);
      row[n / 2] = NAN;
      CHECK(split_argmax(row) == -1);
      row[n / 2] = INFINITY;
      CHECK(split_argmax(row) == -1);
    }
  }
  CHECK(split_argmax(std::vector<float>(3000, -INFINITY)) == -1);
  CHECK(split_argmax(std::vector<float>(3000, 0.5f)) == 0);  // all equal: the first id

  // The combine alone, its partials out of id order: a tie goes to the lower id wherever it
  // sits (a fold that keeps the first of equal values would say 900).
  using KC = kernels::ArgmaxCombineKernel;
  const auto combine = [](const std::vector<kernels::ArgmaxPair>& parts) {
    std::int32_t id = -7;
    run_on_host_grid<KC>(KC::config(), {parts.data(), int(parts.size()), &id});
    return id;
  };
  CHECK(combine({{5.0f, 900}, {4.0f, 1}, {5.0f, 3}, {5.0f, 2000}}) == 3);
  CHECK(combine({{1.0f, 9}}) == 9);
  CHECK(combine({{1.0f, 5}, {2.0f, 6}, {3.0f, 7}}) == 7);  // the last partial counts
  CHECK(combine({{5.0f, 900}, {NAN, 40}, {5.0f, 3}}) == -1);
  std::vector<kernels::ArgmaxPair> many(kernels::kMaxArgmaxPartials);
  for (int i = 0; i < int(many.size()); ++i) many[i] = {float(i % 7), 1000 - i};
  CHECK(combine(many) == 1000 - 251);  // value 6 at i = 6, 13, ..., 251: the last has the lowest id
}

TEST_CASE("split argmax: the chain's device transform on every logit; a done loop skips") {
  const int n = 5003;  // five slices
  auto row = random_floats(n, 71, -1.0f, 1.0f);
  row[4000] = 50.0f;  // the winner, masked below
  BoostMask::device_params p{4000, 17};
  BoostMask::device_state st{0.0f};
  int want = 0;
  for (int i = 0; i < n; ++i)
    if (i != 4000 && row[i] > row[want]) want = i;
  CHECK(split_argmax<BoostMask>(row, p, &st) == want);
  st.add = 100.0f;  // id 17's logit + 100 beats everything left
  CHECK(split_argmax<BoostMask>(row, p, &st) == 17);

  using KP = kernels::ArgmaxPartialKernel<kernels::PlainLogits>;
  const std::int32_t done = 1;
  std::vector<kernels::ArgmaxPair> partials(5, kernels::ArgmaxPair{-3.0f, -3});
  run_on_host_grid<KP>(
      KP::config(n),
      {row.data(), n, kernels::argmax_split(n).chunk, {}, nullptr, &done, partials.data()});
  for (const auto& q : partials) CHECK((q.value == -3.0f && q.id == -3));
}

TEST_CASE("decode step: the winner of the vocabulary's slices, accepted; a done loop skips") {
  using Part = kernels::ArgmaxPartialKernel<BoostMask>;
  using Step = kernels::DecodeStepKernel<BoostMask>;
  const int n = 5003;  // five slices
  const grid::Slices split = kernels::argmax_split(n);
  auto row = random_floats(n, 91, -1.0f, 1.0f);
  row[n - 1] = row[1500] = 9.0f;  // a tie between slices 1 and 4: id 1500
  row[4000] = 50.0f;              // masked
  std::vector<std::int32_t> loop(kernels::kLoopStateWords + 4, 0);
  kernels::DeviceLoopState st;
  st.step = kernels::state_after_prompt(10, 0, -1, 4);  // the next write at 10, 4 tokens
  std::memcpy(loop.data(), &st, sizeof(st));
  std::vector<kernels::ArgmaxPair> partials(kernels::kMaxArgmaxPartials);
  BoostMask::device_state chain{0.0f, 0};
  kernels::ForwardDesc desc{-1, -1};
  std::int32_t token = -1;
  Part::Args pa{row.data(),     n,      split.chunk,
                {4000, 17},     &chain, loop.data() + kernels::kLoopDoneWord,
                partials.data()};
  Step::Args sa{};
  sa.partials = partials.data();
  sa.n_partials = split.count;
  sa.loop = loop.data();
  sa.params = pa.params;
  sa.chain_state = &chain;
  sa.desc = &desc;
  sa.tokens = &token;
  const auto step = [&] {
    run_on_host_grid<Part>(Part::config(n), pa);
    run_on_host_grid<Step>(Step::config(), sa);
    std::memcpy(static_cast<void*>(&st), loop.data(), sizeof(st));
  };
  step();
  CHECK(st.step.steps == 1);
  CHECK(loop[kernels::kLoopStateWords] == 1500);
  CHECK((desc.first_pos == 10 && desc.tokens == 1 && token == 1500));
  chain.add = 100.0f;  // id 17 now beats everything left
  step();
  CHECK(loop[kernels::kLoopStateWords + 1] == 17);
  chain.add = 0.0f;
  row[n - 1] = 20.0f;  // the winner in the last slice
  step();
  CHECK(loop[kernels::kLoopStateWords + 2] == n - 1);
  CHECK(chain.advanced == 3);
  // Once done, the partials are not rewritten and the step changes nothing.
  loop[kernels::kLoopDoneWord] = 1;
  std::fill(partials.begin(), partials.end(), kernels::ArgmaxPair{-3.0f, -3});
  const std::vector<std::int32_t> before = loop;
  step();
  CHECK(loop == before);
  CHECK(chain.advanced == 3);
  CHECK((partials[0].value == -3.0f && partials[0].id == -3));
}

TEST_CASE("bias add and widen") {
  using KB = kernels::BiasAddKernel;
  std::vector<float> y(3 * 10, 1.0f);
  const std::vector<float> bias = {1, 2, 3, 4, 5, 6, 7};
  run_on_host_grid<KB>(KB::config(3, 7), {y.data(), bias.data(), 3, 7, 10});
  for (int r = 0; r < 3; ++r)
    for (int j = 0; j < 10; ++j) REQUIRE(y[r * 10 + j] == (j < 7 ? 1.0f + bias[j] : 1.0f));
  using KW = kernels::WidenKernel<bf16>;
  const auto src = narrowed<bf16>(random_floats(2000, 61));
  std::vector<float> out(2000);
  run_on_host_grid<KW>(KW::config(2000), {src.data(), out.data(), 2000});
  for (int i = 0; i < 2000; ++i) REQUIRE(out[i] == widen(src[i]));
}

TEST_CASE("the host grid refuses a block size the kernel is not written for") {
  using K = kernels::ArgmaxCombineKernel;
  std::vector<kernels::ArgmaxPair> partials(4);
  std::int32_t id = 0;
  CHECK_THROWS_AS(run_on_host_grid<K>({1, 1, 128}, {partials.data(), 4, &id}), usage_error);
  // A grid CUDA would not launch (grid_y past 65535: a LoRA expand of 70000 tokens) fails on
  // the host grid as it would on the device, before anything runs.
  using KE = kernels::LoraExpandKernel;
  CHECK_THROWS_AS(run_on_host_grid<KE>(KE::config(70000, 16), {}), usage_error);
}

TEST_CASE("block GEMV (Q8_0, Q4_0), dequantize and embedding gather against doubles") {
  for (const BlockFormat f : {BlockFormat::q8_0, BlockFormat::q4_0}) {
    CAPTURE(block_format_name(f));
    // 37 rows (not a multiple of 8 per block), 1056 columns: 33 blocks, one lane takes two
    const int rows = 37, cols = 1056;
    const auto wf = random_floats(std::size_t(rows) * cols, 51);
    const std::size_t rb = block_row_bytes(f, cols);
    std::vector<std::uint8_t> bytes(rows * rb);
    for (int r = 0; r < rows; ++r)
      quantize_row(f, wf.data() + std::size_t(r) * cols, cols, bytes.data() + r * rb);
    const BlockView w{bytes.data(), f};
    const auto x = random_floats(cols, 52), bias = random_floats(rows, 53);
    for (const int accumulate : {0, 1}) {
      std::vector<float> y(rows, 0.5f);
      using K = kernels::GemvBlocksKernel;
      run_on_host_grid<K>(K::config(rows),
                          {w, x.data(), y.data(), bias.data(), rows, cols, accumulate});
      for (int r = 0; r < rows; ++r) {
        double want = (accumulate ? 0.5 : 0.0) + bias[r], mag = std::abs(bias[r]);
        for (int c = 0; c < cols; ++c) {
          const double p = double(block_element(w, r, c, cols)) * x[c];
          want += p;
          mag += std::abs(p);
        }
        CHECK(std::abs(y[r] - want) <= 1e-5 * mag + 1e-6);
      }
    }
    std::vector<float> deq(std::size_t(rows) * cols);
    using KD = kernels::DequantizeKernel;
    run_on_host_grid<KD>(KD::config(deq.size()),
                         {w, deq.data(), std::size_t(rows), std::size_t(cols)});
    int wrong = 0;
    for (int r = 0; r < rows; ++r)
      for (int c = 0; c < cols; ++c) {
        const float v = deq[std::size_t(r) * cols + c];
        wrong += v != block_element(w, r, c, cols);
        // and each value is its weight within half a quantization step (the block's scale)
        wrong += std::abs(v - wf[std::size_t(r) * cols + c]) > 0.2f;
      }
    CHECK(wrong == 0);
    const std::int32_t tokens[2] = {36, 3};
    std::vector<float> out(2 * cols);
    if (f == BlockFormat::q8_0) {
      using KE = kernels::EmbedKernel<q8_0>;
      run_on_host_grid<KE>(KE::config(2), {w, tokens, out.data(), cols});
    } else {
      using KE = kernels::EmbedKernel<q4_0>;
      run_on_host_grid<KE>(KE::config(2), {w, tokens, out.data(), cols});
    }
    for (int t = 0; t < 2; ++t)
      for (int c = 0; c < cols; ++c)
        CHECK(out[std::size_t(t) * cols + c] == deq[std::size_t(tokens[t]) * cols + c]);
  }
}
