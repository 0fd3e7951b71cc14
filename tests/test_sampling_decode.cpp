// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// Sampling through the decode loop (model/decode.hpp) on golden model qwen-c: every step's
// token is replayed from the raw logits the step saw (captured by a before-hook) through the
// naive double reference (tests/reference/sampling_reference.hpp) — the chain's mask, then
// logit_bias and the penalties over the tokens generated so far (the prompt never counts),
// temperature, top-k, top-p, min-p — and the inverse CDF of that distribution at the step's
// Philox uniform must give the token the decoder chose (draws within 1e-9 of a boundary, which
// rounding decides, are skipped and counted). Log-probabilities equal the reference
// log-softmax within 1e-4. Temperature 0 with log-probabilities keeps the greedy ids. Through
// the batch scheduler, 16 seeded requests in flight give each request's ids alone; a request's
// n choices (submit_choices) give, choice by choice, the ids and log-probabilities of the request
// alone on stream + i x S, with one prefill row per request, not per choice. repeat_last_n: the
// reference counts the last N generated ids afresh at every step.
//
// Mutation checks (2026-12-06), each alone, this program rebuilt:
//   the penalties count the prompt (Decoder::prefill feeds it to Sampler::accepted) -> 5 replayed
//                                                                  ids and 200+ logprobs differ
//   every step draws with step 0's uniform (Sampler::choose(row, 0))  -> 57 replayed ids differ
//   the scheduler not passing a request's sampling to Stage::open     -> "the requests really
//                                                                        sampled" fails
// (2026-12-06, later) choices and repeat_last_n:
//   KvBuffer::fork copying nothing                                    -> the choices' runs differ
//                                                                        (and test_model's fork)
//   a later choice's first step on the row as the first left it (no
//   restore: logit_bias applied twice)                                -> its logprobs differ
//   every choice on the request's own streams (stream_shift 0)        -> runs and "the choices
//                                                                        really differ" fail
//   Sampler ignoring repeat_last_n (every generated id counts)        -> the windowed replay fails
// (2026-12-07) penalized rows chosen on the batch's threads:
//   choose_on_threads taking only rows that choose from their row as it is (as before)
//                                                                     -> chosen_with_batch > 100
//   choice_rewriting_row drawing with step + 1                        -> 16 in flight differ alone
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <set>
#include <span>
#include <vector>

#include "baton/intercept/chain.hpp"
#include "baton/intercept/token_set.hpp"
#include "baton/kv/kv_buffer.hpp"
#include "baton/lora/lora_slice.hpp"
#include "baton/model/base_model.hpp"
#include "baton/model/decode.hpp"
#include "baton/model/host_forward.hpp"
#include "baton/relay/engine.hpp"
#include "baton/relay/scheduler.hpp"
#include "reference/sampling_reference.hpp"
#include "support/expect_error.hpp"
#include "support/scheduler_world.hpp"
#include "support/test_paths.hpp"

using namespace baton;

namespace sampling_decode_test {

using Model = BaseModel<host, f32>;
using Slice = LoraSlice<8, host>;
using Cache = KvBuffer<layout::HeadMajor<f32, 8>, host>;

/// Copies every step's logits as the step saw them, before the chain's masks.
struct CaptureRows {
  std::vector<std::vector<float>> rows;
  template <class View>
  std::optional<std::int32_t> before(const View& v) {
    rows.emplace_back(v.logits.begin(), v.logits.end());
    return std::nullopt;
  }
  template <class View>
  void after(const View&, std::int32_t) {}
};

struct Run {
  DecodeResult result;
  std::vector<std::vector<float>> rows;
};

template <class C = NoInterceptors>
Run decode(const Model& model, const std::vector<std::int32_t>& prompt, const DecodeOptions& opt,
           const C& chain = {}) {
  Cache cache(model.config(),
              KvShape{.prefix_capacity = 0,
                      .tail_capacity = static_cast<int>(prompt.size()) + opt.max_new,
                      .slots = 1});
  cache.reset_prefix();
  cache.freeze_prefix();
  Workspace<host> ws;
  const Slice slice = Slice::none(model.config());
  RequestState<C, host> request;
  auto& branch = request.open(chain, "sample", "sample", opt.max_new);
  Decoder<Model, Slice, Cache, C> d(model, slice, cache, ws, KvTarget::in_slot(0), opt, chain,
                                    branch, "sample");
  CaptureRows cap;
  d.prefill(prompt, 0);
  d.run(cap);
  return {d.take_result(), std::move(cap.rows)};
}

/// Replays `run` through the reference; returns the draws skipped as too close to call.
int replay(const Run& run, const SamplingOptions& o, const std::vector<bool>& allowed = {}) {
  const std::vector<std::int32_t>& ids = run.result.ids;
  REQUIRE(run.rows.size() == ids.size());
  int skipped = 0;
  for (std::size_t s = 0; s < ids.size(); ++s) {
    CAPTURE(s);
    // What the penalties read: the generated ids before step s, the last repeat_last_n of them
    // (all for -1, none for 0), counted afresh.
    std::vector<kernels::SeenToken> seen;
    const std::size_t window =
        o.repeat_last_n < 0 ? s
                            : std::min<std::size_t>(s, static_cast<std::size_t>(o.repeat_last_n));
    for (std::size_t t = s - window; t < s; ++t) {
      bool found = false;
      for (auto& e : seen)
        if (e.id == ids[t]) {
          ++e.count;
          found = true;
        }
      if (!found) seen.push_back({ids[t], 1});
    }
    std::vector<float> row = run.rows[s];
    for (std::size_t i = 0; i < row.size() && !allowed.empty(); ++i)
      if (!allowed[i]) row[i] = -INFINITY;
    const std::vector<double> probs = test::reference_probs(row, o, seen);
    const double u = kernels::sample_uniform(o.seed, o.stream, static_cast<std::uint32_t>(s));
    const test::InverseCdf want = test::inverse_cdf(probs, u);
    if (want.margin < 1e-9) {
      ++skipped;
    } else {
      CHECK(ids[s] == want.id);
    }
    if (o.logprobs) {
      REQUIRE(run.result.logprobs.size() == ids.size());
      const std::vector<double> lp = test::reference_logprobs(row, o, seen);
      const TokenLogprobs& got = run.result.logprobs[s];
      CHECK(got.id == ids[s]);
      CHECK(std::abs(got.logprob - lp[static_cast<std::size_t>(ids[s])]) < 1e-4);
      CHECK(got.n_top == o.top_logprobs);
      for (int k = 0; k < got.n_top; ++k) {
        const auto& t = got.top[static_cast<std::size_t>(k)];
        CHECK(std::abs(t.logprob - lp[static_cast<std::size_t>(t.id)]) < 1e-4);
        if (k > 0) CHECK(t.logprob <= got.top[static_cast<std::size_t>(k - 1)].logprob);
      }
    }
  }
  return skipped;
}

std::vector<std::int32_t> prompt_ids(int n, int seed) {
  std::vector<std::int32_t> p(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) p[static_cast<std::size_t>(i)] = (i * 37 + seed * 101 + 5) % 384;
  return p;
}

SamplingOptions everything(std::uint64_t seed) {
  SamplingOptions o;
  o.seed = seed;
  o.stream = 3;
  o.params.temperature = 0.9f;
  o.params.top_k = 40;
  o.params.top_p = 0.95f;
  o.params.min_p = 0.02f;
  o.params.repeat_penalty = 1.6f;
  o.params.presence_penalty = 0.8f;
  o.params.frequency_penalty = 0.4f;
  o.logit_bias = {{7, 3.0f}, {100, -5.0f}};
  o.logprobs = true;
  o.top_logprobs = 5;
  return o;
}

/// Every stage run's log-probabilities in `got` equal `want`'s, bit for bit.
void check_same_logprobs(const RelayResult& got, const RelayResult& want) {
  for (std::size_t r = 0; r < got.runs.size() && r < want.runs.size(); ++r) {
    const auto& a = got.runs[r].logprobs;
    const auto& b = want.runs[r].logprobs;
    REQUIRE(a.size() == b.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
      CHECK(a[i].id == b[i].id);
      CHECK(std::bit_cast<std::uint32_t>(a[i].logprob) ==
            std::bit_cast<std::uint32_t>(b[i].logprob));
      CHECK(a[i].n_top == b[i].n_top);
    }
  }
}

}  // namespace sampling_decode_test

using namespace sampling_decode_test;

TEST_CASE("sampled decoding replays through the naive reference, step by step") {
  const Model model = load_model<host, f32>(std::filesystem::path(BATON_GOLDEN_DIR) / "qwen-c");
  int skipped = 0, draws = 0;
  std::vector<std::vector<std::int32_t>> outputs;
  for (std::uint64_t seed : {1ull, 2ull, 77ull, 4096ull, 99991ull, 123456789ull}) {
    CAPTURE(seed);
    DecodeOptions opt{14, {}};
    opt.sampling = everything(seed);
    // A prompt that repeats: penalties would move these tokens if the prompt counted.
    std::vector<std::int32_t> prompt = prompt_ids(10, static_cast<int>(seed % 7));
    const Run run = decode(model, prompt, opt);
    REQUIRE(run.result.ids.size() == 14);
    skipped += replay(run, opt.sampling);
    draws += 14;
    outputs.push_back(run.result.ids);
    // The same seed again: the same ids, bit for bit.
    CHECK(decode(model, prompt, opt).result.ids == run.result.ids);
  }
  MESSAGE("draws too close to call: ", skipped, " of ", draws);
  CHECK(skipped <= 1);
  // Seeds matter: the six outputs are not all one.
  int distinct = 0;
  for (std::size_t a = 0; a < outputs.size(); ++a) {
    bool seen_before = false;
    for (std::size_t b = 0; b < a; ++b) seen_before = seen_before || outputs[a] == outputs[b];
    distinct += seen_before ? 0 : 1;
  }
  CHECK(distinct >= 5);
}

TEST_CASE("sampling draws only what the chain's mask allows") {
  const Model model = load_model<host, f32>(std::filesystem::path(BATON_GOLDEN_DIR) / "qwen-c");
  std::vector<std::int32_t> allow;
  std::vector<bool> allowed(384, false);
  for (int i = 0; i < 384; i += 9) {
    allow.push_back(i);
    allowed[static_cast<std::size_t>(i)] = true;
  }
  using C = Chain<TokenSet<host>>;
  const C chain(TokenSet<host>(TokenSetMode::allow, allow, 384));
  for (std::uint64_t seed : {5ull, 6ull, 7ull}) {
    CAPTURE(seed);
    DecodeOptions opt{12, {}};
    opt.sampling = everything(seed);
    opt.sampling.params.temperature = 1.5f;  // spread the mass over the allowed tokens
    const Run run = decode(model, prompt_ids(8, 3), opt, chain);
    for (std::int32_t id : run.result.ids) CHECK(allowed[static_cast<std::size_t>(id)]);
    CHECK(replay(run, opt.sampling, allowed) <= 1);
  }
}

TEST_CASE("temperature 0: greedy ids, with or without log-probabilities; penalties replay") {
  const Model model = load_model<host, f32>(std::filesystem::path(BATON_GOLDEN_DIR) / "qwen-c");
  const std::vector<std::int32_t> prompt = prompt_ids(9, 2);
  const DecodeOptions greedy{12, {}};
  const Run plain = decode(model, prompt, greedy);
  DecodeOptions with_lp = greedy;
  with_lp.sampling.logprobs = true;
  with_lp.sampling.top_logprobs = 3;
  const Run lp = decode(model, prompt, with_lp);
  CHECK(lp.result.ids == plain.result.ids);
  CHECK(replay(lp, with_lp.sampling) == 0);
  // Greedy with penalties: the argmax of the penalized logits, replayed.
  DecodeOptions pen = greedy;
  pen.sampling.params.repeat_penalty = 3.0f;
  pen.sampling.params.presence_penalty = 2.0f;
  const Run p = decode(model, prompt, pen);
  CHECK(replay(p, pen.sampling) == 0);
  CHECK(p.result.ids != plain.result.ids);  // the penalties changed something
}

TEST_CASE("repeat_last_n: the penalties read only the last N generated tokens") {
  const Model model = load_model<host, f32>(std::filesystem::path(BATON_GOLDEN_DIR) / "qwen-c");
  const std::vector<std::int32_t> prompt = prompt_ids(9, 2);
  DecodeOptions all{16, {}};
  all.sampling.params.repeat_penalty = 3.0f;
  all.sampling.params.presence_penalty = 2.0f;
  all.sampling.params.frequency_penalty = 1.0f;
  const Run every = decode(model, prompt, all);
  CHECK(replay(every, all.sampling) == 0);
  // Greedy with a window of 2: the argmax of logits penalized by the last two ids, replayed;
  // and not the run whose penalties read every id.
  DecodeOptions last2 = all;
  last2.sampling.repeat_last_n = 2;
  const Run windowed = decode(model, prompt, last2);
  CHECK(replay(windowed, last2.sampling) == 0);
  CHECK(windowed.result.ids != every.result.ids);
  // 0 turns the penalties off: the plain greedy ids.
  DecodeOptions off = all;
  off.sampling.repeat_last_n = 0;
  CHECK(decode(model, prompt, off).result.ids ==
        decode(model, prompt, DecodeOptions{16, {}}).result.ids);
  // Sampled, every transform, a window of 3.
  for (std::uint64_t seed : {11ull, 12ull, 13ull}) {
    CAPTURE(seed);
    DecodeOptions opt{16, {}};
    opt.sampling = everything(seed);
    opt.sampling.repeat_last_n = 3;
    CHECK(replay(decode(model, prompt, opt), opt.sampling) <= 1);
  }
  DecodeOptions bad{4, {}};
  bad.sampling.repeat_last_n = -2;
  EXPECT_ERROR(usage_error, decode(model, prompt, bad), "repeat_last_n = -2");
}

TEST_CASE("bad sampling options fail when the generation is built, naming the field") {
  const Model model = load_model<host, f32>(std::filesystem::path(BATON_GOLDEN_DIR) / "qwen-c");
  DecodeOptions opt{4, {}};
  opt.sampling.logit_bias = {{384, 1.0f}};
  EXPECT_ERROR(usage_error, decode(model, prompt_ids(3, 1), opt),
               "stage 'sample': ", "logit_bias names token 384");
  opt.sampling.logit_bias.clear();
  opt.sampling.params.top_p = 2.0f;
  EXPECT_ERROR(usage_error, decode(model, prompt_ids(3, 1), opt), "top_p = 2");
}

TEST_CASE("scheduler: seeded requests give the same ids alone and 16 in flight") {
  using World = test::SchedulerWorld<host>;
  using StageT = World::StageT;
  // The batch's rows are chosen together on the workspace's threads (choose_on_threads), with
  // logit_bias and penalties too (each row rewritten in place, as its step would); a prompt's
  // last row that the options rewrite is chosen in its step.
  for (const bool penalized : {true, false}) {
    CAPTURE(penalized);
    World batched(16), alone(1);
    const RelayOptions relay = test::scheduler_relay_options();
    RelayScheduler<StageT> many(batched.ptrs(), relay,
                                {.max_rows = 16, .max_tokens = 40, .max_queue = 64});
    HostContext ctx({.threads = 3});  // the batch's rows chosen on its pool
    many.workspace().extras.bind(ctx);
    RelayScheduler<StageT> one(alone.ptrs(), relay, {.max_rows = 1, .max_tokens = 7});
    auto options = [&](int k) {
      RequestOptions o;
      SamplingOptions s = everything(1000 + static_cast<std::uint64_t>(k));
      s.params.temperature = 1.2f;
      if (!penalized) {
        s.logit_bias.clear();
        s.params.repeat_penalty = 1.0f;
        s.params.presence_penalty = s.params.frequency_penalty = 0.0f;
      }
      o.own.sampling = s;
      return o;
    };
    std::vector<std::vector<std::int32_t>> requests;
    std::vector<Ticket> tickets;
    for (int k = 0; k < 16; ++k) {
      requests.push_back(test::scheduler_ids(3 + (k * 5) % 17, k));
      tickets.push_back(many.submit(requests.back(), options(k)));
    }
    int chosen_with_batch = 0;
    while (!many.idle()) chosen_with_batch += many.step().chosen_with_batch;
    CHECK(chosen_with_batch > 100);
    int differ_from_greedy = 0;
    RelayScheduler<StageT> greedy(alone.ptrs(), relay, {.max_rows = 1, .max_tokens = 7});
    for (int k = 0; k < 16; ++k) {
      CAPTURE(k);
      const auto got = many.take(tickets[static_cast<std::size_t>(k)]);
      REQUIRE(got.has_value());
      const Ticket t = one.submit(requests[static_cast<std::size_t>(k)], options(k));
      one.run();
      const auto want = one.take(t);
      REQUIRE(want.has_value());
      test::check_same_result(*got, *want);
      check_same_logprobs(*got, *want);
      const Ticket g = greedy.submit(requests[static_cast<std::size_t>(k)]);
      greedy.run();
      const auto plain = greedy.take(g);
      REQUIRE(plain.has_value());
      bool same = plain->runs.size() == got->runs.size();
      for (std::size_t r = 0; same && r < got->runs.size(); ++r)
        same = plain->runs[r].ids == got->runs[r].ids;
      differ_from_greedy += same ? 0 : 1;
    }
    CHECK(differ_from_greedy >= 12);  // the requests really sampled
  }
}

TEST_CASE("scheduler: n choices share one prefill, and choice i is the request on stream i x S") {
  using World = test::SchedulerWorld<host>;
  using StageT = World::StageT;
  World batched(8), alone(1);
  const RelayOptions relay = test::scheduler_relay_options();
  // A budget no prompt is chunked by, so every stage run's prompt is one prefill row.
  RelayScheduler<StageT> many(batched.ptrs(), relay,
                              {.max_rows = 64, .max_tokens = 512, .max_queue = 64});
  RelayScheduler<StageT> one(alone.ptrs(), relay, {.max_rows = 1, .max_tokens = 7});
  // A logit_bias entry: the first step rewrites the row in place, so a later choice that took
  // the row as the first left it would draw from a biased-twice distribution.
  const auto options = [](std::uint64_t seed, int only_stage) {
    RequestOptions o;
    SamplingOptions s = everything(seed);
    s.params.temperature = 1.3f;
    s.params.repeat_penalty = 1.0f;
    s.logit_bias = {{7, 2.5f}, {100, -5.0f}};
    o.own.sampling = s;
    o.only_stage = only_stage;
    return o;
  };
  struct Case {
    std::vector<std::int32_t> ids;
    int only_stage;  // -1: the whole relay (S = 3 streams per choice), else that stage (S = 1)
    int n;
  };
  // 13 choices on extract's 8 slots: the last request's 5 wait for 5 free slots together.
  const std::vector<Case> cases = {{test::scheduler_ids(9, 1), 0, 4},
                                   {test::scheduler_ids(14, 2), -1, 3},
                                   {test::scheduler_ids(5, 3), 0, 1},
                                   {test::scheduler_ids(20, 4), 0, 5}};
  std::vector<std::vector<Ticket>> tickets;
  for (std::size_t k = 0; k < cases.size(); ++k)
    tickets.push_back(
        many.submit_choices(cases[k].ids, options(50 + k, cases[k].only_stage), cases[k].n));
  int prefill_rows = 0;
  while (!many.idle()) prefill_rows += many.step().prefill_rows;
  int runs = 0, forked = 0;
  for (std::size_t k = 0; k < cases.size(); ++k) {
    const int S = cases[k].only_stage >= 0 ? 1 : 3;
    std::set<std::vector<std::int32_t>> distinct;
    for (int c = 0; c < cases[k].n; ++c) {
      CAPTURE(k);
      CAPTURE(c);
      const auto got = many.take(tickets[k][static_cast<std::size_t>(c)]);
      REQUIRE(got.has_value());
      RequestOptions o = options(50 + k, cases[k].only_stage);
      o.own.sampling->stream += static_cast<std::uint64_t>(c * S);
      const Ticket t = one.submit(cases[k].ids, o);
      one.run();
      const auto want = one.take(t);
      REQUIRE(want.has_value());
      test::check_same_result(*got, *want);
      // The log-probabilities too (everything() asks for them): the distribution of every step,
      // the first included, is the one the request has alone.
      check_same_logprobs(*got, *want);
      std::vector<std::int32_t> all;
      for (const StageRun& run : got->runs) all.insert(all.end(), run.ids.begin(), run.ids.end());
      distinct.insert(all);
      runs += static_cast<int>(got->runs.size());
    }
    forked += cases[k].n - 1;
    if (cases[k].n > 1) CHECK(distinct.size() >= 2);  // the choices really differ
  }
  // Every stage run's prompt is one prefill row, except each later choice's first run: its
  // slot is a copy of its first choice's.
  CHECK(prefill_rows == runs - forked);
}

TEST_CASE("scheduler: choices are refused beyond the stage's slots; a cancelled first choice") {
  using World = test::SchedulerWorld<host>;
  using StageT = World::StageT;
  World w(3), alone(1);
  const RelayOptions relay = test::scheduler_relay_options();
  RelayScheduler<StageT> s(w.ptrs(), relay, {.max_rows = 8, .max_tokens = 40});
  RequestOptions o;
  o.own.sampling = everything(9);
  o.only_stage = 0;
  EXPECT_ERROR(usage_error, s.submit_choices(test::scheduler_ids(6, 1), o, 4), "4 choices");
  EXPECT_ERROR(usage_error, s.submit_choices(test::scheduler_ids(6, 1), o, 0), "0 choices");
  // The first choice cancelled before it ran: the others prefill on their own, same results.
  const std::vector<Ticket> t = s.submit_choices(test::scheduler_ids(6, 1), o, 3);
  CHECK(s.cancel(t[0]));
  s.run();
  CHECK(s.take(t[0])->error == "cancelled");
  RelayScheduler<StageT> one(alone.ptrs(), relay, {.max_rows = 1, .max_tokens = 7});
  for (int c = 1; c < 3; ++c) {
    const auto got = s.take(t[static_cast<std::size_t>(c)]);
    REQUIRE(got.has_value());
    RequestOptions oc = o;
    oc.own.sampling->stream += static_cast<std::uint64_t>(c);
    const Ticket u = one.submit(test::scheduler_ids(6, 1), oc);
    one.run();
    test::check_same_result(*got, *one.take(u));
  }
}
