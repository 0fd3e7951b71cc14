// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// Constraints that compose (issue "hostile input, round two", item 1): a grammar, a token set,
// stop sequences and step-skip in one chain, on random tiny models, on the host backend (the
// stepped loop, step-skip included) and on the host grid (the device-resident loop, the same
// code the CUDA backend runs). Every output is checked against every constraint by matchers
// written here: PCRE2 on the text for the grammar, set membership for the token set, a byte
// scan for the stop strings. A chain whose members leave no token must be a clear error
// naming them, and the independent check must agree that nothing was left.
//
// Mutation checks (2026-12-02): Chain::forced_token without the consent check -> the issue's
// three cases print a digit-less '%' / the denied 'z' and the random runs find tokens outside
// the allow set (step-skip runs); Chain::advance without may_end -> "a stop string inside a
// grammar's match" cuts "aab" to "a"; Decoder::after_prompt without complete_at_start -> the
// empty grammar is a numeric_error.
#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "baton/grammar/grammar.hpp"
#include "baton/intercept/builtins.hpp"
#include "baton/intercept/grammar_constraint.hpp"
#include "baton/intercept/maybe.hpp"
#include "baton/model/host_grid_forward.hpp"
#include "support/grammar_world.hpp"

using namespace baton;
using namespace baton::test;
namespace g = baton::grammar;

namespace {

/// One request's constraints; an absent member is left out of the chain.
struct Constraints {
  std::string regex;  ///< the grammar, when has_grammar
  bool has_grammar = false;
  bool has_set = false;
  TokenSetMode mode = TokenSetMode::allow;
  std::vector<std::int32_t> set_ids;
  std::vector<std::string> stops;  ///< stop strings (none: no stop-sequence member)
  bool step_skip = false;          ///< host backend only (the grid runs its device loop)
  int max_new = 24;
  bool eos_stops = true;  ///< the end-of-sequence id is a stop id (false: --ignore-eos)
  std::vector<std::int32_t> request = {40, 41};

  bool set_allows(std::int32_t id) const {
    if (!has_set) return true;
    const bool listed = std::find(set_ids.begin(), set_ids.end(), id) != set_ids.end();
    return listed == (mode == TokenSetMode::allow);
  }
};

struct Outcome {
  DecodeResult result;    ///< the generation, or what it had produced when it failed
  std::string error;      ///< the message of a baton::error ("" when none)
  bool no_token = false;  ///< the error was the chain leaving no token (host: usage_error)
};

template <Backend B>
using ComposeChain = Chain<MaybeInterceptor<GrammarConstraint<B>>, MaybeInterceptor<TokenSet<B>>,
                           MaybeInterceptor<StopSequences<B>>, MaybeInterceptor<StepSkip>>;

/// The world's model on backend B.
template <Backend B>
const BaseModel<B, f32>& model_on(const GrammarWorld& w) {
  if constexpr (std::is_same_v<B, host>) {
    return *w.model;
  } else {
    static_assert(std::is_same_v<B, host_grid>);
    thread_local std::filesystem::path loaded;
    thread_local std::unique_ptr<BaseModel<host_grid, f32>> m;
    if (loaded != w.dir) {
      m = std::make_unique<BaseModel<host_grid, f32>>(load_model<host_grid, f32>(w.dir / "model"));
      loaded = w.dir;
    }
    return *m;
  }
}

template <Backend B>
Outcome run_on(const GrammarWorld& w, const Constraints& c) {
  using C = ComposeChain<B>;
  MaybeInterceptor<GrammarConstraint<B>> grammar;
  if (c.has_grammar)
    grammar = MaybeInterceptor<GrammarConstraint<B>>(
        GrammarConstraint<B>(g::compile_grammar(g::GrammarSpec::regex(c.regex), w.vocab)));
  MaybeInterceptor<TokenSet<B>> set;
  if (c.has_set)
    set = MaybeInterceptor<TokenSet<B>>(
        TokenSet<B>(c.mode, c.set_ids, static_cast<int>(w.strings.size())));
  MaybeInterceptor<StopSequences<B>> stops;
  if (!c.stops.empty()) {
    TokenByteTable table;
    for (const std::string& s : w.strings) table.push(s);
    stops = MaybeInterceptor<StopSequences<B>>(StopSequences<B>(table, c.stops));
  }
  MaybeInterceptor<StepSkip> skip;
  if (c.step_skip && std::is_same_v<B, host>) skip = MaybeInterceptor<StepSkip>(StepSkip{});
  const C chain(std::move(grammar), std::move(set), std::move(stops), std::move(skip));

  const BaseModel<B, f32>& model = model_on<B>(w);
  const int n = static_cast<int>(c.request.size());
  KvBuffer<layout::HeadMajor<f32, 8>, B> cache(
      model.config(), KvShape{.prefix_capacity = 0, .tail_capacity = n + c.max_new, .slots = 1});
  cache.reset_prefix();
  cache.freeze_prefix();
  Workspace<B> ws;
  const auto slice = LoraSlice<8, B>::none(model.config());
  const DecodeOptions opt{
      c.max_new, c.eos_stops ? std::vector<std::int32_t>{w.eos} : std::vector<std::int32_t>{}};
  RequestState<C, B> request;
  auto& branch = request.open(chain, "compose", "compose", c.max_new);
  Decoder<BaseModel<B, f32>, LoraSlice<8, B>, KvBuffer<layout::HeadMajor<f32, 8>, B>, C> d(
      model, slice, cache, ws, KvTarget::in_slot(0), opt, chain, branch, "compose");
  Outcome out;
  try {
    d.prefill(c.request, 0);
    d.run();
    out.result = d.take_result();
  } catch (const usage_error& e) {
    out.error = e.what();
    out.no_token = true;
    out.result = d.result();
  } catch (const error& e) {
    out.error = e.what();
    out.result = d.result();
  }
  return out;
}

/// Whether a stop string ends at some byte of token `j` (StopSequences compares the tail after
/// every byte; only generated bytes count).
bool stop_fires(const GrammarWorld& w, const Constraints& c, const std::vector<std::int32_t>& ids,
                std::size_t j) {
  const std::string before = w.text({ids.begin(), ids.begin() + static_cast<long>(j)});
  const std::string& piece = w.strings[static_cast<std::size_t>(ids[j])];
  for (std::size_t e = 1; e <= piece.size(); ++e) {
    const std::string text = before + piece.substr(0, e);
    for (const std::string& s : c.stops)
      if (text.size() >= s.size() && text.compare(text.size() - s.size(), s.size(), s) == 0)
        return true;
  }
  return false;
}

/// Every constraint against a finished generation, by the independent matchers.
void check_honoured(const GrammarWorld& w, const Constraints& c, const DecodeResult& r) {
  const std::string text = w.text(r.ids);
  INFO("output \"" << text << "\" stopped_by '" << r.stopped_by << "' stop_id " << r.stop_id);
  for (const std::int32_t id : r.ids) CHECK_MESSAGE(c.set_allows(id), "id " << id);
  if (r.stop_id == w.eos) CHECK(c.set_allows(w.eos));
  if (c.has_grammar) CHECK(pcre_full_match(c.regex, text));
  // A stop string ends the output at the first token where it fires and the grammar (if any)
  // has a complete match; never earlier, never later.
  for (std::size_t j = 0; j < r.ids.size(); ++j) {
    const bool honoured =
        !c.stops.empty() && stop_fires(w, c, r.ids, j) &&
        (!c.has_grammar ||
         pcre_full_match(c.regex,
                         w.text({r.ids.begin(), r.ids.begin() + static_cast<long>(j) + 1})));
    if (j + 1 < r.ids.size()) CHECK_MESSAGE(!honoured, "a stop string fired at token " << j);
    if (j + 1 == r.ids.size() && r.stopped_by == StopSequences<host>::plugin_id) CHECK(honoured);
  }
  CHECK((r.stopped || static_cast<int>(r.ids.size()) == c.max_new));
}

/// When the chain left no token: by the independent matchers, no id that the set allows
/// continues the grammar after the output so far (budget aside). Returns whether that holds.
bool nothing_left(const GrammarWorld& w, const Constraints& c,
                  const std::vector<std::int32_t>& ids) {
  const std::string text = w.text(ids);
  for (std::int32_t id = 0; id < static_cast<std::int32_t>(w.strings.size()); ++id) {
    if (!c.set_allows(id)) continue;
    if (!c.has_grammar) return false;
    if (id == w.eos ? pcre_full_match(c.regex, text)
                    : pcre_viable_prefix(c.regex, text + w.strings[static_cast<std::size_t>(id)]))
      return false;
  }
  return true;
}

std::int32_t id_of(char ch) { return static_cast<std::int32_t>(ch - 0x20); }

Constraints random_constraints(std::mt19937& rng, const GrammarWorld& w) {
  Constraints c;
  std::uniform_real_distribution<double> u(0, 1);
  c.has_grammar = u(rng) < 0.75;
  if (c.has_grammar) c.regex = random_regex(rng);
  c.has_set = u(rng) < 0.7;
  if (c.has_set) {
    c.mode = u(rng) < 0.6 ? TokenSetMode::allow : TokenSetMode::deny;
    static const std::string kChars = "ab12 x-y+0c";
    const int n = c.mode == TokenSetMode::allow ? 1 + static_cast<int>(rng() % 6)
                                                : 1 + static_cast<int>(rng() % 4);
    for (int k = 0; k < n; ++k) c.set_ids.push_back(id_of(kChars[rng() % kChars.size()]));
    if (c.mode == TokenSetMode::allow && u(rng) < 0.6) c.set_ids.push_back(w.eos);
    if (c.mode == TokenSetMode::allow && u(rng) < 0.3)  // a wider set: multi-byte pieces too
      for (int k = 0; k < 20; ++k) c.set_ids.push_back(static_cast<std::int32_t>(rng() % 115));
  }
  if (u(rng) < 0.4) {
    static const std::vector<std::string> kStops = {"a", "b", "1", " ", "x", "ab", "1 ", "-"};
    c.stops.push_back(kStops[rng() % kStops.size()]);
    if (u(rng) < 0.3) c.stops.push_back(kStops[rng() % kStops.size()]);
  }
  c.step_skip = u(rng) < 0.5;
  c.max_new = 20 + static_cast<int>(rng() % 12);
  c.request = {static_cast<std::int32_t>(rng() % 90), static_cast<std::int32_t>(rng() % 90)};
  return c;
}

}  // namespace

TEST_CASE("composition: random grammar + token set + stop strings + step-skip honour all") {
  std::mt19937 rng(2212);
  int finished = 0, no_token = 0, no_token_budget = 0, skipped = 0, compared = 0, stops = 0;
  for (unsigned seed = 1; seed <= 3; ++seed) {
    GrammarWorld w(seed, "compose_");
    for (int k = 0; k < 40; ++k) {
      const Constraints c = random_constraints(rng, w);
      INFO("seed " << seed << " case " << k << " regex '" << c.regex << "' set "
                   << (c.has_set ? (c.mode == TokenSetMode::allow ? "allow" : "deny") : "none")
                   << " of " << c.set_ids.size() << ", " << c.stops.size() << " stops, skip "
                   << c.step_skip);
      // The grammar's shortest completion must fit (a refusal at the branch start is tested
      // elsewhere).
      if (c.has_grammar &&
          g::compile_grammar(g::GrammarSpec::regex(c.regex), w.vocab)->distance(0) > c.max_new)
        continue;
      const Outcome h = run_on<host>(w, c);
      if (h.error.empty()) {
        ++finished;
        check_honoured(w, c, h.result);
        skipped += h.result.skipped;
        stops += h.result.stopped_by == StopSequences<host>::plugin_id;
      } else {
        REQUIRE_MESSAGE(h.no_token, h.error);
        CHECK(h.error.find("stage 'compose'") != std::string::npos);
        CHECK(h.error.find("no token") != std::string::npos);
        CHECK(h.error.find("'baton.token_set'") != std::string::npos);
        // The independent matchers agree that nothing was left, unless the grammar's budget
        // (max_new) is what ruled the rest out, which PCRE2 cannot see.
        const int remaining = c.max_new - static_cast<int>(h.result.ids.size());
        if (nothing_left(w, c, h.result.ids)) {
          ++no_token;
        } else {
          CHECK_MESSAGE(remaining < 12, h.error);
          ++no_token_budget;
        }
      }
      // The host grid runs the same chain in its device loop (no step-skip there): the same
      // tokens, the same ending, and an error where the host has one.
      const Outcome gr = run_on<host_grid>(w, c);
      if (h.error.empty()) check_honoured(w, c, gr.result);
      CHECK(gr.error.empty() == h.error.empty());
      // (A failed device loop reads back no ids: only finished runs are compared.)
      if (!c.step_skip && h.error.empty() && gr.error.empty()) {
        ++compared;
        CHECK(gr.result.ids == h.result.ids);
        CHECK(gr.result.stopped_by == h.result.stopped_by);
      }
      if (!gr.error.empty())
        CHECK_MESSAGE(gr.error.find("no token in common") != std::string::npos, gr.error);
    }
  }
  MESSAGE(finished << " generations honoured every constraint, " << no_token
                   << " ended in 'no token left' confirmed by PCRE2 and the set, "
                   << no_token_budget << " more where the budget ruled; " << skipped
                   << " steps skipped; " << stops << " ended by a stop string; " << compared
                   << " host/grid pairs compared");
  CHECK(finished > 40);
  CHECK(no_token > 5);
  CHECK(skipped > 10);
  CHECK(stops > 3);
}

TEST_CASE("composition: a forced token needs every member's consent (the issue's cases)") {
  GrammarWorld w(4, "compose_");
  const auto run = [&](const std::string& re, TokenSetMode mode, std::vector<std::int32_t> ids,
                       bool skip) {
    Constraints c;
    c.has_grammar = true;
    c.regex = re;
    c.has_set = true;
    c.mode = mode;
    c.set_ids = std::move(ids);
    c.step_skip = skip;
    return run_on<host>(w, c);
  };
  for (const bool skip : {true, false}) {
    CAPTURE(skip);
    // `[0-9]{3}` with only '%' (id 5) allowed: no digit may be chosen.
    const Outcome a = run("[0-9]{3}", TokenSetMode::allow, {5}, skip);
    CHECK(a.no_token);
    CHECK(a.result.ids.empty());
    CHECK(a.error.find("'baton.grammar' and 'baton.token_set'") != std::string::npos);
    // `z` with 'z' denied: the grammar's only token is the one the set forbids.
    const Outcome b = run("z", TokenSetMode::deny, {id_of('z')}, skip);
    CHECK(b.no_token);
    CHECK(b.result.ids.empty());
    // `z+` with only '%' allowed: the first step already has nothing in common.
    const Outcome c = run("z+", TokenSetMode::allow, {5}, skip);
    CHECK(c.no_token);
    CHECK(c.result.ids.empty());
    CHECK(c.error.find("decode step 0") != std::string::npos);
    // With consent, forced tokens still skip: "zz" from `zz` with z and EOS allowed.
    const Outcome d = run("zz", TokenSetMode::allow, {id_of('z'), w.eos}, skip);
    REQUIRE(d.error.empty());
    CHECK(w.text(d.result.ids) == "zz");
    CHECK(d.result.skipped == (skip ? 2 : 0));
  }
  // Disjoint from the start: the message names both members and the stage.
  Constraints disjoint;
  disjoint.has_grammar = true;
  disjoint.regex = "a";
  disjoint.has_set = true;
  disjoint.set_ids = {id_of('b')};
  const Outcome e = run_on<host>(w, disjoint);
  CHECK(e.no_token);
  CHECK(e.error.find("stage 'compose': decode step 0: the constraints 'baton.grammar' and "
                     "'baton.token_set' leave no token in common") != std::string::npos);
}

TEST_CASE("composition: a stop string inside a grammar's match does not cut it off") {
  GrammarWorld w(5, "compose_");
  const auto run = [&]<class B>(B, const std::string& re, std::vector<std::string> stops) {
    Constraints c;
    c.has_grammar = true;
    c.regex = re;
    c.stops = std::move(stops);
    return run_on<B>(w, c);
  };
  for (const bool grid : {false, true}) {
    CAPTURE(grid);
    const auto go = [&](const std::string& re, std::vector<std::string> stops) {
      return grid ? run(host_grid{}, re, std::move(stops)) : run(host{}, re, std::move(stops));
    };
    // "a" fires after the first token, where `aab` is not complete: not honoured.
    const Outcome a = go("aab", {"a"});
    REQUIRE(a.error.empty());
    CHECK(w.text(a.result.ids) == "aab");
    CHECK(a.result.stopped_by == GrammarConstraint<host>::plugin_id);
    // `a+` is a complete match after one 'a': the stop is honoured there.
    const Outcome b = go("a+", {"a"});
    REQUIRE(b.error.empty());
    CHECK(w.text(b.result.ids) == "a");
    CHECK(b.result.stopped_by == StopSequences<host>::plugin_id);
    // "b" fires inside `(ab){3}` twice before the match completes; only the grammar ends it.
    const Outcome c = go("(ab){3}", {"b"});
    REQUIRE(c.error.empty());
    CHECK(w.text(c.result.ids).size() == 6);
    CHECK(pcre_full_match("(ab){3}", w.text(c.result.ids)));
  }
}

TEST_CASE("composition: an empty grammar ends the generation with no token") {
  GrammarWorld w(6, "compose_");
  for (const bool grid : {false, true}) {
    for (const int variant : {0, 1, 2}) {
      Constraints c;
      c.has_grammar = true;
      c.regex = "";
      c.step_skip = variant == 1;
      c.eos_stops = variant != 2;  // with no stop id, the grammar allows no token at all
      const Outcome o = grid ? run_on<host_grid>(w, c) : run_on<host>(w, c);
      CAPTURE(grid);
      CAPTURE(variant);
      REQUIRE_MESSAGE(o.error.empty(), o.error);
      CHECK(o.result.ids.empty());
      CHECK(o.result.stopped);
      CHECK(o.result.stopped_by == GrammarConstraint<host>::plugin_id);
    }
  }
  // `(a)?` may be empty but may go on: it is not complete at the start, so the model chooses.
  Constraints maybe;
  maybe.has_grammar = true;
  maybe.regex = "(a)?";
  const Outcome o = run_on<host>(w, maybe);
  REQUIRE(o.error.empty());
  CHECK(pcre_full_match("(a)?", w.text(o.result.ids)));
}

TEST_CASE("composition: a request whose constraints leave no token leaves the stage usable") {
  using namespace baton::wire;
  GrammarWorld w(7, "compose_");
  // `(ab|1x)` with only a, b, 1 and EOS allowed: a request whose model picks '1' first is left
  // with no token at step 1; one that picks 'a' completes "ab".
  const auto tg = g::compile_grammar(g::GrammarSpec::regex("(ab|1x)"), w.vocab);
  const std::vector<std::int32_t> allowed = {id_of('a'), id_of('b'), id_of('1'), w.eos};
  const auto make = [&] {
    return make_stage<RCache>(
        "extract", *w.model, w.no_adapter(),
        {.prefix_capacity = 8, .tail_capacity = 16, .slots = 1},
        std::vector<std::int32_t>{40, 41, 42}, input(request), StageLimits{8, {w.eos}},
        Chain{GrammarConstraint<host>(tg),
              TokenSet<host>::allow(allowed, static_cast<int>(w.strings.size()))});
  };
  auto stage = make();
  stage.prewarm();
  std::vector<std::int32_t> failing, passing;
  DecodeResult passed;
  for (std::int32_t a = 0; a < 90 && (failing.empty() || passing.empty()); ++a) {
    const std::vector<std::int32_t> req = {a, static_cast<std::int32_t>((a * 7) % 90)};
    try {
      const DecodeResult r = stage.run(req);
      if (passing.empty()) {
        passing = req;
        passed = r;
      }
    } catch (const usage_error& e) {
      CHECK(std::string(e.what()).find("leave no token in common") != std::string::npos);
      if (failing.empty()) failing = req;
    }
  }
  REQUIRE(!failing.empty());
  REQUIRE(!passing.empty());
  CHECK(w.text(passed.ids) == "ab");
  // Fail, then pass on the same stage: the same output as a fresh stage's.
  CHECK_THROWS_AS(stage.run(failing), usage_error);
  CHECK(stage.run(passing).ids == passed.ids);
  auto fresh = make();
  fresh.prewarm();
  CHECK(fresh.run(passing).ids == passed.ids);
}
