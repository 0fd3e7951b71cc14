// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// The device-resident decode loop (model/device_loop.hpp, kernels/phased/decode_step.hpp) run
// on the host grid — the same phased kernels the CUDA backend launches — against the host
// backend's stepped Decoder and relay: tokens, stop ids, max_new, a chain of device
// interceptors (deny set + stop sequence), the device-side write-position check forced to fail
// through the test hook (position_error, prefix intact, the next request correct), the
// capacity check before anything is queued, a three-stage relay with a gate, and a relay built
// at run time on the host grid (device deny set; a traced stage on the stepped loop).
#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <fstream>
#include <string>
#include <vector>

#include "baton/intercept/stop_sequences.hpp"
#include "baton/intercept/token_set.hpp"
#include "baton/model/host_grid_forward.hpp"
#include "baton/relay/runtime_relay_instances.hpp"  // build_relay, compiled once in dispatch/
#include "support/expect_error.hpp"
#include "support/relay_fixture.hpp"

using namespace baton;
using namespace baton::test;

namespace {

using L = layout::HeadMajor<f32, 8>;
const std::vector<std::int32_t> kPrefix = {3, 14, 15, 9, 26, 5, 35, 8};
const std::vector<std::int32_t> kRequest = {11, 12, 13, 30, 31};
constexpr KvShape kShape{.prefix_capacity = 16, .tail_capacity = 48, .slots = 2};

/// Model, one adapter and a pre-warmed cache on backend B, from the fixture's files.
template <Backend B>
struct Rig {
  BaseModel<B, f32> model;
  LoraSlice<8, B> slice;
  KvBuffer<L, B> cache;
  Workspace<B> ws;
  Rig(const RelayFixture& fx, int adapter, KvShape shape = kShape)
      : model(load_model<B, f32>(fx.dir / "model")),
        slice(LoraSlice<8, B>::load(fx.adapter_dir(adapter), model.config())),
        cache(model.config(), shape) {
    cache.reset_prefix();
    forward(model, ws, slice, cache, KvTarget::prefix(), 0, std::span<const std::int32_t>(kPrefix),
            Logits::none);
    cache.freeze_prefix();
  }
  /// One request on `slot` through Decoder::run (device-resident where B has a device loop,
  /// checked), or `stepped`: one Decoder::step at a time, whatever the backend.
  DecodeResult decode(const std::vector<std::int32_t>& input, const DecodeOptions& opt,
                      int slot = 0, bool stepped = false) {
    using Dec = Decoder<BaseModel<B, f32>, LoraSlice<8, B>, KvBuffer<L, B>>;
    cache.rewind(slot);
    Dec d(model, slice, cache, ws, KvTarget::in_slot(slot), opt);
    d.prefill(input, cache.prefix_length());
    if (stepped) {
      while (d.step()) {
      }
    } else {
      CHECK(d.device_loop_applies() == Dec::has_device_loop);
      d.run();
    }
    last_state = d.state();
    return d.take_result();
  }
  kernels::StepState last_state;  ///< the last decode()'s state at its end
  /// The K and V elements of every layer's prefix, to check it is never written.
  std::vector<float> prefix_kv() {
    std::vector<float> out;
    for (int layer = 0; layer < cache.num_layers(); ++layer) {
      const KvSpan<L> s = cache.read_span(KvTarget::prefix(), layer, cache.prefix_length());
      for (int h = 0; h < model.config().num_kv_heads; ++h)
        for (int p = 0; p < s.length(); ++p)
          for (int d = 0; d < L::head_dim; ++d) {
            out.push_back(s.key(h, p)[d]);
            out.push_back(s.value(h, p)[d]);
          }
    }
    return out;
  }
};

/// The one step state (kernels::StepState): the device loop hands back the very state the host's
/// stepped loop ends in, field by field.
void check_same_state(const kernels::StepState& grid, const kernels::StepState& host) {
  CHECK(grid.position == host.position);
  CHECK(grid.origin == host.origin);
  CHECK(grid.last_token == host.last_token);
  CHECK(grid.steps == host.steps);
  CHECK(grid.done == host.done);
  CHECK(grid.pending == host.pending);
  CHECK(grid.max_new == host.max_new);
  CHECK(grid.stop_id == host.stop_id);
  CHECK(grid.stopped_by == host.stopped_by);
}

void check_same(const DecodeResult& grid, const DecodeResult& host) {
  CHECK(grid.ids == host.ids);
  CHECK(grid.stopped == host.stopped);
  CHECK(grid.stop_id == host.stop_id);
  CHECK(grid.stopped_by == host.stopped_by);
  CHECK(grid.forwards == host.forwards);
  CHECK(grid.host_waits == 1);  // the device loop's one read
}

}  // namespace

TEST_CASE("device loop on the host grid = the host Decoder: tokens, stop ids, max_new") {
  const RelayFixture fx("device_loop");
  for (int adapter = 0; adapter < 3; ++adapter) {
    CAPTURE(adapter);
    Rig<host> h(fx, adapter);
    Rig<host_grid> g(fx, adapter);
    // max_new alone: the reference is also the no-cache naive model.
    const DecodeResult hr = h.decode(kRequest, {12, {}});
    REQUIRE(hr.ids.size() == 12);
    CHECK(hr.ids == fx.reference(adapter, kPrefix, kRequest, 12));
    const DecodeResult gr = g.decode(kRequest, {12, {}});
    check_same(gr, hr);
    check_same_state(g.last_state, h.last_state);
    CHECK((h.last_state.pending == 1 && h.last_state.steps == 12));  // the last id is not fed
    CHECK(g.cache.position(KvTarget::in_slot(0)) == h.cache.position(KvTarget::in_slot(0)));
    // A stop id taken from the run itself (its 5th token) ends both at the same step, with
    // ids that are not the stop's; a second stop id that never comes changes nothing.
    const std::int32_t stop = hr.ids[4];
    const DecodeOptions with_stop{12, {63, stop}};
    const DecodeResult hs = h.decode(kRequest, with_stop, 1);
    REQUIRE(hs.stopped);
    REQUIRE(hs.stop_id == stop);
    REQUIRE(hs.ids.size() < 12);
    check_same(g.decode(kRequest, with_stop, 1), hs);
    check_same_state(g.last_state, h.last_state);
    CHECK((h.last_state.stop_id == stop && h.last_state.pending == 0));
    CHECK(g.cache.position(KvTarget::in_slot(1)) == h.cache.position(KvTarget::in_slot(1)));
    // max_new = 1: the step on the prefill's logits only, no forward queued after it.
    const DecodeResult h1 = h.decode(kRequest, {1, {}});
    check_same(g.decode(kRequest, {1, {}}), h1);
  }
}

TEST_CASE("device loop on the host grid: a chain of device interceptors = the host Decoder") {
  const RelayFixture fx("device_loop_chain");
  // Synthetic bytes per id (two letters), so a stop sequence can span two tokens.
  TokenByteTable table;
  for (int id = 0; id < 64; ++id) table.push(std::string{char('a' + id % 26), char('A' + id / 26)});
  kernels::StepState last;  // the last run's state at its end
  const auto run = [&]<class B>(Rig<B>& rig, const std::vector<std::int32_t>& deny,
                                const std::string& stop) {
    using C = Chain<TokenSet<B>, StopSequences<B>>;
    const C chain(TokenSet<B>(TokenSetMode::deny, deny, 64), StopSequences<B>(table, {stop}));
    RequestState<C, B> request;
    auto& branch = request.open(chain, "verify", "verify", 16);
    const DecodeOptions opt{16, {}};
    rig.cache.rewind(0);
    Decoder<BaseModel<B, f32>, LoraSlice<8, B>, KvBuffer<L, B>, C> d(
        rig.model, rig.slice, rig.cache, rig.ws, KvTarget::in_slot(0), opt, chain, branch,
        "verify");
    d.prefill(kRequest, rig.cache.prefix_length());
    d.run();
    last = d.state();
    return d.take_result();
  };
  Rig<host> h(fx, 1);
  Rig<host_grid> g(fx, 1);
  // Deny the first two tokens the unconstrained run picks: the masked run differs from it.
  const DecodeResult free_run = h.decode(kRequest, {16, {}});
  const std::vector<std::int32_t> deny{free_run.ids[0], free_run.ids[1]};
  // The stop: the bytes of the masked run's tokens 3 and 4 (second letter of one, first of
  // the next), so it ends inside the run.
  const DecodeResult masked = run(h, deny, "\x01");  // a stop that never matches
  REQUIRE(masked.ids.size() == 16);
  CHECK(masked.ids[0] != free_run.ids[0]);
  for (const std::int32_t id : masked.ids) CHECK((id != deny[0] && id != deny[1]));
  const auto bytes = [&](std::int32_t id) {
    const auto b = table.token(id);
    return std::string(b.begin(), b.end());
  };
  const std::string stop = bytes(masked.ids[3]).substr(1) + bytes(masked.ids[4]).substr(0, 1);
  const DecodeResult hr = run(h, deny, stop);
  const kernels::StepState host_state = last;
  REQUIRE(hr.stopped);
  REQUIRE(hr.stopped_by == StopSequences<host>::plugin_id);
  REQUIRE(hr.ids.size() <= 5);
  CHECK(host_state.stopped_by == 1);  // the chain's second member
  const DecodeResult gr = run(g, deny, stop);
  check_same_state(last, host_state);
  CHECK(gr.ids == hr.ids);
  CHECK(gr.stopped_by == hr.stopped_by);
  CHECK(gr.forwards == hr.forwards);
  CHECK(gr.host_waits == 1);
  const DecodeResult gm = run(g, deny, "\x01");
  CHECK(gm.ids == masked.ids);
}

TEST_CASE(
    "device loop on the host grid samples as the host Decoder: ids and logprobs bit for bit") {
  const RelayFixture fx("device_loop_sampled");
  Rig<host> h(fx, 2);
  Rig<host_grid> g(fx, 2);
  const DecodeResult greedy = h.decode(kRequest, {16, {}});
  const auto sampled = [](kernels::SampleParams p, std::uint64_t seed, int top_logprobs = -1) {
    DecodeOptions o{16, {}};
    o.sampling.params = p;
    o.sampling.seed = seed;
    o.sampling.stream = 3;
    o.sampling.run = 1;
    o.sampling.logprobs = top_logprobs >= 0;
    o.sampling.top_logprobs = std::max(top_logprobs, 0);
    return o;
  };
  std::vector<DecodeOptions> cases;
  cases.push_back(sampled({.temperature = 0.9f, .top_k = 8}, 7));
  cases.push_back(sampled({.temperature = 1.3f, .top_p = 0.8f, .min_p = 0.05f}, 11, 3));
  cases.push_back(sampled({.temperature = 1.0f,
                           .repeat_penalty = 1.3f,
                           .presence_penalty = 0.5f,
                           .frequency_penalty = 0.4f},
                          5, 5));
  cases.back().sampling.repeat_last_n = 3;
  cases.push_back(sampled({.temperature = 2.0f, .top_p = 0.95f}, 99));
  cases.push_back(sampled({}, 0, 0));  // greedy with log-probabilities and a bias
  cases.back().sampling.logit_bias = {{greedy.ids[0], -100.0f}, {greedy.ids[2], 3.0f}};
  int differs_from_greedy = 0;
  for (std::size_t k = 0; k < cases.size(); ++k) {
    CAPTURE(k);
    const DecodeResult hr = h.decode(kRequest, cases[k]);
    // A stop id from the run itself ends both at the same step.
    DecodeOptions stopping = cases[k];
    stopping.stop_ids = {hr.ids[6]};
    for (const DecodeOptions& opt : {cases[k], stopping}) {
      // The host grid's stepped loop (the host Sampler over the grid's logits) is the bitwise
      // reference; the host backend's logits differ in their last bits (other products), so
      // against it the ids are equal and the log-probabilities close.
      const DecodeResult host_run = h.decode(kRequest, opt, 1);
      const DecodeResult want = g.decode(kRequest, opt, 1, /*stepped=*/true);
      const DecodeResult got = g.decode(kRequest, opt, 1);  // checks device_loop_applies()
      check_same(got, want);
      CHECK(got.ids == host_run.ids);
      REQUIRE(host_run.logprobs.size() == got.logprobs.size());
      for (std::size_t i = 0; i < got.logprobs.size(); ++i)
        CHECK(got.logprobs[i].logprob ==
              doctest::Approx(host_run.logprobs[i].logprob).epsilon(1e-4));
      REQUIRE(got.logprobs.size() == want.logprobs.size());
      for (std::size_t i = 0; i < want.logprobs.size(); ++i) {
        CHECK(got.logprobs[i].id == want.logprobs[i].id);
        CHECK(std::bit_cast<std::uint32_t>(got.logprobs[i].logprob) ==
              std::bit_cast<std::uint32_t>(want.logprobs[i].logprob));
        REQUIRE(got.logprobs[i].n_top == want.logprobs[i].n_top);
        for (int t = 0; t < want.logprobs[i].n_top; ++t) {
          CHECK(got.logprobs[i].top[t].id == want.logprobs[i].top[t].id);
          CHECK(std::bit_cast<std::uint32_t>(got.logprobs[i].top[t].logprob) ==
                std::bit_cast<std::uint32_t>(want.logprobs[i].top[t].logprob));
        }
      }
    }
    CHECK(hr.logprobs.size() == (cases[k].sampling.logprobs ? hr.ids.size() : 0));
    differs_from_greedy += hr.ids != greedy.ids;
  }
  CHECK(differs_from_greedy == static_cast<int>(cases.size()));  // every case changed the run
  // A chain that masks on the device (TransformRowKernel) under sampling: the denied tokens
  // never come, and the grid equals the host.
  const auto masked = [&]<class B>(Rig<B>& rig, const std::vector<std::int32_t>& deny) {
    using C = Chain<TokenSet<B>>;
    const C chain(TokenSet<B>(TokenSetMode::deny, deny, 64));
    RequestState<C, B> request;
    auto& branch = request.open(chain, "reason", "reason", 16);
    const DecodeOptions& opt = cases[1];
    rig.cache.rewind(0);
    Decoder<BaseModel<B, f32>, LoraSlice<8, B>, KvBuffer<L, B>, C> d(
        rig.model, rig.slice, rig.cache, rig.ws, KvTarget::in_slot(0), opt, chain, branch,
        "reason");
    d.prefill(kRequest, rig.cache.prefix_length());
    CHECK(d.device_loop_applies() == std::is_same_v<B, host_grid>);
    d.run();
    return d.take_result();
  };
  const DecodeResult free_run = h.decode(kRequest, cases[1]);
  const std::vector<std::int32_t> deny(free_run.ids.begin(), free_run.ids.begin() + 4);
  const DecodeResult hm = masked(h, deny);
  for (const std::int32_t id : hm.ids) CHECK(std::find(deny.begin(), deny.end(), id) == deny.end());
  const DecodeResult gm = masked(g, deny);
  CHECK(gm.ids == hm.ids);
  CHECK(gm.host_waits == 1);
  CHECK(gm.forwards == hm.forwards);
  // More logit_bias entries than the device step carries: the stepped loop, same ids.
  DecodeOptions wide = cases[0];
  for (int k = 0; k <= kernels::kMaxDeviceBias; ++k)
    wide.sampling.logit_bias.push_back({k % 64, 0.25f});
  CHECK_FALSE(device_loop_samples(wide.sampling, 0));
  using GridDec =
      Decoder<BaseModel<host_grid, f32>, LoraSlice<8, host_grid>, KvBuffer<L, host_grid>>;
  g.cache.rewind(0);
  GridDec d(g.model, g.slice, g.cache, g.ws, KvTarget::in_slot(0), wide);
  d.prefill(kRequest, g.cache.prefix_length());
  CHECK_FALSE(d.device_loop_applies());
  d.run();
  CHECK(d.result().ids == h.decode(kRequest, wide).ids);
  CHECK(d.result().host_waits == 0);
}

TEST_CASE("device loop: a forced write-position mismatch is a position_error, prefix intact") {
  const RelayFixture fx("device_loop_position");
  Rig<host_grid> g(fx, 0);
  Rig<host> h(fx, 0);
  const std::vector<float> before = g.prefix_kv();
  const int start = g.cache.prefix_length();
  using Dec = Decoder<BaseModel<host_grid, f32>, LoraSlice<8, host_grid>, KvBuffer<L, host_grid>>;
  const DecodeOptions opt{10, {}};
  for (const int skew : {1, -1, -static_cast<int>(kPrefix.size() + kRequest.size())}) {
    CAPTURE(skew);
    g.cache.rewind(0);
    Dec d(g.model, g.slice, g.cache, g.ws, KvTarget::in_slot(0), opt);
    d.prefill(kRequest, start);
    d.set_position_skew_for_testing(skew);
    const int expected = start + static_cast<int>(kRequest.size()) + skew;
    EXPECT_ERROR(position_error, d.run(), "KvBuffer: write to slot 0 expected at position ",
                 std::to_string(expected), "but the write position is ",
                 std::to_string(start + static_cast<int>(kRequest.size())));
    // Nothing was appended past the prefill, and the count the host committed says so.
    CHECK(g.cache.position(KvTarget::in_slot(0)) == start + static_cast<int>(kRequest.size()));
    CHECK(d.done());
    CHECK(g.prefix_kv() == before);
  }
  // The next request on the same cache and workspace is correct.
  CHECK(g.decode(kRequest, opt).ids == h.decode(kRequest, opt).ids);
  CHECK(g.prefix_kv() == before);
}

TEST_CASE("device loop: a generation that cannot fit the slot is refused before any launch") {
  const RelayFixture fx("device_loop_capacity");
  Rig<host_grid> g(fx, 0, {.prefix_capacity = 16, .tail_capacity = 12, .slots = 1});
  // 5 input tokens + 8 fed-back ones (max_new 9) = 13 > 12; max_new 8 fits exactly.
  EXPECT_ERROR(capacity_error, g.decode(kRequest, {9, {}}), "passes its capacity");
  CHECK(g.cache.position(KvTarget::in_slot(0)) == g.cache.prefix_length() + 5);
  Rig<host> h(fx, 0, {.prefix_capacity = 16, .tail_capacity = 12, .slots = 1});
  check_same(g.decode(kRequest, {8, {}}), h.decode(kRequest, {8, {}}));
}

TEST_CASE(
    "a relay on the host grid = the same relay on the host: outputs, gate, one wait a stage") {
  const RelayFixture fx("device_loop_relay");
  const auto run = [&]<class B>(B, Gate gate) {
    using M = BaseModel<B, f32>;
    using S = LoraSlice<8, B>;
    using St = Stage<M, S, KvBuffer<L, B>>;
    const M model = load_model<B, f32>(fx.dir / "model");
    const auto in = [](std::vector<Segment> segs) { return wire::DynamicInput{std::move(segs)}; };
    St extract("extract", model, S::load(fx.adapter_dir(0), model.config()), kShape, kPrefix,
               in({Segment{Segment::Kind::literal, -1, {7, 8}}, Segment{Segment::Kind::request}}),
               {6, {}});
    St reason("reason", model, S::load(fx.adapter_dir(1), model.config()), kShape, {4, 2},
              in({Segment{Segment::Kind::literal, -1, {9}}, Segment{Segment::Kind::output, 0}}),
              {8, {}});
    St verify("verify", model, S::load(fx.adapter_dir(2), model.config()), kShape, {1},
              in({Segment{Segment::Kind::output, 1}, Segment{Segment::Kind::feedback, 2}}),
              {5, {}});
    RelayEngine<B> engine({&extract, &reason, &verify});
    engine.prewarm();
    RelayOptions opt;
    opt.max_cycles = 3;
    opt.gate = std::move(gate);
    return engine.run(kRequest, opt);
  };
  const RelayResult h = run(host{}, never());
  const RelayResult g = run(host_grid{}, never());
  REQUIRE(h.runs.size() == 7);  // 3 stages, then 2 per further cycle
  REQUIRE(g.runs.size() == h.runs.size());
  for (std::size_t i = 0; i < h.runs.size(); ++i) {
    CAPTURE(i);
    CHECK(g.runs[i].ids == h.runs[i].ids);
    CHECK(g.runs[i].input_tokens == h.runs[i].input_tokens);
    CHECK(g.runs[i].host_waits == 1);
    CHECK(h.runs[i].host_waits == 0);
  }
  CHECK(g.verdict == Verdict::fail);
  // A gate on what verify said in cycle 2 (and not in cycle 1): both pass there.
  REQUIRE(h.runs[4].ids != h.runs[2].ids);
  const auto gate = [&] { return starts_with(h.runs[4].ids); };
  const RelayResult hp = run(host{}, gate());
  const RelayResult gp = run(host_grid{}, gate());
  CHECK(hp.passed());
  CHECK(hp.cycles == 2);
  CHECK(gp.passed());
  CHECK(gp.cycles == hp.cycles);
  CHECK(gp.output(2) == hp.output(2));
}

TEST_CASE("a run-time relay on the host grid (build_relay_as_on) = build_relay_as on the host") {
  const RelayFixture fx("device_loop_runtime");
  const nlohmann::json j = {
      {"model", fx.dir / "model"},
      {"stages",
       {{{"name", "extract"},
         {"adapter", fx.adapter_dir(0)},
         {"prefix", kPrefix},
         {"input", {{{"ids", {9, 10}}}, {{"request", true}}}},
         {"max_new", 7},
         {"interceptors", {{{"deny_tokens", {kRequest[1], kRequest[4], 7}}}}}},
        {{"name", "verify"},
         {"adapter", fx.adapter_dir(2)},
         {"input", {{{"out", "extract"}}, {{"ids", {3}}}}},
         {"max_new", 5},
         {"interceptors", {{{"trace", true}}}}}}}};
  const auto file = fx.dir / "relay.json";
  std::ofstream(file) << j.dump(2);
  const RelaySpec spec = load_relay_spec(file);
  const auto g = build_relay_as_on<host_grid, f32, 8, family::Qwen2, Batching::without>(spec);
  const auto h = build_relay_as<f32, 8, family::Qwen2, Batching::without>(spec);
  CHECK(g->backend_name() == "host-grid");
  CHECK(h->backend_name() == "host");
  g->prewarm();
  h->prewarm();
  const RelayResult rg = g->run(kRequest);
  const RelayResult rh = h->run(kRequest);
  REQUIRE(rh.runs.size() == 2);
  REQUIRE(rg.runs.size() == 2);
  CHECK(rg.runs[0].ids == rh.runs[0].ids);
  CHECK(rg.runs[1].ids == rh.runs[1].ids);
  CHECK(rg.runs[0].host_waits == 1);  // device loop
  CHECK(rh.runs[0].host_waits == 0);
  // The traced stage takes the stepped loop on both: one wait per step.
  CHECK(rg.runs[1].host_waits == static_cast<int>(rh.runs[1].ids.size()));
  CHECK(rh.runs[1].host_waits == rg.runs[1].host_waits);
  CHECK(rg.runs[1].trace.size() == rh.runs[1].trace.size());
}
