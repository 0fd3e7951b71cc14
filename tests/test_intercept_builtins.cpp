// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// The built-in interceptors: the token-set constraint and stop sequences against constrained
// decoding on the naive reference, stop sequences matched on decoded bytes with a real
// byte-level tokenizer, the trace recorder's rows.
#include <doctest/doctest.h>

#include <fstream>
#include <string>

#include "baton/intercept/builtins.hpp"
#include "baton/text/token_bytes.hpp"
#include "support/chatml_tokenizer.hpp"
#include "support/intercept_fixture.hpp"

using namespace baton;
using namespace baton::test;
using namespace baton::wire;

namespace {

const std::vector<std::int32_t>& kPrefix = kInterceptPrefix;
const std::vector<std::int32_t>& kRequest = kInterceptRequest;
constexpr KvShape kShape = kInterceptShape;

/// A tiny model over the ChatML test tokenizer's vocabulary, and that tokenizer.
struct TextFixture {
  int vocab = 0;
  Tokenizer tok = [this] {
    const auto j = chatml_tokenizer_json(vocab);
    return Tokenizer::from_json(j, "chatml-test");
  }();
  TinyModel tm = make_tiny_model([this] {
    TinySpec s;
    s.vocab = vocab + 4;  // four padding rows past the tokenizer's ids
    s.seed = 77;
    return s;
  }());
  std::filesystem::path dir = fresh_dir("intercept_text");
  RModel model = [this] {
    write_tiny_model(tm, dir / "model");
    return load_model<host, f32>(dir / "model");
  }();
};

}  // namespace

TEST_CASE("token set: allow and deny sets equal constrained reference decoding") {
  RelayFixture f("builtin_token_set");
  const NaiveModel ref(f.tm, &f.adapters[1]);
  const auto seq = as_int(concat({kPrefix, kRequest}));
  const int vocab = f.tm.cfg.vocab_size;
  const std::vector<std::int32_t> allowed = {4, 8, 15, 16, 23, 42};

  auto allow = make_stage<RCache>("allow", *f.model, f.slice(1), kShape, kPrefix, input(request),
                                  {.max_new = 12}, Chain{TokenSet<host>::allow(allowed, vocab)});
  allow.prewarm();
  const auto got = allow.run(kRequest).ids;
  const auto want = constrained_greedy(ref, seq, 12, [&](const std::vector<int>&, int id) {
    return std::find(allowed.begin(), allowed.end(), id) != allowed.end();
  });
  CHECK(as_int(got) == want.ids);

  // Deny the ids the free run chooses most: the constrained run must avoid them.
  const auto free_run = ref.greedy(seq, 12);
  const std::vector<std::int32_t> denied = {free_run[0], free_run[1], free_run[2]};
  auto deny = make_stage<RCache>("deny", *f.model, f.slice(1), kShape, kPrefix, input(request),
                                 {.max_new = 12}, Chain{TokenSet<host>::deny(denied, vocab)});
  deny.prewarm();
  const auto got_deny = deny.run(kRequest).ids;
  const auto want_deny = constrained_greedy(ref, seq, 12, [&](const std::vector<int>&, int id) {
    return std::find(denied.begin(), denied.end(), id) == denied.end();
  });
  CHECK(as_int(got_deny) == want_deny.ids);
  CHECK(want_deny.ids != free_run);
}

TEST_CASE("token set: forced token, bounds and empty sets") {
  const int vocab = 70;  // not a multiple of 32: the last word is partial
  // params() points into the set's own buffer: the set must outlive them.
  const auto set_one = TokenSet<host>::allow(std::vector<std::int32_t>{69}, vocab);
  const auto one = set_one.params();
  CHECK(TokenSet<host>::forced_token(one, {}) == 69);
  CHECK(TokenSet<host>::allows(one, 69));
  CHECK_FALSE(TokenSet<host>::allows(one, 68));
  CHECK_FALSE(TokenSet<host>::allows(one, 70));  // past the vocabulary
  std::vector<std::int32_t> all_but_33;
  for (int i = 0; i < vocab; ++i)
    if (i != 33) all_but_33.push_back(i);
  const auto deny_all_but_33 = TokenSet<host>::deny(all_but_33, vocab);
  CHECK(TokenSet<host>::forced_token(deny_all_but_33.params(), {}) == 33);
  CHECK(TokenSet<host>::allows(deny_all_but_33.params(), 33));
  CHECK_FALSE(TokenSet<host>::allows(deny_all_but_33.params(), 32));
  const auto two = TokenSet<host>::allow(std::vector<std::int32_t>{1, 2}, vocab);
  CHECK(TokenSet<host>::forced_token(two.params(), {}) == -1);
  CHECK(TokenSet<host>::transform_logit(one, {}, 5, 2.5f) == -kInfinity);
  CHECK(TokenSet<host>::transform_logit(one, {}, 69, 2.5f) == 2.5f);
  CHECK_THROWS_WITH_AS(TokenSet<host>::allow(std::vector<std::int32_t>{}, vocab),
                       doctest::Contains("allow set is empty"), usage_error);
  CHECK_THROWS_WITH_AS(TokenSet<host>::allow(std::vector<std::int32_t>{3, 70}, vocab),
                       doctest::Contains("id 70 at index 1 is outside the vocabulary"),
                       usage_error);
  std::vector<std::int32_t> all(vocab);
  for (int i = 0; i < vocab; ++i) all[i] = i;
  CHECK_THROWS_WITH_AS(TokenSet<host>::deny(all, vocab), doctest::Contains("deny set holds every"),
                       usage_error);
}

TEST_CASE("token byte table: each id's bytes as the tokenizer decodes it; padding ids empty") {
  TextFixture t;
  const TokenByteTable table = token_byte_table(t.tok, t.tm.cfg.vocab_size);
  REQUIRE(table.vocab() == t.tm.cfg.vocab_size);
  for (std::int32_t id : {0, 10, 65, 200, 255, 256, t.vocab - 1}) {
    const auto b = table.token(id);
    CHECK(std::string(b.begin(), b.end()) == t.tok.decode(std::vector<std::int32_t>{id}));
  }
  CHECK(table.token(t.vocab).empty());
  CHECK(table.token(t.vocab + 3).empty());
}

TEST_CASE("stop sequences are matched on decoded bytes, however they were tokenized") {
  TextFixture t;
  const TokenByteTable table = token_byte_table(t.tok, t.tm.cfg.vocab_size);
  const StopSequences<host> stops(table, {"\n\n", "the end"});
  const auto p = stops.params();
  // Feeds ids one by one; the index of the token at which a stop was found, or -1.
  const auto stop_index = [&](const std::vector<std::int32_t>& ids) {
    auto s = stops.initial_state({});
    for (std::size_t k = 0; k < ids.size(); ++k)
      if (StopSequences<host>::advance(p, s, ids[k]) == StepAction::stop) return int(k);
    return -1;
  };
  const auto id_of = [&](const char* text) {
    const auto ids = t.tok.encode(text);
    REQUIRE(ids.size() == 1);
    return ids[0];
  };
  const std::int32_t nl = id_of("\n"), a = id_of("a"), b = id_of("b"), the = id_of(" the");
  CHECK(stop_index({a, nl, b, nl}) == -1);
  CHECK(stop_index({a, nl, nl, b}) == 2);  // two one-byte tokens
  // The whole text through the tokenizer: "\n\n" ends inside whatever token holds it.
  const auto ids = t.tok.encode("say the word\n\nthen go");
  const std::string text = t.tok.decode(ids);
  int expected = -1;
  for (std::size_t k = 0; k < ids.size() && expected < 0; ++k)
    if (t.tok.decode(std::span(ids.data(), k + 1)).find("\n\n") != std::string::npos)
      expected = static_cast<int>(k);
  REQUIRE(expected > 0);
  CHECK(stop_index(ids) == expected);
  // " the" is one merged token; "the end" starts inside it and ends three tokens later.
  CHECK(stop_index({a, the, id_of(" "), id_of("e"), id_of("n"), id_of("d"), a}) == 5);
  // Stops given as ids match the same bytes.
  const auto by_ids = StopSequences<host>::from_ids(table, {{nl, nl}});
  auto s = by_ids.initial_state({});
  CHECK(StopSequences<host>::advance(by_ids.params(), s, a) == StepAction::go_on);
  CHECK(StopSequences<host>::advance(by_ids.params(), s, nl) == StepAction::go_on);
  CHECK(StopSequences<host>::advance(by_ids.params(), s, nl) == StepAction::stop);

  CHECK_THROWS_WITH_AS(StopSequences<host>(table, {""}), doctest::Contains("each needs 1..64"),
                       usage_error);
  CHECK_THROWS_WITH_AS(StopSequences<host>(table, {std::string(65, 'x')}),
                       doctest::Contains("stop 0 has 65 bytes"), usage_error);
  CHECK_THROWS_WITH_AS(StopSequences<host>::from_ids(table, {{t.vocab}}),
                       doctest::Contains("decodes to no bytes"), usage_error);
}

TEST_CASE("stop sequences in a stage end the output at the token that completes the stop") {
  TextFixture t;
  const TokenByteTable table = token_byte_table(t.tok, t.tm.cfg.vocab_size);
  auto slice = RSlice::none(t.model.config());
  const std::vector<std::int32_t> prompt = t.tok.encode("<|im_start|>user\nthe star<|im_end|>");
  const NaiveModel ref(t.tm);
  const auto free_run = ref.greedy(as_int(prompt), 12);
  // A stop string that spans the boundary of the 3rd and 4th generated tokens.
  const auto bytes_of = [&](int id) {
    const auto b = table.token(id);
    return std::string(b.begin(), b.end());
  };
  REQUIRE(!bytes_of(free_run[2]).empty());
  REQUIRE(!bytes_of(free_run[3]).empty());
  const std::string stop = bytes_of(free_run[2]).substr(bytes_of(free_run[2]).size() - 1) +
                           bytes_of(free_run[3]).substr(0, 1);
  // Where the reference output's text first contains it (independent of the matcher).
  std::size_t want_len = 0;
  std::string text;
  for (std::size_t k = 0; k < free_run.size() && want_len == 0; ++k) {
    text += bytes_of(free_run[k]);
    if (text.find(stop) != std::string::npos) want_len = k + 1;
  }
  REQUIRE(want_len >= 1);
  REQUIRE(want_len <= 4);

  auto st = make_stage<RCache>("stopper", t.model, std::move(slice), kShape, {}, input(request),
                               {.max_new = 12}, Chain{StopSequences<host>(table, {stop})});
  st.prewarm();
  const DecodeResult r = st.run(prompt);
  CHECK(as_int(r.ids) == std::vector<int>(free_run.begin(), free_run.begin() + want_len));
  CHECK(r.stopped);
  CHECK(r.stopped_by == "baton.stop_sequences");
  CHECK(r.stop_id == -1);
}

TEST_CASE("trace recorder: one row per step with token, position, skip flag and times") {
  RelayFixture f("builtin_trace");
  auto st = make_stage<RCache>("traced", *f.model, f.slice(0), kShape, kPrefix, input(request),
                               {.max_new = 7}, Chain{TraceRecorder{}});
  st.prewarm();
  auto s = st.begin(kRequest, 0);
  while (st.step(s)) {
  }
  const std::vector<TraceRow> rows = s.branch().state<0>().rows;
  const DecodeResult r = st.finish(s);
  CHECK(r.ids == f.reference(0, kPrefix, kRequest, 7));  // not altering: the exact output
  REQUIRE(rows.size() == 7);
  double last_start = -1;
  for (int k = 0; k < 7; ++k) {
    CHECK(rows[k].step == k);
    CHECK(rows[k].position == static_cast<int>(kPrefix.size() + kRequest.size()) + k);
    CHECK(rows[k].token == r.ids[k]);
    CHECK_FALSE(rows[k].skipped);
    CHECK(rows[k].start_ms >= last_start);
    CHECK(rows[k].step_ms >= 0);
    last_start = rows[k].start_ms;
  }
}
