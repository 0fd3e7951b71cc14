// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// A relay of activated adapters over one shared sequence (relay/shared_sequence.hpp) against the
// deliberately naive double-precision model (tests/reference/naive_model.hpp, which applies an
// activated adapter from the last occurrence of its invocation in the prompt, by its own code):
// every stage run's ids equal the naive greedy decode of that stage's whole input — the common
// prefix, the opening with the request, every earlier turn, its invocation — computed from
// scratch. Also: the tokens the base computed once, the write checks of a slot reading the shared
// sequence, mixed relays, and the wiring errors.
//
// The PEFT check of the same (transformers + peft generate on reference-made models) is
// test_grid_hf's relay case.
//
// Mutation checks (2026-12-04), each alone, this program rebuilt:
//   KvBuffer::read_span leaving the shared tail out (middle = 0)        -> every relay case fails
//   rewind_onto starting the tail at the prefix instead of the shared end -> every relay case
//   a turn appended without the stage's own input (its invocation)       -> the chain and mixed
//   cases the epoch check in check_write removed                               -> "moved under it"
//   the scheduler's turn without the stage's own input                  -> "the batch scheduler"
// (2026-12-06) choices on a shared sequence:
//   every choice on the request's own streams (stream_shift 0)          -> "really drew
//   differently"
// (2026-12-07) choices sharing the opening and first prompt:
//   each choice prefilling its own opening again (no fork)             -> the token count
//   the stage slots forked with fork() (reading the first's shared slot) -> the cancel loop
//   a released choice not starting its own opening                     -> the cancel loop
#include <doctest/doctest.h>

#include "baton/relay/scheduler.hpp"
#include "baton/relay/shared_sequence.hpp"
#include "support/relay_fixture.hpp"

using namespace baton;
using namespace baton::test;
using namespace baton::wire;

namespace {

using Ids = std::vector<std::int32_t>;
using SharedSeq = SharedSequence<RModel, RSlice, RCache>;

const Ids kCommonPrefix = {3, 14, 15, 9, 26, 5};
const Ids kAsk = {11, 12, 13, 30, 31, 7, 19};
const Ids kTurnEnd = {62};
const std::vector<Ids> kInvocation = {{50, 51}, {52, 53, 54}, {55}};
constexpr KvShape kStageShape{.prefix_capacity = 0, .tail_capacity = 32, .slots = 2};
constexpr KvShape kSharedShape{.prefix_capacity = 16, .tail_capacity = 160, .slots = 2};

/// The tiny model with three activated adapters (each with its own invocation) beside the
/// fixture's plain ones.
struct ActivatedFixture : RelayFixture {
  std::vector<TinyAdapter> activated;
  explicit ActivatedFixture(const std::string& name) : RelayFixture(name) {
    const std::vector<std::vector<std::string>> targets = {
        {"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"},
        {"q_proj", "v_proj", "down_proj"},
        {"k_proj", "o_proj", "up_proj"}};
    for (int i = 0; i < 3; ++i) {
      TinyAdapterSpec s{.r = 4, .alpha = 8, .targets = targets[i], .seed = 40u + i};
      s.invocation.assign(kInvocation[i].begin(), kInvocation[i].end());
      activated.push_back(make_tiny_adapter(tm.cfg, s));
      write_tiny_adapter(activated.back(), activated_dir(i));
    }
  }
  std::filesystem::path activated_dir(int i) const {
    return dir / ("activated" + std::to_string(i));
  }
  RSlice activated_slice(int i) const { return RSlice::load(activated_dir(i), model->config()); }
  /// The naive model's greedy ids for activated adapter `i` on `whole` (from scratch).
  Ids naive(int i, const Ids& whole, int max_new) const {
    const NaiveModel ref(tm, &activated[static_cast<std::size_t>(i)]);
    const auto out = ref.greedy(std::vector<int>(whole.begin(), whole.end()), max_new);
    return {out.begin(), out.end()};
  }
  SharedSeq make_shared_sequence() const {
    return SharedSeq(*model, kSharedShape, kCommonPrefix,
                     {Segment{Segment::Kind::literal, -1, {60}}, Segment{Segment::Kind::request},
                      Segment{Segment::Kind::literal, -1, {61}}},
                     kTurnEnd);
  }
};

auto activated_stage(const ActivatedFixture& f, int i, int max_new) {
  return make_stage<RCache>("s" + std::to_string(i), *f.model, f.activated_slice(i), kStageShape,
                            {}, input(shared, ids(kInvocation[static_cast<std::size_t>(i)])),
                            {.max_new = max_new});
}

/// What the shared sequence holds after the opening: prefix, 60, request, 61.
Ids opening_sequence() { return concat({kCommonPrefix, {60}, kAsk, {61}}); }

}  // namespace

TEST_CASE("a relay of activated stages on one shared sequence equals each stage decoded alone") {
  ActivatedFixture f("shared_chain");
  SharedSeq sh = f.make_shared_sequence();
  auto s0 = activated_stage(f, 0, 6);
  auto s1 = activated_stage(f, 1, 7);
  auto s2 = activated_stage(f, 2, 5);
  s0.read_shared(sh);
  s1.read_shared(sh);
  s2.read_shared(sh);
  Relay relay{s0, s1, s2};
  relay.prewarm();
  const RelayResult r = relay.run(kAsk, {.max_cycles = 2, .loop_from = 1, .gate = never()});
  REQUIRE(r.verdict == Verdict::fail);
  REQUIRE(r.runs.size() == 5);  // s0 s1 s2, then s1 s2 again

  // The naive chain: each run reads everything before it, then its invocation.
  Ids seq = opening_sequence();
  const int max_new[] = {6, 7, 5};
  int turns = 0;
  for (const StageRun& run : r.runs) {
    const Ids& inv = kInvocation[static_cast<std::size_t>(run.stage)];
    const Ids whole = concat({seq, inv});
    const Ids expect = f.naive(run.stage, whole, max_new[run.stage]);
    CAPTURE(run.stage);
    CAPTURE(run.cycle);
    CHECK(run.ids == expect);
    CHECK(run.input_tokens == static_cast<int>(inv.size()));
    // The adapter matters: the base model alone says something else.
    const NaiveModel base(f.tm, nullptr);
    const auto plain =
        base.greedy(std::vector<int>(whole.begin(), whole.end()), max_new[run.stage]);
    CHECK(Ids(plain.begin(), plain.end()) != expect);
    seq = concat({seq, inv, run.ids, kTurnEnd});
    turns += static_cast<int>(inv.size() + run.ids.size() + kTurnEnd.size());
  }
  // The base computed the opening once and every turn but the last once.
  const StageRun& last = r.runs.back();
  const int last_turn = static_cast<int>(kInvocation[2].size() + last.ids.size() + 1);
  CHECK(r.shared_tokens == 9 + turns - last_turn);
  CHECK(r.prefill_tokens() == r.shared_tokens + 2 + 3 + 1 + 3 + 1);
  CHECK(r.shared_ms > 0);
  // What the shared slot holds is exactly that sequence, without the last turn.
  CHECK(Ids(sh.ids(0).begin(), sh.ids(0).end()) == Ids(seq.begin(), seq.end() - last_turn));

  SUBCASE("a second request rewinds the shared region and gives the same ids") {
    const RelayResult again = relay.run(kAsk, {.max_cycles = 2, .loop_from = 1, .gate = never()});
    REQUIRE(again.runs.size() == r.runs.size());
    for (std::size_t k = 0; k < r.runs.size(); ++k) CHECK(again.runs[k].ids == r.runs[k].ids);
  }
  SUBCASE("a failed request leaves the pre-warmed prefix and the next request intact") {
    const Ids bad = {11, 12, 9999};
    const RelayResult failed =
        relay.try_run(bad, {.max_cycles = 2, .loop_from = 1, .gate = never()});
    CHECK(failed.verdict == Verdict::error);
    CHECK(failed.error.find("9999") != std::string::npos);
    const RelayResult after = relay.run(kAsk, {.max_cycles = 2, .loop_from = 1, .gate = never()});
    REQUIRE(after.runs.size() == r.runs.size());
    for (std::size_t k = 0; k < r.runs.size(); ++k) CHECK(after.runs[k].ids == r.runs[k].ids);
  }
}

TEST_CASE("a mixed relay: a plain stage with its own prefix, then activated stages") {
  ActivatedFixture f("shared_mixed");
  SharedSeq sh = f.make_shared_sequence();
  const Ids own_prefix = {2, 7, 18, 28};
  auto plain = make_stage<RCache>("plain", *f.model, f.slice(1), KvShape{8, 32, 1}, own_prefix,
                                  input(ids({60}), request), {.max_new = 5});
  auto s1 = activated_stage(f, 1, 6);
  auto s2 = activated_stage(f, 2, 4);
  s1.read_shared(sh);
  s2.read_shared(sh);
  Relay relay{plain, s1, s2};
  relay.prewarm();
  const RelayResult r = relay.run(kAsk);
  REQUIRE(r.runs.size() == 3);
  const Ids p = f.reference(1, own_prefix, concat({{60}, kAsk}), 5);
  CHECK(r.output(0) == p);
  // The plain stage's turn is its output alone (its own input is not the shared sequence's).
  Ids seq = concat({opening_sequence(), p, kTurnEnd});
  const Ids o1 = f.naive(1, concat({seq, kInvocation[1]}), 6);
  CHECK(r.output(1) == o1);
  seq = concat({seq, kInvocation[1], o1, kTurnEnd});
  CHECK(r.output(2) == f.naive(2, concat({seq, kInvocation[2]}), 4));
}

TEST_CASE("a slot reading the shared sequence never writes it and refuses once it moved") {
  ActivatedFixture f("shared_writes");
  SharedSeq sh = f.make_shared_sequence();
  auto s0 = activated_stage(f, 0, 6);
  s0.read_shared(sh);
  sh.prewarm();
  s0.prewarm();
  sh.begin(concat({{60}, kAsk, {61}}), 0);
  const int shared_len = static_cast<int>(sh.ids(0).size());
  const int shared_pos = sh.cache().position(KvTarget::in_slot(0));
  CHECK(shared_pos == shared_len);

  auto s = s0.begin(kInvocation[0], 0);
  // The stage's tail starts where the shared slot ends; its writes went there alone.
  CHECK(s0.cache().tail_start(0) == shared_len);
  CHECK(s0.cache().position(KvTarget::in_slot(0)) == shared_len + 2);
  CHECK(s0.step(s));
  CHECK(sh.cache().position(KvTarget::in_slot(0)) == shared_pos);

  SUBCASE("the shared slot moved under it: the next write is refused, nothing written") {
    sh.append_turn(Ids{1, 2}, Ids{3}, 0);
    const int before = s0.cache().position(KvTarget::in_slot(0));
    CHECK_THROWS_AS(s0.step(s), position_error);
    CHECK(s0.cache().position(KvTarget::in_slot(0)) == before);
  }
  SUBCASE("rewound and refilled to the same length: refused too (the epoch, not the length)") {
    sh.begin(concat({{60}, kAsk, {61}}), 0);
    REQUIRE(sh.cache().position(KvTarget::in_slot(0)) == shared_pos);
    CHECK_THROWS_AS(s0.step(s), position_error);
  }
  SUBCASE("re-pre-warmed: refused") {
    sh.prewarm();
    CHECK_THROWS_AS(s0.step(s), position_error);
  }
}

TEST_CASE("a choice's slot forks onto its own copy of the shared sequence (fork_onto_copy)") {
  ActivatedFixture f("shared_fork");
  SharedSeq sh = f.make_shared_sequence();
  auto s0 = activated_stage(f, 0, 6);
  s0.read_shared(sh);
  sh.prewarm();
  s0.prewarm();
  const auto at = [](int slot) { return KvTarget::in_slot(slot); };
  sh.begin(concat({{60}, kAsk, {61}}), 0);
  sh.fork(0, 1);
  CHECK(Ids(sh.ids(1).begin(), sh.ids(1).end()) == opening_sequence());
  CHECK(sh.cache().position(at(1)) == sh.cache().position(at(0)));

  auto a = s0.begin(kInvocation[0], 0, 0);  // slot 0 reads shared slot 0
  CHECK(s0.step(a));
  auto& cache = s0.cache_for_batch();
  EXPECT_ERROR(usage_error, cache.fork_onto_copy(0, 1), "does not read a copy");  // not linked
  cache.rewind_onto(1, sh.cache(), 1);
  cache.fork_onto_copy(0, 1);
  CHECK(cache.position(at(1)) == cache.position(at(0)));
  CHECK(cache.tail_start(1) == cache.tail_start(0));
  EXPECT_ERROR(usage_error, cache.fork_onto_copy(0, 1), "has a tail already");

  // The first choice's shared slot moves on (its turn): its own slot may not write any more,
  // the copy's may; a plain fork would have linked the copy to the moved slot.
  sh.append_turn(kInvocation[0], Ids{1}, 0);
  CHECK_THROWS_AS(s0.step(a), position_error);
  CHECK_NOTHROW(cache.check_write(at(1), cache.position(at(1)), 1));
  cache.rewind_onto(1, sh.cache(), 1);
  EXPECT_ERROR(position_error, cache.fork_onto_copy(0, 1), "has moved");
  cache.fork(0, 1);
  CHECK_THROWS_AS(cache.check_write(at(1), cache.position(at(1)), 1), position_error);
}

TEST_CASE("shared-sequence wiring and requests that cannot be served are refused") {
  ActivatedFixture f("shared_wiring");
  SharedSeq sh = f.make_shared_sequence();
  SUBCASE("the shared segment anywhere but first") {
    CHECK_THROWS_AS(make_stage<RCache>("late", *f.model, f.activated_slice(0), kStageShape, {},
                                       input(ids({1}), shared), {.max_new = 2}),
                    wiring_error);
  }
  SUBCASE("a plain LoRA reading the shared sequence") {
    auto st = make_stage<RCache>("plain", *f.model, f.slice(0), kStageShape, {},
                                 input(shared, ids({50, 51})), {.max_new = 2});
    CHECK_THROWS_AS(st.read_shared(sh), wiring_error);
  }
  SUBCASE("a stage with its own prefix reading the shared sequence") {
    auto st = make_stage<RCache>("prefixed", *f.model, f.activated_slice(0), KvShape{4, 32, 1},
                                 {1, 2}, input(shared, ids({50, 51})), {.max_new = 2});
    CHECK_THROWS_AS(st.read_shared(sh), wiring_error);
  }
  SUBCASE("wire::shared without a shared sequence") {
    auto st = activated_stage(f, 0, 2);
    CHECK_THROWS_AS((Relay{st}), wiring_error);
    CHECK_THROWS_AS(st.prewarm(), wiring_error);
  }
  SUBCASE("two shared sequences in one relay") {
    SharedSeq other = f.make_shared_sequence();
    auto a = activated_stage(f, 0, 2);
    auto b = activated_stage(f, 1, 2);
    a.read_shared(sh);
    b.read_shared(other);
    CHECK_THROWS_AS((Relay{a, b}), wiring_error);
  }
  SUBCASE("an input without the invocation: its last occurrence would lie in the shared part") {
    auto st = make_stage<RCache>("s0", *f.model, f.activated_slice(0), kStageShape, {},
                                 input(shared, ids({20})), {.max_new = 2});
    st.read_shared(sh);
    sh.prewarm();
    st.prewarm();
    sh.begin(concat({{60}, kAsk, {61}}), 0);
    sh.append_turn(kInvocation[0], Ids{1}, 0);  // the invocation, now in the shared part
    CHECK_THROWS_AS(st.begin(Ids{20}, 0), usage_error);
    // An input with no occurrence anywhere adapts nothing: the base model's ids.
    sh.begin(concat({{60}, kAsk, {61}}), 0);
    auto s = st.begin(Ids{20}, 0);
    while (st.step(s)) {
    }
    const NaiveModel base(f.tm, nullptr);
    const Ids whole = concat({opening_sequence(), {20}});
    const auto expect = base.greedy(std::vector<int>(whole.begin(), whole.end()), 2);
    CHECK(st.finish(s).ids == Ids(expect.begin(), expect.end()));
  }
}

TEST_CASE("the batch scheduler: requests of a relay of activated stages, each as run alone") {
  ActivatedFixture f("shared_scheduled");
  SharedSeq sh = f.make_shared_sequence();
  auto s0 = activated_stage(f, 0, 6);
  auto s1 = activated_stage(f, 1, 7);
  auto s2 = activated_stage(f, 2, 5);
  for (auto* s : {&s0, &s1, &s2}) s->read_shared(sh);
  Relay relay{s0, s1, s2};
  relay.prewarm();
  const RelayOptions opt{.max_cycles = 2, .loop_from = 1, .gate = never()};
  const std::vector<Ids> requests = {
      kAsk, {20, 21, 22}, {8, 9, 10, 11, 12, 13, 14, 15, 16, 17}, {40}};
  std::vector<RelayResult> alone;
  for (const Ids& q : requests) alone.push_back(relay.run(q, opt));

  // Two slots per stage and two shared slots for four requests: some wait for a shared slot;
  // chunks of at most 5 tokens put the base's rows beside prefill and decode rows.
  RelayScheduler<decltype(s0)> sched({&s0, &s1, &s2}, opt, {.max_rows = 8, .max_tokens = 5});
  std::vector<Ticket> tickets;
  for (const Ids& q : requests) tickets.push_back(sched.submit(q));
  sched.run();
  for (std::size_t k = 0; k < requests.size(); ++k) {
    CAPTURE(k);
    const auto r = sched.take(tickets[k]);
    REQUIRE(r.has_value());
    REQUIRE(r->verdict == alone[k].verdict);
    REQUIRE(r->runs.size() == alone[k].runs.size());
    for (std::size_t j = 0; j < r->runs.size(); ++j) CHECK(r->runs[j].ids == alone[k].runs[j].ids);
    CHECK(r->shared_tokens == alone[k].shared_tokens);
  }
  // n choices on a shared sequence: choice c is the request on its streams shifted by c x 3
  // (the relay's stages), and the opening and the first stage's prompt went through the model
  // once (each choice's shared slot a copy of the first's, its stage slot forked onto it).
  RequestOptions sampled;
  sampled.own.sampling = SamplingOptions{};
  sampled.own.sampling->params.temperature = 1.5f;
  sampled.own.sampling->seed = 5;
  sampled.own.sampling->stream = 1;
  const auto tokens_to_idle = [&] {
    long long n = 0;
    while (!sched.idle()) n += sched.step().tokens;
    return n;
  };
  std::vector<Ticket> each;
  long long each_tokens = 0;
  for (std::uint64_t c = 0; c < 2; ++c) {
    RequestOptions o = sampled;
    o.own.sampling->stream += c * 3;
    each.push_back(sched.submit(kAsk, o));
    each_tokens += tokens_to_idle();
  }
  const std::vector<Ticket> choices = sched.submit_choices(kAsk, sampled, 2);
  const long long choice_tokens = tokens_to_idle();
  const long long once = 9 + static_cast<long long>(kInvocation[0].size());  // 60, kAsk, 61
  CHECK(choice_tokens == each_tokens - once);
  std::vector<std::vector<Ids>> choice_ids;
  for (std::size_t c = 0; c < 2; ++c) {
    CAPTURE(c);
    const auto got = sched.take(choices[c]);
    const auto want = sched.take(each[c]);
    REQUIRE(got.has_value());
    REQUIRE(want.has_value());
    REQUIRE(got->runs.size() == want->runs.size());
    CHECK(got->shared_tokens == want->shared_tokens);
    CHECK(got->prefill_tokens() == want->prefill_tokens());
    choice_ids.emplace_back();
    for (std::size_t j = 0; j < got->runs.size(); ++j) {
      CHECK(got->runs[j].ids == want->runs[j].ids);
      choice_ids.back().push_back(got->runs[j].ids);
    }
  }
  CHECK(choice_ids[0] != choice_ids[1]);  // the choices really drew differently

  // The first choice cancelled after k steps, and another request then taking its shared
  // slot: the second choice goes on alone, from wherever the fork had got to (its shared slot
  // taken but not yet a copy, or its slots forked onto its copy), and still gives its ids.
  for (int k = 0; k <= 4; ++k) {
    CAPTURE(k);
    const std::vector<Ticket> two = sched.submit_choices(kAsk, sampled, 2);
    for (int i = 0; i < k; ++i) sched.step();
    sched.cancel(two[0]);
    const Ticket other = sched.submit(kAsk);
    sched.run();
    CHECK(sched.take(two[0])->verdict == Verdict::error);
    const auto second = sched.take(two[1]);
    REQUIRE(second.has_value());
    REQUIRE(second->runs.size() == choice_ids[1].size());
    for (std::size_t j = 0; j < second->runs.size(); ++j)
      CHECK(second->runs[j].ids == choice_ids[1][j]);
    const auto third = sched.take(other);
    REQUIRE(third.has_value());
    REQUIRE(third->runs.size() == alone[0].runs.size());
    for (std::size_t j = 0; j < third->runs.size(); ++j)
      CHECK(third->runs[j].ids == alone[0].runs[j].ids);
  }

  // A request that fails (an id outside the vocabulary) ends alone and frees its shared slot.
  const Ticket bad = sched.submit({11, 999});
  const Ticket good = sched.submit(kAsk);
  sched.run();
  CHECK(sched.take(bad)->verdict == Verdict::error);
  const auto again = sched.take(good);
  REQUIRE(again.has_value());
  REQUIRE(again->runs.size() == alone[0].runs.size());
  for (std::size_t j = 0; j < again->runs.size(); ++j)
    CHECK(again->runs[j].ids == alone[0].runs[j].ids);
}
