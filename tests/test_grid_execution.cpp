// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// How the CUDA backend's forward executes, checked on the host grid, whose context counts what
// a CudaContext counts (backend/exec_binding.hpp): a pre-warmed relay allocates nothing and
// waits once per stage run over requests of growing length with stateful device interceptors
// and a chunked prefill; a relay's stages share one context (checked at construction); the
// device loop runs as a captured step wherever a context is bound — `baton generate`'s run and
// relays included; a chunked prefill equals the unchunked one bit for bit; and the scratch of
// a 32k-token prompt on the Llama-3-8B shape stays bounded.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "baton/intercept/stop_sequences.hpp"
#include "baton/intercept/token_set.hpp"
#include "baton/model/host_grid_forward.hpp"
#include "generate_run.hpp"  // tools/: `baton generate`'s run, on any backend
#include "support/expect_error.hpp"
#include "support/relay_fixture.hpp"

using namespace baton;
using namespace baton::test;

namespace {

using L = layout::HeadMajor<f32, 8>;
const std::vector<std::int32_t> kPrefix = {3, 14, 15, 9, 26, 5, 35, 8, 44, 1, 2, 17, 60};
constexpr KvShape kShape{.prefix_capacity = 16, .tail_capacity = 48, .slots = 1};

/// Synthetic bytes per id (two letters), for a stop sequence.
TokenByteTable letter_table() {
  TokenByteTable table;
  for (int id = 0; id < 64; ++id) table.push(std::string{char('a' + id % 26), char('A' + id / 26)});
  return table;
}

/// A three-stage relay on backend B whose middle stage carries stateful device interceptors
/// (a deny set and a stop sequence), every workspace prefilling in passes of `chunk` tokens.
template <Backend B>
struct ChainRelay {
  using M = BaseModel<B, f32>;
  using S = LoraSlice<8, B>;
  using C = Chain<TokenSet<B>, StopSequences<B>>;
  using Plain = Stage<M, S, KvBuffer<L, B>>;
  using Guarded = Stage<M, S, KvBuffer<L, B>, wire::DynamicInput, C>;
  M model;
  Plain extract;
  Guarded reason;
  Plain verify;
  static wire::DynamicInput in(std::vector<Segment> segs) {
    return wire::DynamicInput{std::move(segs)};
  }
  ChainRelay(const RelayFixture& fx, const TokenByteTable& table, int chunk)
      : model(load_model<B, f32>(fx.dir / "model")),
        extract("extract", model, S::load(fx.adapter_dir(0), model.config()), kShape, kPrefix,
                in({Segment{Segment::Kind::literal, -1, {7, 8}}, Segment{Segment::Kind::request}}),
                {6, {}}),
        reason("reason", model, S::load(fx.adapter_dir(1), model.config()), kShape, {4, 2},
               in({Segment{Segment::Kind::request}, Segment{Segment::Kind::output, 0}}), {8, {}},
               C(TokenSet<B>(TokenSetMode::deny, std::vector<std::int32_t>{5, 9, 33}, 64),
                 StopSequences<B>(table, {"zB"}))),
        verify("verify", model, S::load(fx.adapter_dir(2), model.config()), kShape, {1},
               in({Segment{Segment::Kind::output, 1}, Segment{Segment::Kind::feedback, 2}}),
               {5, {}}) {
    if constexpr (HasDeviceLoop<B>) {
      for (Workspace<B>* ws : {&extract.workspace(0), &reason.workspace(0), &verify.workspace(0)})
        ws->extras.scratch().chunk_tokens = chunk;
    }
  }
};

std::vector<std::int32_t> request_of(int n) {
  std::vector<std::int32_t> r;
  for (int i = 0; i < n; ++i) r.push_back(static_cast<std::int32_t>((i * 7 + 3) % 60));
  return r;
}

}  // namespace

TEST_CASE("a pre-warmed relay on the host grid allocates nothing and waits once per stage run") {
  const RelayFixture fx("grid_execution_counts");
  const TokenByteTable table = letter_table();
  ChainRelay<host_grid> g(fx, table, 7);  // passes of 7 tokens: every prefill is chunked
  ChainRelay<host> h(fx, table, 0);
  RelayEngine<host_grid> ge({&g.extract, &g.reason, &g.verify});
  RelayEngine<host> he({&h.extract, &h.reason, &h.verify});
  ge.prewarm();
  he.prewarm();
  const HostGridContext& ctx = *ge.context();
  RelayOptions opt;
  opt.max_cycles = 2;
  // Requests of growing length, each longer than any before (the old scratch grew at each),
  // up to what the reason stage's slot takes (request + extract's 6 ids + 7 fed back).
  for (const int n : {1, 3, 9, 20, 35}) {
    CAPTURE(n);
    const ExecCounters before = ctx.counters();
    const RelayResult rg = ge.run(request_of(n), opt);
    const RelayResult rh = he.run(request_of(n), opt);
    const ExecCounters after = ctx.counters();
    REQUIRE(rg.runs.size() == rh.runs.size());
    long replays = 0;
    for (std::size_t i = 0; i < rg.runs.size(); ++i) {
      CAPTURE(i);
      CHECK(rg.runs[i].ids == rh.runs[i].ids);
      CHECK(rg.runs[i].host_waits == 1);
      const std::string& name = rg.runs[i].name;
      replays += (name == "extract" ? 6 : name == "reason" ? 8 : 5) - 1;
      if (name == "reason")
        for (const std::int32_t id : rg.runs[i].ids) CHECK((id != 5 && id != 9 && id != 33));
    }
    CHECK(after.allocations - before.allocations == 0);
    CHECK(after.frees - before.frees == 0);
    CHECK(after.host_waits - before.host_waits == static_cast<long>(rg.runs.size()));
    // Every stage run captured its step once and replayed it max_new - 1 times (steps after
    // an early end replay too, doing nothing).
    CHECK(after.captures - before.captures == static_cast<long>(rg.runs.size()));
    CHECK(after.replays - before.replays == replays);
    CHECK(after.direct_steps == 0);
  }
}

TEST_CASE("a relay's stages share one execution context, checked at construction") {
  const RelayFixture fx("grid_execution_contexts");
  const TokenByteTable table = letter_table();
  ChainRelay<host_grid> g(fx, table, 256);
  const auto workspaces = [&] {
    return std::vector<Workspace<host_grid>*>{&g.extract.workspace(0), &g.reason.workspace(0),
                                              &g.verify.workspace(0)};
  };
  HostGridContext one, other;
  SUBCASE("none bound: the relay binds all to its own, and unbinds them when it goes") {
    {
      RelayEngine<host_grid> e({&g.extract, &g.reason, &g.verify});
      for (auto* ws : workspaces()) CHECK(ws->extras.bound_context() == e.context());
      e.prewarm();
      CHECK(e.run(request_of(4), {}).runs.size() == 3);
      CHECK(e.context()->counters().captures == 3);
    }
    for (auto* ws : workspaces()) CHECK(ws->extras.bound_context() == nullptr);
  }
  SUBCASE("all bound to one: that one") {
    for (auto* ws : workspaces()) ws->extras.bind(one);
    RelayEngine<host_grid> e({&g.extract, &g.reason, &g.verify});
    CHECK(e.context() == &one);
    e.prewarm();
    e.run(request_of(4), {});
    CHECK(one.counters().host_waits == 3);
    CHECK(one.counters().captures == 3);
  }
  SUBCASE("two contexts: refused, naming both stages") {
    g.extract.workspace(0).extras.bind(one);
    g.reason.workspace(0).extras.bind(one);
    g.verify.workspace(0).extras.bind(other);
    EXPECT_ERROR(usage_error, RelayEngine<host_grid>({&g.extract, &g.reason, &g.verify}),
                 "stage 'verify' slot 0 is bound to another execution context than stage "
                 "'extract' slot 0");
  }
  SUBCASE("bound and unbound mixed: refused") {
    g.reason.workspace(0).extras.bind(one);
    EXPECT_ERROR(usage_error, RelayEngine<host_grid>({&g.extract, &g.reason, &g.verify}),
                 "stage 'reason' slot 0 is bound to an execution context but stage 'extract' "
                 "slot 0 is not");
  }
}

TEST_CASE("rebinding a workspace that ran waits for its old context first") {
  const RelayFixture fx("grid_execution_rebind");
  const auto model = load_model<host_grid, f32>(fx.dir / "model");
  const auto slice = LoraSlice<8, host_grid>::load(fx.adapter_dir(0), model.config());
  KvBuffer<L, host_grid> cache(model.config(), kShape);
  HostGridContext first, second;
  Workspace<host_grid> ws;
  ws.extras.bind(first);
  ws.extras.bind(second);  // nothing ran on `first`: nothing to wait for
  CHECK(first.counters().host_waits == 0);
  ws.extras.bind(first);
  cache.reset_prefix();
  forward(model, ws, slice, cache, KvTarget::prefix(), 0, std::span<const std::int32_t>(kPrefix),
          Logits::none);
  ws.extras.bind(second);
  CHECK(first.counters().host_waits == 1);
  CHECK(ws.extras.bound_context() == &second);
}

TEST_CASE("the device loop runs as a captured step on a bound context, kernel by kernel unbound") {
  const RelayFixture fx("grid_execution_graph");
  const auto model = load_model<host_grid, f32>(fx.dir / "model");
  const auto slice = LoraSlice<8, host_grid>::load(fx.adapter_dir(1), model.config());
  using Dec = Decoder<BaseModel<host_grid, f32>, LoraSlice<8, host_grid>, KvBuffer<L, host_grid>>;
  const auto decode = [&](Workspace<host_grid>& ws) {
    KvBuffer<L, host_grid> cache(model.config(), kShape);
    cache.reset_prefix();
    cache.freeze_prefix();
    const DecodeOptions opt{9, {}};  // the Decoder keeps a reference: it must outlive it
    Dec d(model, slice, cache, ws, KvTarget::in_slot(0), opt);
    d.prefill(kPrefix, 0);
    d.run();
    return d.take_result();
  };
  HostGridContext ctx;
  Workspace<host_grid> bound;
  bound.extras.bind(ctx);
  const DecodeResult a = decode(bound);
  CHECK(ctx.counters().captures == 1);
  CHECK(ctx.counters().replays == 8);
  CHECK(ctx.counters().direct_steps == 0);
  CHECK(ctx.counters().host_waits == 1);
  Workspace<host_grid> unbound;
  const DecodeResult b = decode(unbound);
  CHECK(b.ids == a.ids);
  CHECK(unbound.extras.context().counters().captures == 0);
  CHECK(unbound.extras.context().counters().direct_steps == 8);

  // `baton generate`'s run (tools/generate_run.hpp) binds a context of its own: the captured
  // path, one wait, and nothing allocated after its scratch was sized.
  cli::GenerateJob job;
  job.model = (fx.dir / "model").string();
  job.adapter = fx.adapter_dir(1).string();
  job.prompt = kPrefix;
  job.max_new = 9;
  const cli::Generated out =
      cli::load_generator<host_grid, family::Qwen2, f32, 8>(job.model)->generate(job);
  CHECK(out.ids == a.ids);
  CHECK(out.exec.captures == 1);
  CHECK(out.exec.replays == 8);
  CHECK(out.exec.direct_steps == 0);
  CHECK(out.exec.host_waits == 1);
}

TEST_CASE("a chunked prefill on the host grid equals the unchunked one, bit for bit") {
  const RelayFixture fx("grid_execution_chunks");
  const auto model = load_model<host_grid, f32>(fx.dir / "model");
  const auto slice = LoraSlice<8, host_grid>::load(fx.adapter_dir(1), model.config());
  const std::vector<std::int32_t> input = request_of(37);
  struct Out {
    std::vector<float> last, all, kv;
  };
  const auto run = [&](int chunk) {
    KvBuffer<L, host_grid> cache(model.config(), kShape);
    Workspace<host_grid> ws;
    ws.extras.scratch().chunk_tokens = chunk;
    cache.reset_prefix();
    forward(model, ws, slice, cache, KvTarget::prefix(), 0, std::span<const std::int32_t>(kPrefix),
            Logits::none);
    cache.freeze_prefix();
    Out o;
    cache.rewind(0);
    const auto last = forward(model, ws, slice, cache, KvTarget::in_slot(0), cache.prefix_length(),
                              std::span<const std::int32_t>(input), Logits::last);
    o.last.assign(last.begin(), last.end());
    cache.rewind(0);
    const auto all = forward(model, ws, slice, cache, KvTarget::in_slot(0), cache.prefix_length(),
                             std::span<const std::int32_t>(input), Logits::all);
    o.all.assign(all.begin(), all.end());
    const int upto = cache.position(KvTarget::in_slot(0));
    for (int layer = 0; layer < cache.num_layers(); ++layer) {
      const KvSpan<L> s = cache.read_span(KvTarget::in_slot(0), layer, upto);
      for (int h = 0; h < model.config().num_kv_heads; ++h)
        for (int p = 0; p < s.length(); ++p)
          for (int d = 0; d < L::head_dim; ++d) {
            o.kv.push_back(s.key(h, p)[d]);
            o.kv.push_back(s.value(h, p)[d]);
          }
    }
    return o;
  };
  const Out whole = run(256);
  REQUIRE(whole.all.size() == input.size() * static_cast<std::size_t>(model.config().vocab_size));
  for (const int chunk : {1, 5, 16, 36}) {
    CAPTURE(chunk);
    const Out o = run(chunk);
    CHECK(o.last == whole.last);
    CHECK(o.all == whole.all);
    CHECK(o.kv == whole.kv);
  }
  // The last row of `all` is the `last` row.
  const std::size_t V = static_cast<std::size_t>(model.config().vocab_size);
  CHECK(std::vector<float>(whole.all.end() - static_cast<long>(V), whole.all.end()) == whole.last);
}

TEST_CASE("the scratch of a 32k-token prompt on the Llama-3-8B shape stays bounded") {
  ModelConfig c;
  c.hidden_size = 4096;
  c.num_heads = 32;
  c.num_kv_heads = 8;
  c.head_dim = 128;
  c.intermediate_size = 14336;
  c.vocab_size = 128256;
  c.num_layers = 32;
  using Ops = GridForwardOps<BaseModel<host_grid, bf16>, LoraSlice<kRuntimeRankBound, host_grid>,
                             KvBuffer<layout::HeadMajor<bf16, 128>, host_grid>, HostGridExec>;
  const auto mib = [](std::size_t bytes) { return static_cast<double>(bytes) / (1 << 20); };
  // A 32k-position cache, prompts of 16k and 32k tokens: passes of 256 tokens (the default).
  const int capacity = 32768;
  const int pass = grid::GridScratch<host>::kDefaultChunkTokens;
  const auto splits = kernels::attention_split(capacity);
  CHECK(splits.splits == 32);
  CHECK(splits.span == 1024);
  for (const int prompt : {16384, 32768}) {
    CAPTURE(prompt);
    // Sized as the CUDA executor sizes it (16-bit weights widened a tile at a time).
    const GridScratchSizes sz = Ops::scratch_sizes(c, splits.splits, pass, 1, prompt, true);
    MESSAGE("8B shape, ", prompt, "-token prompt: scratch ", mib(sz.bytes()),
            " MiB (attention partials ", mib(sz.attention_bytes()), " MiB)");
    CHECK(mib(sz.bytes()) < 320.0);
  }
  // Unchunked and split every 128 positions (before) the partials alone were tokens x heads x
  // 256 splits x 130 floats: 136 GB for the 32k prompt, and they still grow with the prompt
  // when each pass is not bounded.
  const GridScratchSizes whole = Ops::scratch_sizes(c, splits.splits, 32768, 1, 32768, true);
  CHECK(mib(whole.attention_bytes()) > 16000.0);
}
