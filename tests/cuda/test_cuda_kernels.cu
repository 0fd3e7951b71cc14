// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// The phased kernels and the whole forward on a GPU (part of test_cuda_device, which exits 77
// without one): each kernel on the device against the same kernel on the host grid, and the
// CUDA forward on every golden model and adapter against llama.cpp's outputs (the reference
// the host matches) plus f16 storage against the host grid, and the host-wait count of a
// greedy decode (one: the device loop's read).
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <vector>

#include "baton/grid/host_grid.hpp"
#include "baton/kernels/phased/argmax_split.hpp"
#include "baton/kernels/phased/attention_split.hpp"
#include "baton/kernels/phased/gemv.hpp"
#include "baton/kernels/phased/gemv_blocks.hpp"
#include "baton/kernels/phased/lora_delta.hpp"
#include "baton/kernels/phased/rmsnorm.hpp"
#include "baton/kernels/phased/rmsnorm_split.hpp"
#include "baton/kernels/phased/rope_append.hpp"
#include "baton/model/cuda_forward.cuh"
#include "baton/model/host_grid_forward.hpp"
#include "support/golden_runs.hpp"
#include "support/test_paths.hpp"

using namespace baton;

namespace {

std::vector<float> random_floats(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

template <class T>
DeviceBuffer<T> up(const std::vector<T>& v) {
  return baton::cuda::upload(std::span<const T>(v));
}
template <class T>
std::vector<T> down(const DeviceBuffer<T>& b) {
  std::vector<T> v(b.size());
  baton::cuda::download(b, std::span<T>(v));
  return v;
}
template <class T>
T* dev(DeviceBuffer<T>& b) {
  return b.data().get();
}

void check_near(const std::vector<float>& got, const std::vector<float>& want, double tol,
                const char* what) {
  REQUIRE(got.size() == want.size());
  double worst = 0;
  for (std::size_t i = 0; i < got.size(); ++i)
    worst = std::max(worst, double(std::abs(got[i] - want[i])));
  INFO(what << ": max |device - host grid| = " << worst);
  CHECK(worst <= tol);
}

}  // namespace

TEST_CASE("device kernels equal the host grid: GEMV (bf16, 128-bit, remainder, scalar, rounds)") {
  CudaContext ctx;
  using K = kernels::GemvKernel<bf16>;
  struct Shape {
    int rows, cols;
  };
  // 1536: unrolled loop and remainder; 1032: a one-pack remainder; 67: the scalar path;
  // 65535 x 8 + 13 rows of one pack: a second round past the capped grid.
  for (const Shape sh :
       {Shape{300, 1536}, Shape{37, 1032}, Shape{300, 67}, Shape{65535 * 8 + 13, 8}}) {
    CAPTURE(sh.rows);
    CAPTURE(sh.cols);
    const int rows = sh.rows, cols = sh.cols;
    const auto wf = random_floats(std::size_t(rows) * cols, 1);
    std::vector<bf16> w(wf.size());
    for (std::size_t i = 0; i < w.size(); ++i) w[i] = to_bf16(wf[i]);
    const auto x = random_floats(cols, 2), bias = random_floats(rows, 3);
    std::vector<float> y_host(rows, 0.5f);
    auto dw = up(w);
    auto dx = up(x);
    auto db = up(bias);
    auto dy = up(y_host);
    const int vec = K::can_vectorize(dev(dw), dev(dx), cols);
    CHECK(vec == (cols != 67));
    grid::launch_on_device<K>(
        K::config(rows), {dev(dw), dev(dx), dev(dy), dev(db), rows, cols, 1, vec}, ctx.stream());
    grid::run_on_host_grid<K>(K::config(rows),
                              {w.data(), x.data(), y_host.data(), bias.data(), rows, cols, 1, vec});
    ctx.synchronize();
    check_near(down(dy), y_host, 1e-4, "gemv");
  }
}

TEST_CASE("device kernels equal the host grid: block GEMV (Q8_0, Q4_0) and dequantize") {
  CudaContext ctx;
  for (const BlockFormat f : {BlockFormat::q8_0, BlockFormat::q4_0}) {
    CAPTURE(block_format_name(f));
    const int rows = 300, cols = 1536;
    const auto wf = random_floats(std::size_t(rows) * cols, 5);
    const std::size_t rb = block_row_bytes(f, cols);
    std::vector<std::uint8_t> bytes(rows * rb);
    for (int r = 0; r < rows; ++r)
      quantize_row(f, wf.data() + std::size_t(r) * cols, cols, bytes.data() + r * rb);
    const auto x = random_floats(cols, 6), bias = random_floats(rows, 7);
    std::vector<float> y_host(rows, 0.5f);
    auto dw = up(bytes);
    auto dx = up(x);
    auto db = up(bias);
    auto dy = up(y_host);
    using K = kernels::GemvBlocksKernel;
    grid::launch_on_device<K>(K::config(rows),
                              {BlockView{dev(dw), f}, dev(dx), dev(dy), dev(db), rows, cols, 1},
                              ctx.stream());
    grid::run_on_host_grid<K>(K::config(rows), {BlockView{bytes.data(), f}, x.data(), y_host.data(),
                                                bias.data(), rows, cols, 1});
    using KD = kernels::DequantizeKernel;
    DeviceBuffer<float> dd(std::size_t(rows) * cols);
    grid::launch_on_device<KD>(
        KD::config(dd.size()),
        {BlockView{dev(dw), f}, dev(dd), std::size_t(rows), std::size_t(cols)}, ctx.stream());
    ctx.synchronize();
    check_near(down(dy), y_host, 1e-4, "block gemv");
    std::vector<float> deq(std::size_t(rows) * cols);
    for (std::size_t e = 0; e < deq.size(); ++e)
      deq[e] = block_element(BlockView{bytes.data(), f}, e / cols, e % cols, cols);
    check_near(down(dd), deq, 0.0, "dequantize");
  }
}

TEST_CASE("device kernels equal the host grid: split argmax over a vocabulary") {
  CudaContext ctx;
  using KP = kernels::ArgmaxPartialKernel<kernels::PlainLogits>;
  using KC = kernels::ArgmaxCombineKernel;
  const int n = 151936;
  const grid::Slices split = kernels::argmax_split(n);
  auto logits = random_floats(n, 4);
  logits[100000] = logits[7] = 5.0f;  // a tie across blocks: id 7
  auto dl = up(logits);
  DeviceBuffer<kernels::ArgmaxPair> dparts(split.count);
  DeviceBuffer<std::int32_t> id(1);
  grid::launch_on_device<KP>(
      KP::config(n), {dev(dl), n, split.chunk, {}, nullptr, nullptr, dev(dparts)}, ctx.stream());
  grid::launch_on_device<KC>(KC::config(), {dev(dparts), split.count, dev(id)}, ctx.stream());
  std::vector<kernels::ArgmaxPair> parts(split.count);
  grid::run_on_host_grid<KP>(KP::config(n),
                             {logits.data(), n, split.chunk, {}, nullptr, nullptr, parts.data()});
  ctx.synchronize();
  CHECK(down(id)[0] == 7);
  const auto got = down(dparts);
  for (int b = 0; b < split.count; ++b) {
    CAPTURE(b);
    CHECK(got[b].id == parts[b].id);  // the same winner per slice, whatever the fold order
    CHECK(got[b].value == parts[b].value);
  }
  logits[n - 3] = NAN;
  auto dnan = up(logits);
  grid::launch_on_device<KP>(
      KP::config(n), {dev(dnan), n, split.chunk, {}, nullptr, nullptr, dev(dparts)}, ctx.stream());
  grid::launch_on_device<KC>(KC::config(), {dev(dparts), split.count, dev(id)}, ctx.stream());
  ctx.synchronize();
  CHECK(down(id)[0] == -1);
}

TEST_CASE("device kernels equal the host grid: RoPE + append, split attention + combine") {
  using L = layout::HeadMajor<bf16, 64>;
  constexpr int D = 64;
  const int nq = 8, nkv = 2, tokens = 3, capacity = 400, first_pos = 300;
  const int width = (nq + 2 * nkv) * D;
  CudaContext ctx;
  const auto qkv0 = random_floats(std::size_t(tokens) * width, 5);
  std::vector<float> inv(D / 2);
  for (int i = 0; i < D / 2; ++i) inv[i] = std::pow(10000.0f, -2.0f * i / D);
  // Host grid and device each write their own cache, pre-filled identically.
  const auto kv0f = random_floats(std::size_t(nkv) * capacity * D, 6);
  std::vector<bf16> kv0(kv0f.size());
  for (std::size_t i = 0; i < kv0.size(); ++i) kv0[i] = to_bf16(kv0f[i]);
  std::vector<bf16> hk = kv0, hv = kv0;
  auto dk = up(kv0), dv = up(kv0);
  std::vector<float> hqkv = qkv0;
  auto dqkv = up(qkv0);
  auto dinv = up(inv);
  const kernels::ForwardDesc desc{first_pos, tokens};
  auto ddesc = up(std::vector<kernels::ForwardDesc>{desc});

  using KR = kernels::RopeAppendKernel<L>;
  grid::run_on_host_grid<KR>(
      KR::config(tokens), {hqkv.data(), width, nq, nkv, inv.data(),
                           KvAppend<L>{KvBlock<L>{hk.data(), hv.data(), capacity, nkv}, 0}, &desc});
  grid::launch_on_device<KR>(
      KR::config(tokens),
      {dev(dqkv), width, nq, nkv, dev(dinv),
       KvAppend<L>{KvBlock<L>{dev(dk), dev(dv), capacity, nkv}, 0}, dev(ddesc)},
      ctx.stream());

  using KS = kernels::SplitAttentionKernel<L>;
  using KC = kernels::AttentionCombineKernel<D>;
  const kernels::AttentionSplit split = kernels::attention_split(capacity);
  const int splits = split.splits;
  const std::size_t rows = std::size_t(tokens) * nq;
  std::vector<float> hms(rows * splits * 2), hacc(rows * splits * D), hout(rows * D);
  DeviceBuffer<float> dms(hms.size()), dacc(hacc.size()), dout(hout.size());
  const kernels::AttentionPartials hp{hms.data(), hacc.data(), splits};
  const kernels::AttentionPartials dp{dev(dms), dev(dacc), splits};
  const float scale = 1.0f / std::sqrt(float(D));
  const KvSpan<L> hspan{KvBlock<L>{hk.data(), hv.data(), capacity, nkv}, first_pos + tokens, {}, 0};
  const KvSpan<L> dspan{KvBlock<L>{dev(dk), dev(dv), capacity, nkv}, first_pos + tokens, {}, 0};
  grid::run_on_host_grid<KS>(
      KS::config(tokens, nq, splits),
      {hspan, hqkv.data(), width, nq, nq / nkv, scale, &desc, hp, split.span});
  grid::run_on_host_grid<KC>(KC::config(tokens, nq), {hp, hout.data(), nq * D, nq});
  grid::launch_on_device<KS>(
      KS::config(tokens, nq, splits),
      {dspan, dev(dqkv), width, nq, nq / nkv, scale, dev(ddesc), dp, split.span}, ctx.stream());
  grid::launch_on_device<KC>(KC::config(tokens, nq), {dp, dev(dout), nq * D, nq}, ctx.stream());
  ctx.synchronize();
  check_near(down(dqkv), hqkv, 1e-5, "rope");
  const auto gk = down(dk);
  for (std::size_t i = 0; i < gk.size(); ++i)
    REQUIRE(std::abs(widen(gk[i]) - widen(hk[i])) <= 1e-2);
  check_near(down(dout), hout, 1e-4, "split attention");
}

TEST_CASE("device kernels equal the host grid: split RMSNorm of hidden-size rows") {
  CudaContext ctx;
  using KS = kernels::RmsSquaresKernel;
  using KN = kernels::RmsScaleKernel<float>;
  for (const int n : {1536, 4096, 5000}) {
    CAPTURE(n);
    const int rows = 3, ld = n + 3, chunk = kernels::rms_split(n).chunk;
    const grid::LaunchConfig cfg = kernels::rms_split_config(rows, n);
    const auto x = random_floats(std::size_t(rows) * ld, 13), w = random_floats(n, 14);
    std::vector<float> hy(x.size(), 0.0f), hsq(std::size_t(rows) * cfg.grid_x);
    auto dx = up(x), dw = up(w), dy = up(hy);
    DeviceBuffer<float> dsq(hsq.size());
    grid::run_on_host_grid<KS>(cfg, {x.data(), ld, n, chunk, hsq.data()});
    grid::run_on_host_grid<KN>(
        cfg, {x.data(), hy.data(), ld, ld, n, chunk, hsq.data(), w.data(), 1e-6f});
    grid::launch_on_device<KS>(cfg, {dev(dx), ld, n, chunk, dev(dsq)}, ctx.stream());
    grid::launch_on_device<KN>(cfg, {dev(dx), dev(dy), ld, ld, n, chunk, dev(dsq), dev(dw), 1e-6f},
                               ctx.stream());
    ctx.synchronize();
    check_near(down(dsq), hsq, 1e-3, "slice sums of squares");
    check_near(down(dy), hy, 1e-5, "split rmsnorm");
  }
}

TEST_CASE("device kernels equal the host grid: per-head RMSNorm and LoRA rank 64") {
  CudaContext ctx;
  using KN = kernels::RmsNormKernel<float>;
  const int tokens = 2, heads = 7, D = 128, width = heads * D + 9;
  const auto x = random_floats(std::size_t(tokens) * width, 7);
  const auto qw = random_floats(D, 8), kw = random_floats(D, 9);
  std::vector<float> hx = x;
  auto dx = up(x), dqw = up(qw), dkw = up(kw);
  grid::run_on_host_grid<KN>(KN::config(tokens * heads), {hx.data(), hx.data(), width, width, D,
                                                          heads, 5, qw.data(), kw.data(), 1e-6f});
  grid::launch_on_device<KN>(
      KN::config(tokens * heads),
      {dev(dx), dev(dx), width, width, D, heads, 5, dev(dqw), dev(dkw), 1e-6f}, ctx.stream());
  using KS = kernels::LoraShrinkKernel;
  using KE = kernels::LoraExpandKernel;
  const int rank = 64, in = 1536, out = 1000;
  const auto a = random_floats(std::size_t(rank) * in, 10),
             b = random_floats(std::size_t(out) * rank, 11);
  const auto lx = random_floats(std::size_t(tokens) * in, 12);
  std::vector<float> hy(std::size_t(tokens) * out, 0.25f), hu(std::size_t(tokens) * rank);
  auto da = up(a), dbm = up(b), dlx = up(lx), dy = up(hy);
  DeviceBuffer<float> du(hu.size());
  grid::run_on_host_grid<KS>(KS::config(tokens, rank),
                             {a.data(), lx.data(), in, in, rank, hu.data()});
  grid::run_on_host_grid<KE>(KE::config(tokens, out),
                             {b.data(), hu.data(), rank, out, 0.5f, hy.data(), out});
  grid::launch_on_device<KS>(KS::config(tokens, rank), {dev(da), dev(dlx), in, in, rank, dev(du)},
                             ctx.stream());
  grid::launch_on_device<KE>(KE::config(tokens, out),
                             {dev(dbm), dev(du), rank, out, 0.5f, dev(dy), out}, ctx.stream());
  ctx.synchronize();
  check_near(down(dx), hx, 1e-5, "head rmsnorm");
  check_near(down(dy), hy, 1e-3, "lora");
}

TEST_CASE("CUDA forward: every golden run (f32 and bf16 storage), tokens exact, logits 1e-3") {
  // The tolerance is golden.json's, the one the host meets: f32 math on both, only the
  // summation order differs (the host grid, same kernels, is at 6.8e-5). Each run's workspace
  // is bound to a context with its own stream, so the decode loop replays its captured step
  // (the path relays and `baton generate` take), and every run captured exactly once.
  CudaContext ctx;
  test::check_golden_runs<baton::cuda>(BATON_GOLDEN_DIR, BATON_GOLDEN_JSON,
                                       [&](Workspace<baton::cuda>& ws) { ws.extras.bind(ctx); });
  CHECK(ctx.counters().captures > 0);
  CHECK(ctx.counters().direct_steps == 0);
}

TEST_CASE("CUDA forward: f16 storage against the host grid; one host wait per generation") {
  const std::filesystem::path root = BATON_GOLDEN_DIR;
  const std::vector<std::int32_t> prompt = {5, 77, 300, 12, 9, 150, 42};
  const auto grid_model = load_model<host_grid, f16>(root / "qwen-c");
  const auto grid_slice = LoraSlice<16, host_grid>::load(root / "qwen-c-lora-all", grid_model);
  const auto model = load_model<baton::cuda, f16>(root / "qwen-c");
  const auto slice = LoraSlice<16, baton::cuda>::load(root / "qwen-c-lora-all", model);
  using L = layout::HeadMajor<f16, 8>;
  KvBuffer<L, host_grid> grid_cache(grid_model.config(), {0, 64, 1});
  KvBuffer<L, baton::cuda> cache(model.config(), {0, 64, 1});
  grid_cache.reset_prefix();
  grid_cache.freeze_prefix();
  cache.reset_prefix();
  cache.freeze_prefix();
  Workspace<host_grid> gws;
  Workspace<baton::cuda> ws;
  CudaContext ctx;
  ws.extras.bind(ctx);
  const auto want =
      test::download_logits(forward(grid_model, gws, grid_slice, grid_cache, KvTarget::in_slot(0),
                                    0, std::span(prompt), Logits::all));
  const auto got = download_logits(
      forward(model, ws, slice, cache, KvTarget::in_slot(0), 0, std::span(prompt), Logits::all));
  // Identical f16 weights and f16 K/V on both sides: what differs is summation order, and an
  // f16 rounding of a K/V element that lands on the other side of a tie (2^-11 relative).
  check_near(got, want, 5e-3, "f16 forward, all rows");
  grid_cache.reset_prefix();
  grid_cache.freeze_prefix();
  cache.reset_prefix();
  cache.freeze_prefix();
  const long before = ctx.host_waits();
  const DecodeResult r = greedy_decode(model, ws, slice, cache, KvTarget::in_slot(0), 0,
                                       std::span(prompt), DecodeOptions{10, {}});
  const auto& ids = r.ids;
  // The device-resident loop: one read of state and ids at the end, nothing per token.
  CHECK(ctx.host_waits() - before == 1);
  CHECK(r.host_waits == 1);
  const auto grid_ids = greedy_decode(grid_model, gws, grid_slice, grid_cache, KvTarget::in_slot(0),
                                      0, std::span(prompt), DecodeOptions{10, {}})
                            .ids;
  CHECK(ids == grid_ids);
}
