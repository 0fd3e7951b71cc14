// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// Every phased kernel of the CUDA backend (kernels/phased/) on the host grid, with the launch
// configuration the device gets, against naive double-precision loops written here: random
// inputs, shapes that are not multiples of the block size, every GQA ratio of the golden
// fixtures (8/2, 5/5) plus 4/1, contexts long enough to split across blocks (with empty
// splits), prefix + tail spans, and strides wider than the rows.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "baton/backend/host.hpp"
#include "baton/grid/host_grid.hpp"
#include "baton/kernels/phased/argmax_block.hpp"
#include "baton/kernels/phased/attention_split.hpp"
#include "baton/kernels/phased/elementwise.hpp"
#include "baton/kernels/phased/embed.hpp"
#include "baton/kernels/phased/gemv.hpp"
#include "baton/kernels/phased/lora_delta.hpp"
#include "baton/kernels/phased/rmsnorm.hpp"
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
    for (int r = 0; r < rows; ++r) {
      double ss = 0;
      for (int i = 0; i < n; ++i) ss += double(x[r * ld + i]) * x[r * ld + i];
      const double inv = 1.0 / std::sqrt(ss / n + 1e-6);
      for (int i = 0; i < n; ++i) {
        const double want = x[r * ld + i] * inv * w[i];
        check_close(y[r * ld + i], want, std::abs(want), 1e-5, "rmsnorm", i);
      }
      for (int i = n; i < ld; ++i) REQUIRE(y[r * ld + i] == 7.0f);  // the gap is not written
    }
  }
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

TEST_CASE_TEMPLATE("batch-1 GEMV: 128-bit and scalar paths, bias, accumulate", W, f32, bf16, f16) {
  using K = kernels::GemvKernel<W>;
  struct Shape {
    int rows, cols;
    bool vectorized;
  };
  for (const Shape s :
       {Shape{1, 8, true}, Shape{37, 67, false}, Shape{13, 256, true}, Shape{300, 1536, true}}) {
    for (const bool with_bias : {false, true}) {
      for (const int accumulate : {0, 1}) {
        CAPTURE(s.rows);
        CAPTURE(s.cols);
        const auto wf = random_floats(std::size_t(s.rows) * s.cols, 41 + s.cols);
        HostBuffer<W> w(wf.size());
        for (std::size_t i = 0; i < wf.size(); ++i) w[i] = narrow<W>(wf[i]);
        HostBuffer<float> x(s.cols);
        const auto xf = random_floats(s.cols, 42);
        std::copy(xf.begin(), xf.end(), x.data());
        const auto bias = random_floats(s.rows, 43);
        const auto y0 = random_floats(s.rows, 44);
        std::vector<float> y = y0;
        const int vec = K::can_vectorize(w.data(), x.data(), s.cols);
        // 16-byte rows exist for every type at these widths except 67 columns.
        REQUIRE(bool(vec) == (s.vectorized && (s.cols * sizeof(W)) % 16 == 0));
        run_on_host_grid<K>(K::config(s.rows),
                            {w.data(), x.data(), y.data(), with_bias ? bias.data() : nullptr,
                             s.rows, s.cols, accumulate, vec});
        for (int r = 0; r < s.rows; ++r) {
          double want = (accumulate ? y0[r] : 0.0) + (with_bias ? bias[r] : 0.0), mag = 0;
          for (int i = 0; i < s.cols; ++i) {
            want += double(widen(w[std::size_t(r) * s.cols + i])) * x[i];
            mag += std::abs(double(widen(w[std::size_t(r) * s.cols + i])) * x[i]);
          }
          check_close(y[r], want, mag + 1.0, 1e-6, "gemv", r);
        }
      }
    }
  }
}

TEST_CASE("argmax kernel: lowest id on ties, -1 for NaN or +Inf, any row length") {
  using K = kernels::ArgmaxKernel;
  const auto run = [](const std::vector<float>& row) {
    std::int32_t id = -7;
    run_on_host_grid<K>(K::config(1), {row.data(), int(row.size()), int(row.size()), &id});
    return id;
  };
  for (const int n : {1, 37, 256, 257, 5003}) {
    CAPTURE(n);
    auto row = random_floats(n, 51 + n, -10.0f, 10.0f);
    int want = 0;
    for (int i = 1; i < n; ++i)
      if (row[i] > row[want]) want = i;
    CHECK(run(row) == want);
    if (n > 3) {
      row[n - 1] = row[2] = 20.0f;  // a tie: the lower id wins, wherever the threads meet it
      CHECK(run(row) == 2);
      row[n / 2] = NAN;
      CHECK(run(row) == -1);
      row[n / 2] = INFINITY;
      CHECK(run(row) == -1);
    }
  }
  // Two rows in one launch, row stride wider than the row.
  std::vector<float> two(2 * 300, 0.0f);
  two[17] = 1.0f;
  two[300 + 299] = 2.0f;
  two[250] = 99.0f;  // in the stride gap of row 0, outside n = 200: must be ignored
  std::int32_t ids[2] = {-7, -7};
  run_on_host_grid<K>(K::config(2), {two.data(), 200, 300, ids});
  CHECK(ids[0] == 17);
  CHECK(ids[1] == 0);  // row 1's first 200 entries are all 0: id 0
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
  using K = kernels::ArgmaxKernel;
  std::vector<float> row(4);
  std::int32_t id = 0;
  CHECK_THROWS_AS(run_on_host_grid<K>({1, 1, 128}, {row.data(), 4, 4, &id}), usage_error);
  // A grid CUDA would not launch (grid_y past 65535: a LoRA expand of 70000 tokens) fails on
  // the host grid as it would on the device, before anything runs.
  using KE = kernels::LoraExpandKernel;
  CHECK_THROWS_AS(run_on_host_grid<KE>(KE::config(70000, 16), {}), usage_error);
}
