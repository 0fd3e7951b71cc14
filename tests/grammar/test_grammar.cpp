// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// The grammar engine on its own: regexes and schemas against hand-written cases and against
// PCRE2 (an independent matcher) on random grammars x random strings; errors for grammars
// outside the subset; budget-aware masks against an exhaustive search; the cache key.
// (Token masks against llguidance: check_llguidance.cpp.)
#include <doctest/doctest.h>

#include <pcre2.h>

#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "baton/grammar/grammar.hpp"
#include "support/expect_error.hpp"

namespace g = baton::grammar;

namespace {

bool dfa_matches(const g::Dfa& d, std::string_view s) {
  std::int32_t q = 0;
  for (const char c : s) {
    q = d.step(q, static_cast<std::uint8_t>(c));
    if (q == g::kDead) return false;
  }
  return d.accepting[static_cast<std::size_t>(q)] != 0;
}

g::Dfa dfa_of(const std::string& re) { return g::compile_dfa(g::GrammarSpec::regex(re)); }

// PCRE2, UTF mode, the whole subject: the independent judge of what a regex means.
class Pcre {
 public:
  explicit Pcre(const std::string& re) {
    const std::string anchored = "^(?:" + re + ")\\z";
    int err = 0;
    PCRE2_SIZE off = 0;
    code_ = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(anchored.data()), anchored.size(), PCRE2_UTF,
                          &err, &off, nullptr);
    REQUIRE_MESSAGE(code_ != nullptr, "PCRE2 rejects " << anchored);
    data_ = pcre2_match_data_create_from_pattern(code_, nullptr);
  }
  ~Pcre() {
    pcre2_match_data_free(data_);
    pcre2_code_free(code_);
  }
  Pcre(const Pcre&) = delete;
  Pcre& operator=(const Pcre&) = delete;
  bool matches(std::string_view s) const {
    return pcre2_match(code_, reinterpret_cast<PCRE2_SPTR>(s.data()), s.size(), 0, 0, data_,
                       nullptr) >= 0;
  }

 private:
  pcre2_code* code_ = nullptr;
  pcre2_match_data* data_ = nullptr;
};

// Random regexes over a small alphabet and strings over the same alphabet (plus noise), so
// that matches and near misses are both common.
const std::vector<std::string> kAtoms = {"a",     "b",     "é", "0",    "1",   " ",   "ab",
                                         "[a-c]", "[0-9]", ".", "[^a]", "\\d", "\\s", "\\w",
                                         "x",     "\\.",   "-", "[αβ]", "\\n"};
const std::vector<std::string> kChars = {"a", "b", "c", "é", "0", "1",  "9", " ",
                                         "x", ".", "-", "α", "β", "\n", "_", "Z"};

std::string random_regex(std::mt19937& rng, int depth = 0) {
  std::uniform_real_distribution<double> u(0, 1);
  const auto pick = [&](const std::vector<std::string>& v) {
    return v[std::uniform_int_distribution<std::size_t>(0, v.size() - 1)(rng)];
  };
  const double roll = u(rng);
  if (depth >= 3 || (depth > 0 && roll < 0.35)) return pick(kAtoms);
  if (roll < 0.55) return random_regex(rng, depth + 1) + random_regex(rng, depth + 1);
  if (roll < 0.7)
    return "(" + random_regex(rng, depth + 1) + "|" + random_regex(rng, depth + 1) + ")";
  static const std::vector<std::string> kQuant = {"?", "*", "+", "{2}", "{1,3}", "{0,2}", "{2,}"};
  return "(" + random_regex(rng, depth + 1) + ")" + pick(kQuant);
}

// A byte-level vocabulary: every byte as a token plus some multi-byte ones.
std::shared_ptr<const g::Vocabulary> small_vocab(std::vector<std::string> extra) {
  std::vector<std::string> bytes;
  for (int b = 0; b < 256; ++b) bytes.emplace_back(1, static_cast<char>(b));
  for (auto& e : extra) bytes.push_back(std::move(e));
  bytes.emplace_back();  // the end-of-sequence id, spelled by nothing
  const auto eos = static_cast<std::int32_t>(bytes.size() - 1);
  return std::make_shared<const g::Vocabulary>(std::move(bytes), std::vector<std::int32_t>{eos});
}

}  // namespace

TEST_CASE("regex: hand-written cases") {
  struct Case {
    const char* re;
    std::vector<std::string> yes, no;
  };
  const std::vector<Case> cases = {
      {"[0-9]+ [-+*/] [0-9]+", {"7 + 5", "12 * 30", "0 / 0"}, {"7+5", "7 + ", "a + 1", "7 + 5 "}},
      {"^ab|cd$", {"ab", "cd"}, {"abcd", "a", ""}},
      {"a{2,3}", {"aa", "aaa"}, {"a", "aaaa"}},
      {"a{2}", {"aa"}, {"a", "aaa"}},
      {"a{2,}", {"aa", "aaaaaa"}, {"a"}},
      {"(?:ab)*?c", {"c", "ababc"}, {"abc_", "aab"}},
      {"[^a]", {"b", "é", "\n", "😀"}, {"a", "", "bb"}},
      {".", {"b", "é", "😀"}, {"\n", ""}},
      {"[а-я]+", {"привет"}, {"Привет", "hello"}},
      {"\\x41\\u00e9\\x{1F600}", {"Aé😀"}, {"A"}},
      {"[\\]\\-]", {"]", "-"}, {"\\"}},
      {"\\d\\w\\s", {"1a ", "9_\t"}, {"a1 ", "١a "}},
      {"(?<year>[0-9]{4})-(?P<m>[0-9]{2})", {"2026-12"}, {"2026-1"}},
      {"", {""}, {"a"}},
      {"a||b", {"a", "", "b"}, {"ab"}},
  };
  for (const Case& c : cases) {
    INFO("regex " << c.re);
    const g::Dfa d = dfa_of(c.re);
    for (const auto& s : c.yes) CHECK_MESSAGE(dfa_matches(d, s), "should match: " << s);
    for (const auto& s : c.no) CHECK_MESSAGE(!dfa_matches(d, s), "should not match: " << s);
  }
}

TEST_CASE("regex: random grammars x random strings agree with PCRE2") {
  std::mt19937 rng(1515);
  int matched = 0, total = 0;
  for (int k = 0; k < 300; ++k) {
    const std::string re = random_regex(rng);
    const g::Dfa d = dfa_of(re);
    const Pcre pcre(re);
    for (int n = 0; n < 60; ++n) {
      std::string s;
      const int len = std::uniform_int_distribution<int>(0, 8)(rng);
      for (int i = 0; i < len; ++i)
        s += kChars[std::uniform_int_distribution<std::size_t>(0, kChars.size() - 1)(rng)];
      const bool want = pcre.matches(s);
      matched += want;
      ++total;
      CHECK_MESSAGE(dfa_matches(d, s) == want, "regex /" << re << "/ on \"" << s << "\"");
    }
    // Strings the DFA itself generates (a random accepted walk) must match too, so the
    // comparison is not dominated by rejections.
    for (int n = 0; n < 10; ++n) {
      std::string s;
      std::int32_t q = 0;
      for (int step = 0; step < 30; ++step) {
        if (d.accepting[static_cast<std::size_t>(q)] && rng() % 3 == 0) break;
        std::vector<int> bytes;
        for (int b = 0; b < 256; ++b)
          if (d.step(q, static_cast<std::uint8_t>(b)) != g::kDead) bytes.push_back(b);
        if (bytes.empty()) break;
        const int b = bytes[rng() % bytes.size()];
        s.push_back(static_cast<char>(b));
        q = d.step(q, static_cast<std::uint8_t>(b));
      }
      if (!d.accepting[static_cast<std::size_t>(q)]) continue;
      ++total, ++matched;
      CHECK_MESSAGE(pcre.matches(s), "regex /" << re << "/ generated \"" << s << "\"");
    }
  }
  MESSAGE(total << " strings, " << matched << " matches");
  CHECK(matched > total / 10);
}

TEST_CASE("regex: errors say where and why") {
  using baton::grammar_error;
  EXPECT_ERROR(grammar_error, dfa_of("a(?=b)"), "offset 1", "look-around");
  EXPECT_ERROR(grammar_error, dfa_of("(a)\\1"), "offset 3", "back-references");
  EXPECT_ERROR(grammar_error, dfa_of("a{3"), "offset 3", "repetition");
  EXPECT_ERROR(grammar_error, dfa_of("a{5,2}"), "n < m");
  EXPECT_ERROR(grammar_error, dfa_of("a{2000}"), "above 1000");
  EXPECT_ERROR(grammar_error, dfa_of("[z-a]"), "offset 1", "out of order");
  EXPECT_ERROR(grammar_error, dfa_of("(ab"), "offset 0", "never closed");
  EXPECT_ERROR(grammar_error, dfa_of("ab)"), "offset 2", "unbalanced");
  EXPECT_ERROR(grammar_error, dfa_of("[abc"), "never closed");
  EXPECT_ERROR(grammar_error, dfa_of("*a"), "nothing to repeat");
  EXPECT_ERROR(grammar_error, dfa_of("a^b"), "'^'", "start");
  EXPECT_ERROR(grammar_error, dfa_of("a$b"), "'$'", "end");
  EXPECT_ERROR(grammar_error, dfa_of("\\bword"), "assertion");
  EXPECT_ERROR(grammar_error, dfa_of("(?i)abc"), "inline flags");
  EXPECT_ERROR(grammar_error, dfa_of("a++"), "possessive");
  EXPECT_ERROR(grammar_error, dfa_of("a**"), "offset 2", "multiple repeat");
  EXPECT_ERROR(grammar_error, dfa_of("a{2}{3}"), "offset 4", "multiple repeat");
  EXPECT_ERROR(grammar_error, dfa_of("a*?+"), "possessive");
  EXPECT_ERROR(grammar_error, dfa_of("\\q"), "unknown escape");
  EXPECT_ERROR(grammar_error, dfa_of("\\x{D800}"), "surrogate");
  EXPECT_ERROR(grammar_error, dfa_of("[[:alpha:]]"), "POSIX");
  EXPECT_ERROR(grammar_error, dfa_of("[^\\x{0}-\\x{10FFFF}]"), "matches no character");
  EXPECT_ERROR(grammar_error, dfa_of(std::string("a\xff")), "not valid UTF-8");
  EXPECT_ERROR(grammar_error, dfa_of("((a{1000}){1000}){1000}"), "too large");
}

namespace {

nlohmann::ordered_json object_of(nlohmann::ordered_json props) {
  nlohmann::ordered_json s = {{"type", "object"}, {"properties", props}};
  std::vector<std::string> req;
  for (const auto& [k, v] : props.items()) req.push_back(k);
  s["required"] = req;
  s["additionalProperties"] = false;
  return s;
}

g::Dfa dfa_of_schema(const nlohmann::ordered_json& s) {
  return g::compile_dfa(g::GrammarSpec::json_schema(s));
}

}  // namespace

TEST_CASE("json schema: the subset and its one whitespace rule") {
  const auto s = object_of({{"name", {{"type", "string"}, {"maxLength", 3}}},
                            {"n", {{"type", "integer"}}},
                            {"x", {{"type", "number"}}},
                            {"ok", {{"type", "boolean"}}},
                            {"tags",
                             {{"type", "array"},
                              {"items", {{"type", "string"}, {"enum", {"p", "q\"r"}}}},
                              {"maxItems", 2}}}});
  const g::Dfa d = dfa_of_schema(s);
  CHECK(dfa_matches(d, R"({"name": "abc", "n": -12, "x": 1.5e-3, "ok": true, "tags": []})"));
  CHECK(dfa_matches(d, R"({"name": "", "n": 0, "x": -0, "ok": false, "tags": ["p", "q\"r"]})"));
  CHECK(dfa_matches(d, R"({"name": "\n\u001fé", "n": 7, "x": 10, "ok": true, "tags": ["p"]})"));
  // maxLength counts characters (an escape is one); whitespace is exactly ", " and ": ".
  CHECK_FALSE(dfa_matches(d, R"({"name": "abcd", "n": 1, "x": 1, "ok": true, "tags": []})"));
  CHECK_FALSE(dfa_matches(d, R"({"name":"a", "n": 1, "x": 1, "ok": true, "tags": []})"));
  CHECK_FALSE(dfa_matches(d, R"({"name": "a","n": 1, "x": 1, "ok": true, "tags": []})"));
  CHECK_FALSE(dfa_matches(d, R"({ "name": "a", "n": 1, "x": 1, "ok": true, "tags": []})"));
  // properties in order, all of them; numbers as JSON writes them; enum; maxItems.
  CHECK_FALSE(dfa_matches(d, R"({"n": 1, "name": "a", "x": 1, "ok": true, "tags": []})"));
  CHECK_FALSE(dfa_matches(d, R"({"name": "a", "x": 1, "ok": true, "tags": []})"));
  CHECK_FALSE(dfa_matches(d, R"({"name": "a", "n": 01, "x": 1, "ok": true, "tags": []})"));
  CHECK_FALSE(dfa_matches(d, R"({"name": "a", "n": 1.0, "x": 1, "ok": true, "tags": []})"));
  CHECK_FALSE(dfa_matches(d, R"({"name": "a", "n": 1, "x": 1., "ok": true, "tags": []})"));
  CHECK_FALSE(dfa_matches(d, R"({"name": "a", "n": 1, "x": 1, "ok": true, "tags": ["r"]})"));
  CHECK_FALSE(
      dfa_matches(d, R"({"name": "a", "n": 1, "x": 1, "ok": true, "tags": ["p", "p", "p"]})"));
  // strings: no raw control characters, no DEL, no unknown escapes.
  CHECK_FALSE(dfa_matches(d, "{\"name\": \"\t\", \"n\": 1, \"x\": 1, \"ok\": true, \"tags\": []}"));
  CHECK_FALSE(
      dfa_matches(d, "{\"name\": \"\x7f\", \"n\": 1, \"x\": 1, \"ok\": true, \"tags\": []}"));
  CHECK_FALSE(dfa_matches(d, R"({"name": "\/", "n": 1, "x": 1, "ok": true, "tags": []})"));
  CHECK_FALSE(dfa_matches(d, R"({"name": "\u0041", "n": 1, "x": 1, "ok": true, "tags": []})"));
}

TEST_CASE("json schema: errors name the pointer and the reason") {
  using baton::grammar_error;
  using J = nlohmann::ordered_json;
  EXPECT_ERROR(grammar_error, dfa_of_schema(J{{"type", "integer"}, {"minimum", 3}}),
               "JSON schema at /", "\"minimum\" is not supported");
  EXPECT_ERROR(grammar_error,
               dfa_of_schema(object_of({{"a", {{"type", "string"}, {"pattern", "x"}}}})),
               "/properties/a", "\"pattern\"");
  EXPECT_ERROR(grammar_error, dfa_of_schema(J{{"type", "null"}}), "/type", "\"null\" is not");
  EXPECT_ERROR(grammar_error, dfa_of_schema(J{{"properties", J::object()}}), "needs \"type\"");
  J open = object_of({{"a", {{"type", "integer"}}}});
  open.erase("additionalProperties");
  EXPECT_ERROR(grammar_error, dfa_of_schema(open), "additionalProperties");
  J optional = object_of({{"a", {{"type", "integer"}}}, {"b", {{"type", "integer"}}}});
  optional["required"] = {"a"};
  EXPECT_ERROR(grammar_error, dfa_of_schema(optional), "/required", "\"b\" is missing");
  J unknown = object_of({{"a", {{"type", "integer"}}}});
  unknown["required"] = {"a", "z"};
  EXPECT_ERROR(grammar_error, dfa_of_schema(unknown), "/required", "\"z\"");
  EXPECT_ERROR(grammar_error, dfa_of_schema(J{{"type", "string"}, {"maxLength", -1}}), "/maxLength",
               "0 to 1000");
  EXPECT_ERROR(grammar_error,
               dfa_of_schema(J{{"type", "string"}, {"maxLength", 1}, {"minLength", 2}}),
               "below minLength");
  EXPECT_ERROR(grammar_error, dfa_of_schema(J{{"type", "array"}}), "needs \"items\"");
  EXPECT_ERROR(grammar_error, dfa_of_schema(J{{"type", "array"}, {"items", {{"type", "date"}}}}),
               "/items/type", "\"date\"");
  EXPECT_ERROR(grammar_error, dfa_of_schema(J{{"type", "string"}, {"enum", {1, 2}}}), "/enum",
               "only strings");
  // A schema file is parsed as strictly as every JSON input (docs/security.md).
  EXPECT_ERROR(baton::format_error, g::GrammarSpec::json_schema_text("{\"type\":", "schema.json"),
               "schema.json", "invalid JSON");
  EXPECT_ERROR(baton::format_error,
               g::GrammarSpec::json_schema_text(std::string(100000, '[') + std::string(100000, ']'),
                                                "schema.json"),
               "schema.json", "deeper than 64 levels");
  EXPECT_ERROR(
      baton::format_error,
      g::GrammarSpec::json_schema_text(R"({"type": "object", "type": "string"})", "schema.json"),
      "duplicate key 'type'");
}

TEST_CASE("token masks: tokens that split characters, EOS exactly in accepting states") {
  // "é" is C3 A9: a token may end in the middle of it.
  auto vocab = small_vocab({"\xC3", "\xC3\xA9", "\xA9x", "ab", "abab", "b\xC3"});
  const std::int32_t eos = static_cast<std::int32_t>(vocab->size() - 1);
  const auto grammar = g::compile_grammar(g::GrammarSpec::regex("(ab|é)+x?"), vocab);
  g::GrammarMatcher m(grammar);
  m.reset(100);
  const auto id = [&](std::string_view s) {
    for (std::int32_t t = 0; t < static_cast<std::int32_t>(vocab->size()); ++t)
      if (vocab->bytes(t) == s) return t;
    FAIL("no token " << s);
    return -1;
  };
  const auto allowed = [&] {
    std::vector<std::string> out;
    const auto mask = m.allowed();
    for (std::int32_t t = 0; t < static_cast<std::int32_t>(vocab->size()); ++t)
      if (g::TokenGrammar::test(mask, t))
        out.push_back(t == eos ? "<eos>" : std::string(vocab->bytes(t)));
    return out;
  };
  // In id order: the byte tokens, then the extras (the byte C3 twice: two ids spell it).
  CHECK(allowed() == std::vector<std::string>{"a", "\xC3", "\xC3", "\xC3\xA9", "ab", "abab"});
  m.advance(id("\xC3"));  // inside "é"
  CHECK(allowed() == std::vector<std::string>{"\xA9", "\xA9x"});
  m.advance(id("\xA9x"));  // "éx": accepting, nothing may follow but EOS
  CHECK(allowed() == std::vector<std::string>{"<eos>"});
  CHECK(m.accepting());
  CHECK_THROWS_AS(m.advance(id("a")), baton::usage_error);
}

namespace {

// Exhaustive: can `s` reach acceptance in at most `budget` more tokens?
bool can_finish(const g::TokenGrammar& tg, std::int32_t s, int budget) {
  if (tg.accepting(s)) return true;
  if (budget == 0) return false;
  for (std::int32_t t = 0; t < tg.vocab_size(); ++t) {
    if (tg.is_eos(t)) continue;
    const std::int32_t next = tg.advance(s, t);
    if (next != g::kDead && can_finish(tg, next, budget - 1)) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("budget: with remaining tokens r, exactly the tokens that can still finish") {
  // A vocabulary of single bytes plus a few words: the shortest path uses the long tokens.
  const std::vector<std::string> extra = {"12", "123", "+ ", " + ", "=", "ok"};
  for (const char* re : {"[0-9]{1,6} \\+ [0-9]{1,6}", "(ab|c){2,4}", "x{0,3}y"}) {
    INFO("regex " << re);
    // The exhaustive search is over every token: keep the vocabulary tiny (bytes as needed).
    std::vector<std::string> bytes;
    for (const char c : std::string("0123456789 +abcxy")) bytes.emplace_back(1, c);
    for (const auto& e : extra) bytes.push_back(e);
    bytes.emplace_back();
    auto tiny = std::make_shared<const g::Vocabulary>(
        bytes, std::vector<std::int32_t>{static_cast<std::int32_t>(bytes.size() - 1)});
    const auto tg = g::compile_grammar(g::GrammarSpec::regex(re), tiny);
    auto scratch = tg->make_scratch();
    for (std::int32_t s = 0; s < tg->num_states(); ++s) {
      for (int r = tg->distance(s); r <= tg->distance(s) + 3; ++r) {
        if (r == 0) continue;
        const auto mask = tg->mask(s, r, scratch);
        for (std::int32_t t = 0; t < tg->vocab_size(); ++t) {
          const std::int32_t next = tg->advance(s, t);
          const bool fits =
              tg->is_eos(t) ? tg->accepting(s) : next != g::kDead && can_finish(*tg, next, r - 1);
          CHECK_MESSAGE(g::TokenGrammar::test(mask, t) == fits,
                        "state " << s << " remaining " << r << " token \"" << bytes[t] << "\"");
        }
      }
    }
  }
}

TEST_CASE("budget: a walk under the budget mask always ends accepted") {
  auto vocab = small_vocab({"12", "345", " + ", "\"ab", "cd\""});
  std::mt19937 rng(7);
  const auto tg = g::compile_grammar(
      g::GrammarSpec::json_schema(
          object_of({{"a", {{"type", "string"}, {"maxLength", 8}}}, {"b", {{"type", "integer"}}}})),
      vocab);
  for (int walk = 0; walk < 200; ++walk) {
    const int budget = tg->distance(0) + static_cast<int>(rng() % 12);
    g::GrammarMatcher m(tg);
    m.reset(budget);
    for (int k = 0; k < budget; ++k) {
      std::vector<std::int32_t> ok;
      const auto mask = m.allowed();
      for (std::int32_t t = 0; t < tg->vocab_size(); ++t)
        if (g::TokenGrammar::test(mask, t)) ok.push_back(t);
      REQUIRE(!ok.empty());
      const std::int32_t t = ok[rng() % ok.size()];
      if (tg->is_eos(t)) break;
      m.advance(t);
    }
    CHECK(m.accepting());
  }
  g::GrammarMatcher m(tg);
  EXPECT_ERROR(baton::grammar_error, m.reset(tg->distance(0) - 1), "needs at least");
}

TEST_CASE("cache key: grammar x vocabulary") {
  auto v1 = small_vocab({"ab"}), v2 = small_vocab({"ab", "cd"}), v1_again = small_vocab({"ab"});
  const auto spec = g::GrammarSpec::regex("a+b");
  const auto a = g::compile_grammar(spec, v1), b = g::compile_grammar(spec, v2),
             c = g::compile_grammar(g::GrammarSpec::regex("a+c"), v1),
             d = g::compile_grammar(spec, v1_again);
  CHECK(a->key() == d->key());
  CHECK(a->key() != b->key());
  CHECK(a->key() != c->key());
  g::GrammarCache cache;
  CHECK(cache.get(spec, v1) == cache.get(spec, v1_again));
  CHECK(cache.get(spec, v1) != cache.get(spec, v2));
  CHECK(cache.size() == 2);
}

TEST_CASE("an unspellable grammar is an error, not a silent dead end") {
  std::vector<std::string> bytes = {"a", "b", ""};
  auto vocab = std::make_shared<const g::Vocabulary>(bytes, std::vector<std::int32_t>{2});
  EXPECT_ERROR(baton::grammar_error, g::compile_grammar(g::GrammarSpec::regex("a*c"), vocab),
               "cannot spell");
  // Tokens that lead only into unspellable branches are not offered.
  const auto tg = g::compile_grammar(g::GrammarSpec::regex("ac|b"), vocab);
  CHECK_FALSE(g::TokenGrammar::test(tg->mask(0), 0));
  CHECK(g::TokenGrammar::test(tg->mask(0), 1));
}
