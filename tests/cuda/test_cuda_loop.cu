// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// The device-resident decode loop on the GPU (part of test_cuda_device, which exits 77 without
// one) against the same loop on the host grid — which test_device_loop checks against the host
// backend — on golden qwen-c with its all-projection adapter, bf16 weights on both sides:
// prefill logits, greedy tokens with stop ids and max_new, a device deny set, the forced
// write-position mismatch (position_error, prefix intact, next request correct), one host wait
// per generation through the context's counter, the step graph captured once and updated in
// place (and a small graph-replay case for the GPU check's sanitizers), a two-stage relay equal
// to the host grid's with one wait per stage run, and a relay built at run time
// (build_relay_as_on<cuda>) with a device deny set equal to the host grid's; a sampled
// generation on the device (one wait, repeatable for a seed, top_k 1 equal to greedy).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <type_traits>
#include <vector>

#include "baton/intercept/token_set.hpp"
#include "baton/model/cuda_forward.cuh"
#include "baton/model/host_grid_forward.hpp"
#include "baton/relay/cuda_relay.cuh"
#include "golden_loop_case.hpp"

using namespace baton;
using namespace baton::test::golden_loop;

namespace {

constexpr KvShape kShape{.prefix_capacity = 16, .tail_capacity = 40, .slots = 1};

template <class B>
struct Rig {
  BaseModel<B, bf16> model = load_model<B, bf16>(golden() / "qwen-c");
  LoraSlice<16, B> slice = LoraSlice<16, B>::load(golden() / "qwen-c-lora-all", model);
  KvBuffer<L, B> cache{model.config(), kShape};
  Workspace<B> ws;
  /// `ctx`: the context a cuda workspace is bound to before anything runs (null: none).
  explicit Rig(CudaContext* ctx = nullptr) {
    if constexpr (std::is_same_v<B, baton::cuda>) {
      if (ctx) ws.extras.bind(*ctx);
    }
    cache.reset_prefix();
    forward(model, ws, slice, cache, KvTarget::prefix(), 0, std::span(kPrefix), Logits::none);
    cache.freeze_prefix();
  }
  template <class Chain = NoInterceptors>
  DecodeResult decode(const DecodeOptions& opt, const Chain& chain = {}, int skew = 0) {
    RequestState<Chain, B> request;
    auto& branch = request.open(chain, "s", "s", opt.max_new);
    cache.rewind(0);
    Decoder<BaseModel<B, bf16>, LoraSlice<16, B>, KvBuffer<L, B>, Chain> d(
        model, slice, cache, ws, KvTarget::in_slot(0), opt, chain, branch, "s");
    d.prefill(kRequest, cache.prefix_length());
    d.set_position_skew_for_testing(skew);
    d.run();
    return d.take_result();
  }
};

std::vector<float> prefix_kv(Rig<baton::cuda>& r) {
  std::vector<float> out;
  for (int layer = 0; layer < r.cache.num_layers(); ++layer) {
    const KvSpan<L> s = r.cache.read_span(KvTarget::prefix(), layer, r.cache.prefix_length());
    const std::size_t n = static_cast<std::size_t>(s.a.kv_heads) * s.a.capacity * L::head_dim;
    std::vector<float> k(n), v(n);
    baton::cuda::download(DevicePtr<const float>(s.a.k), std::span(k));
    baton::cuda::download(DevicePtr<const float>(s.a.v), std::span(v));
    out.insert(out.end(), k.begin(), k.end());
    out.insert(out.end(), v.begin(), v.end());
  }
  return out;
}

}  // namespace

TEST_CASE("device loop on the GPU = the host grid: logits, tokens, stop ids, one wait") {
  Rig<host_grid> g;
  Rig<baton::cuda> c;
  CudaContext ctx;
  c.ws.extras.bind(ctx);
  // Prefill logits: identical bf16 weights and f32 math on both sides, so only summation order
  // differs (golden.json's 1e-3, which the host grid meets against llama.cpp).
  c.cache.rewind(0);
  g.cache.rewind(0);
  const auto got =
      download_logits(forward(c.model, c.ws, c.slice, c.cache, KvTarget::in_slot(0),
                              c.cache.prefix_length(), std::span(kRequest), Logits::last));
  const auto lg = forward(g.model, g.ws, g.slice, g.cache, KvTarget::in_slot(0),
                          g.cache.prefix_length(), std::span(kRequest), Logits::last);
  REQUIRE(got.size() == lg.size());
  double worst = 0;
  for (std::size_t i = 0; i < got.size(); ++i)
    worst = std::max(worst, double(std::abs(got[i] - lg[i])));
  MESSAGE("prefill logits: max |cuda - host grid| = " << worst);
  CHECK(worst <= 1e-3);

  const DecodeResult gr = g.decode({12, {}});
  REQUIRE(gr.ids.size() == 12);
  long before = ctx.host_waits();
  const DecodeResult cr = c.decode({12, {}});
  CHECK(ctx.host_waits() - before == 1);  // the one read at the end, nothing per token
  CHECK(cr.host_waits == 1);
  CHECK(cr.ids == gr.ids);
  CHECK(cr.forwards == gr.forwards);
  CHECK(c.cache.position(KvTarget::in_slot(0)) == g.cache.position(KvTarget::in_slot(0)));

  const DecodeOptions stop{12, {gr.ids[4], 3}};
  const DecodeResult gs = g.decode(stop);
  REQUIRE(gs.stop_id == gr.ids[4]);
  before = ctx.host_waits();
  const DecodeResult cs = c.decode(stop);
  CHECK(ctx.host_waits() - before == 1);
  CHECK(cs.ids == gs.ids);
  CHECK(cs.stop_id == gs.stop_id);
  // Two runs, one graph: captured at each run, instantiated once, updated in place after.
  CHECK(c.ws.extras.step_graph().captures() == 2);
  CHECK(c.ws.extras.step_graph().instantiations() == 1);

  using C = Chain<TokenSet<host_grid>>;
  using CC = Chain<TokenSet<baton::cuda>>;
  const std::vector<std::int32_t> deny{gr.ids[0], gr.ids[2]};
  const DecodeResult gd = g.decode({12, {}}, C(TokenSet<host_grid>(TokenSetMode::deny, deny, 384)));
  REQUIRE(gd.ids[0] != gr.ids[0]);
  before = ctx.host_waits();
  const DecodeResult cd =
      c.decode({12, {}}, CC(TokenSet<baton::cuda>(TokenSetMode::deny, deny, 384)));
  CHECK(ctx.host_waits() - before == 1);
  CHECK(cd.ids == gd.ids);
}

TEST_CASE("device loop on the GPU samples on the device: one wait, repeatable, top_k 1 = greedy") {
  Rig<host_grid> g;
  Rig<baton::cuda> c;
  CudaContext ctx;
  c.ws.extras.bind(ctx);
  DecodeOptions opt{12, {}};
  opt.sampling.params = {.temperature = 0.9f, .top_k = 20, .top_p = 0.9f, .repeat_penalty = 1.2f};
  opt.sampling.seed = 42;
  opt.sampling.logprobs = true;
  opt.sampling.top_logprobs = 3;
  long before = ctx.host_waits();
  const DecodeResult first = c.decode(opt);
  CHECK(ctx.host_waits() - before == 1);  // sampled on the device: still the one read
  CHECK(first.host_waits == 1);
  REQUIRE(first.ids.size() == 12);
  CHECK(first.logprobs.size() == first.ids.size());
  for (const TokenLogprobs& t : first.logprobs) {
    CHECK(t.logprob <= 0.0f);
    CHECK(t.n_top == 3);
  }
  CHECK(c.decode(opt).ids == first.ids);  // the same seed, the same draws
  // The host grid runs the same math over logits within 1e-3 of these (and its own expf): the
  // draws agree unless a uniform falls within that of a boundary; reported, not asserted.
  const DecodeResult grid = g.decode(opt);
  const auto same =
      std::mismatch(first.ids.begin(), first.ids.end(), grid.ids.begin()).first - first.ids.begin();
  MESSAGE("sampled ids equal to the host grid's for the first " << same << " of 12");
  // top_k 1 keeps only the argmax: the greedy ids, exactly.
  DecodeOptions one = opt;
  one.sampling.params = {.temperature = 1.0f, .top_k = 1};
  CHECK(c.decode(one).ids == c.decode({12, {}}).ids);
}

// The small case the GPU check runs under compute-sanitizer (memcheck, racecheck, synccheck):
// the workspace is bound to a context with its own stream from the start, so the loop's step is
// captured into the workspace's CUDA graph and replayed (max_new 4: three replays per run), not
// queued directly as on the legacy stream. The second run updates the instantiated graph in place.
TEST_CASE("device loop on the GPU: graph replay on a context's own stream (sanitizer case)") {
  CudaContext ctx;
  REQUIRE(ctx.stream() != nullptr);  // the legacy default stream cannot be captured
  Rig<baton::cuda> c(&ctx);
  Rig<host_grid> g;
  const DecodeOptions opt{4, {}};
  const DecodeResult want = g.decode(opt);
  REQUIRE(want.ids.size() == 4);
  const CudaGraph& graph = c.ws.extras.step_graph();
  long before = ctx.host_waits();
  const DecodeResult first = c.decode(opt);
  CHECK(ctx.host_waits() - before == 1);
  CHECK(graph.captures() == 1);
  CHECK(graph.instantiations() == 1);
  CHECK(first.ids == want.ids);
  before = ctx.host_waits();
  const DecodeResult second = c.decode(opt);
  CHECK(ctx.host_waits() - before == 1);
  CHECK(graph.captures() == 2);
  CHECK(graph.instantiations() == 1);
  CHECK(second.ids == want.ids);
  CHECK(second.host_waits == 1);
}

TEST_CASE("device loop on the GPU: a forced position mismatch is a position_error, prefix intact") {
  Rig<baton::cuda> c;
  Rig<host_grid> g;
  const std::vector<float> before = prefix_kv(c);
  const int after_prefill = c.cache.prefix_length() + static_cast<int>(kRequest.size());
  CHECK_THROWS_AS(c.decode({8, {}}, NoInterceptors{}, 1), position_error);
  CHECK(c.cache.position(KvTarget::in_slot(0)) == after_prefill);
  CHECK(prefix_kv(c) == before);
  CHECK(c.decode({8, {}}).ids == g.decode({8, {}}).ids);
  CHECK(prefix_kv(c) == before);
}

namespace {
template <class B>
RelayResult two_stage_relay(CudaContext* ctx) {
  using M = BaseModel<B, bf16>;
  using S = LoraSlice<16, B>;
  using St = Stage<M, S, KvBuffer<L, B>>;
  const M model = load_model<B, bf16>(golden() / "qwen-c");
  St first("extract", model, S::load(golden() / "qwen-c-lora-all", model), kShape, kPrefix,
           wire::DynamicInput{{Segment{Segment::Kind::request}}}, {6, {}});
  St second("verify", model, S::none(model.config()), kShape, {1, 2},
            wire::DynamicInput{
                {Segment{Segment::Kind::literal, -1, {9}}, Segment{Segment::Kind::output, 0}}},
            {5, {}});
  if constexpr (std::is_same_v<B, baton::cuda>) {
    for (auto* st : {&first, &second})
      for (Workspace<B>& ws : st->workspaces()) ws.extras.bind(*ctx);
  }
  RelayEngine<B> engine({&first, &second});
  engine.prewarm();
  RelayOptions opt;
  opt.max_cycles = 2;
  opt.loop_from = 0;
  opt.gate = never();
  const long before = ctx ? ctx->host_waits() : 0;
  RelayResult r = engine.run(kRequest, opt);
  if (ctx) CHECK(ctx->host_waits() - before == static_cast<long>(r.runs.size()));
  return r;
}
}  // namespace

TEST_CASE("a relay on the GPU = the same relay on the host grid, one wait per stage run") {
  CudaContext ctx;
  const RelayResult g = two_stage_relay<host_grid>(nullptr);
  const RelayResult c = two_stage_relay<baton::cuda>(&ctx);
  REQUIRE(c.runs.size() == 4);
  REQUIRE(g.runs.size() == c.runs.size());
  for (std::size_t i = 0; i < c.runs.size(); ++i) {
    CAPTURE(i);
    CHECK(c.runs[i].ids == g.runs[i].ids);
    CHECK(c.runs[i].host_waits == 1);
  }
}

TEST_CASE("a run-time relay on the GPU (build_relay_as_on<cuda>) = the same on the host grid") {
  const nlohmann::json j = {{"model", golden() / "qwen-c"},
                            {"stages",
                             {{{"name", "extract"},
                               {"prefix", kPrefix},
                               {"input", {{{"ids", {9, 10}}}, {{"request", true}}}},
                               {"max_new", 6},
                               {"interceptors", {{{"deny_tokens", {kRequest[1], kRequest[4]}}}}}},
                              {{"name", "verify"},
                               {"adapter", golden() / "qwen-c-lora-all"},
                               {"input", {{{"out", "extract"}}, {{"ids", {3}}}}},
                               {"max_new", 5},
                               {"stop", {0}}}}}};
  const auto file = std::filesystem::temp_directory_path() / "baton_cuda_loop_relay.json";
  std::ofstream(file) << j.dump(2);
  const RelaySpec spec = load_relay_spec(file);
  const auto c = build_relay_as_on<baton::cuda, f32, 8, family::Qwen2, Batching::without>(spec);
  const auto g = build_relay_as_on<host_grid, f32, 8, family::Qwen2, Batching::without>(spec);
  CHECK(c->backend_name() == "cuda");
  c->prewarm();
  g->prewarm();
  const RelayResult rc = c->run(kRequest);
  const RelayResult rg = g->run(kRequest);
  REQUIRE(rc.runs.size() == 2);
  REQUIRE(rg.runs.size() == 2);
  for (std::size_t i = 0; i < rc.runs.size(); ++i) {
    CAPTURE(i);
    CHECK(rc.runs[i].ids == rg.runs[i].ids);
    CHECK(rc.runs[i].host_waits == 1);
  }
}

TEST_CASE("a run-time relay batched on the GPU (forward_batch, cuBLAS GEMM) = each request alone") {
  // Four requests at once through RuntimeRelay::batched on the GPU: rows of both stages in one
  // forward (GridBatchOps on CudaExec), each request's stage runs equal to the same request run
  // alone through the relay on the host grid.
  const nlohmann::json j = {{"model", golden() / "qwen-c"},
                            {"stages",
                             {{{"name", "extract"},
                               {"prefix", kPrefix},
                               {"input", {{{"ids", {9, 10}}}, {{"request", true}}}},
                               {"max_new", 6}},
                              {{"name", "verify"},
                               {"adapter", golden() / "qwen-c-lora-all"},
                               {"input", {{{"out", "extract"}}, {{"ids", {3}}}}},
                               {"max_new", 5}}}}};
  const auto file = std::filesystem::temp_directory_path() / "baton_cuda_batched_relay.json";
  std::ofstream(file) << j.dump(2);
  RelaySpec spec = load_relay_spec(file);
  spec.slots = 4;  // each stage serves the four requests at once
  const auto c = build_relay_as_on<baton::cuda, f32, 8>(spec);
  const auto g = build_relay_as_on<host_grid, f32, 8, family::Qwen2, Batching::without>(spec);
  c->prewarm();
  g->prewarm();
  const std::vector<std::vector<std::int32_t>> requests{
      kRequest, {4, 8, 15}, {16, 23, 42, 108, 7, 9, 1}, {301}};
  const auto sched = c->batched({});
  std::vector<Ticket> tickets;
  for (const auto& r : requests) tickets.push_back(sched->submit(r));
  int most_rows = 0;
  while (!sched->idle()) most_rows = std::max(most_rows, sched->step().rows);
  CHECK(most_rows > 1);
  for (std::size_t k = 0; k < requests.size(); ++k) {
    CAPTURE(k);
    const auto got = sched->take(tickets[k]);
    REQUIRE(got.has_value());
    const RelayResult want = g->run(requests[k]);
    REQUIRE(got->runs.size() == want.runs.size());
    for (std::size_t i = 0; i < want.runs.size(); ++i) CHECK(got->runs[i].ids == want.runs[i].ids);
  }
}
