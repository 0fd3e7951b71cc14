// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// The relay's hand-off and gate on the GPU (part of test_cuda_device, which exits 77 without
// one) against the host grid, which test_device_handoff checks against the host relay: the
// hand-off and gate kernels on the same inputs, then a three-stage relay on golden qwen-c with
// literal + request + out wirings, feedback of a stage that runs again before its reader
// (loop_from 0), and a built-in gate that fails in cycle 1 and passes in cycle 2 — equal
// outputs, verdict and cycles, every input handed off and the gate evaluated on the device,
// and exactly one host wait per stage run through the context's counter.
#include <doctest/doctest.h>

#include <numeric>
#include <optional>
#include <vector>

#include "baton/grid/host_grid.hpp"
#include "baton/kernels/phased/gate.hpp"
#include "baton/kernels/phased/handoff.hpp"
#include "baton/model/cuda_forward.cuh"
#include "baton/model/host_grid_forward.hpp"
#include "baton/relay/engine.hpp"
#include "golden_loop_case.hpp"

using namespace baton;
using namespace baton::test::golden_loop;

namespace {

constexpr KvShape kShape{.prefix_capacity = 16, .tail_capacity = 48, .slots = 1};

DeviceBuffer<std::int32_t> up(const std::vector<std::int32_t>& v) {
  return baton::cuda::upload(std::span<const std::int32_t>(v));
}
std::vector<std::int32_t> down(const DeviceBuffer<std::int32_t>& b) {
  std::vector<std::int32_t> v(b.size());
  baton::cuda::download(b, std::span<std::int32_t>(v));
  return v;
}
std::int32_t* dev(DeviceBuffer<std::int32_t>& b) { return b.data().get(); }

}  // namespace

TEST_CASE("hand-off and gate kernels on the GPU = the host grid") {
  CudaContext ctx;
  std::vector<std::int32_t> a(300), b = {7, 8, 9}, c = {40, 41, 42, 43, 44};
  std::iota(a.begin(), a.end(), 1000);
  auto da = up(a), db = up(b), dc = up(c), dlen = up({4});
  using K = kernels::HandoffKernel;
  const auto args = [](const std::int32_t* pa, const std::int32_t* pb, const std::int32_t* pc,
                       const std::int32_t* len, std::int32_t* dst, std::int32_t* total) {
    K::Args x;
    x.segments[0] = {pb, nullptr, 3};
    x.segments[1] = {pc, len, 0};
    x.segments[2] = {pa, nullptr, 300};
    x.segments[3] = {pb, nullptr, 2};
    x.n_segments = 4;
    x.dst = dst;
    x.capacity = 400;
    x.total = total;
    return x;
  };
  std::vector<std::int32_t> host_dst(400, -1), host_total{-1};
  const std::int32_t host_len = 4;
  grid::run_on_host_grid<K>(K::config(), args(a.data(), b.data(), c.data(), &host_len,
                                              host_dst.data(), host_total.data()));
  auto ddst = up(std::vector<std::int32_t>(400, -1)), dtotal = up({-1});
  grid::launch_on_device<K>(K::config(),
                            args(dev(da), dev(db), dev(dc), dev(dlen), dev(ddst), dev(dtotal)),
                            ctx.stream());
  ctx.synchronize();
  CHECK(host_total[0] == 308);
  CHECK(down(ddst) == host_dst);
  CHECK(down(dtotal) == host_total);

  // The gate over an output longer than a block, with the needle past the first 256 offsets.
  std::vector<std::int32_t> ids(600);
  for (int i = 0; i < 600; ++i) ids[i] = i % 50;
  ids[555] = 77;
  ids[556] = 78;
  auto dids = up(ids);
  using G = kernels::GateKernel;
  for (const auto& [needle, len] : std::vector<std::pair<std::vector<std::int32_t>, int>>{
           {{77, 78}, 600}, {{77, 78}, 556}, {{0, 1, 2}, 600}, {{1, 2}, 600}, {{}, 0}}) {
    for (const std::int32_t mode : {kernels::kGateStartsWith, kernels::kGateContains}) {
      CAPTURE(len);
      CAPTURE(mode);
      const std::int32_t n = static_cast<std::int32_t>(needle.size());
      std::int32_t host_pass = -1;
      grid::run_on_host_grid<G>(G::config(),
                                {{mode, needle.data(), n}, ids.data(), &len, &host_pass});
      auto dneedle = up(needle.empty() ? std::vector<std::int32_t>{0} : needle);
      auto dl = up({len}), dpass = up({-1});
      grid::launch_on_device<G>(
          G::config(), {{mode, dev(dneedle), n}, dev(dids), dev(dl), dev(dpass)}, ctx.stream());
      ctx.synchronize();
      CHECK(down(dpass)[0] == host_pass);
    }
  }
}

namespace {
template <class B>
RelayResult three_stage_relay(CudaContext* ctx, const Gate& gate) {
  using M = BaseModel<B, bf16>;
  using S = LoraSlice<16, B>;
  using St = Stage<M, S, KvBuffer<L, B>>;
  const M model = load_model<B, bf16>(golden() / "qwen-c");
  const auto in = [](std::vector<Segment> segs) { return wire::DynamicInput{std::move(segs)}; };
  St first("extract", model, S::load(golden() / "qwen-c-lora-all", model), kShape, kPrefix,
           in({Segment{Segment::Kind::literal, -1, {9, 10}}, Segment{Segment::Kind::request},
               Segment{Segment::Kind::feedback, 2}}),
           {5, {}});
  St second("reason", model, S::none(model.config()), kShape, {1, 2},
            in({Segment{Segment::Kind::literal, -1, {9}}, Segment{Segment::Kind::output, 0}}),
            {6, {}});
  St third("verify", model, S::load(golden() / "qwen-c-lora-all", model), kShape, {3},
           in({Segment{Segment::Kind::output, 1}, Segment{Segment::Kind::feedback, 0},
               Segment{Segment::Kind::literal, -1, {4}}}),
           {4, {}});
  if constexpr (std::is_same_v<B, baton::cuda>) {
    for (auto* st : {&first, &second, &third})
      for (Workspace<B>& ws : st->workspaces()) ws.extras.bind(*ctx);
  }
  RelayEngine<B> engine({&first, &second, &third});
  engine.prewarm();
  RelayOptions opt;
  opt.max_cycles = 3;
  opt.loop_from = 0;
  opt.gate = gate;
  const long before = ctx ? ctx->host_waits() : 0;
  RelayResult r = engine.run(kRequest, opt);
  if (ctx) CHECK(ctx->host_waits() - before == static_cast<long>(r.runs.size()));
  return r;
}
}  // namespace

TEST_CASE("a relay handed off and gated on the GPU = the same relay on the host grid") {
  CudaContext ctx;
  const RelayResult g0 = three_stage_relay<host_grid>(nullptr, never());
  REQUIRE(g0.runs.size() == 9);
  const std::vector<std::int32_t>& v1 = g0.output(2, 1);
  const std::vector<std::int32_t>& v2 = g0.output(2, 2);
  // A gate that fails in cycle 1 and passes in cycle 2, when the outputs allow one.
  std::optional<Gate> gate;
  for (std::size_t at = 0; at + 1 <= v2.size() && !gate; ++at)
    if (!contains({v2[at]})(v1)) gate = contains({v2[at]});
  const std::vector<Gate> gates =
      gate ? std::vector<Gate>{never(), *gate, starts_with({v1.begin(), v1.end()})}
           : std::vector<Gate>{never(), starts_with({v1.begin(), v1.end()})};
  for (const Gate& gt : gates) {
    CAPTURE(static_cast<int>(gt.kind()));
    const RelayResult g = three_stage_relay<host_grid>(nullptr, gt);
    const RelayResult c = three_stage_relay<baton::cuda>(&ctx, gt);
    REQUIRE(c.runs.size() == g.runs.size());
    for (std::size_t i = 0; i < c.runs.size(); ++i) {
      CAPTURE(i);
      CHECK(c.runs[i].ids == g.runs[i].ids);
      CHECK(c.runs[i].input_tokens == g.runs[i].input_tokens);
      CHECK(c.runs[i].input_on_device);
      CHECK(c.runs[i].host_waits == 1);
    }
    CHECK(c.verdict == g.verdict);
    CHECK(c.cycles == g.cycles);
    CHECK(c.runs.back().gate_on_device == gt.built_in());
  }
}
