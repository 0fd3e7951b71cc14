// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// Hostile grammars (issue #22): families of regexes and JSON schemas that once took minutes or
// gigabytes to compile. Each case either compiles, and then accepts a string known to match
// and rejects one known not to (worked out by hand, or by std::regex on small cases), or ends
// in a grammar_error naming the GrammarLimits field that stopped it. The process runs under a
// 4 GiB address-space limit (not under ASan, whose shadow memory needs more) and ctest's 20 s
// TIMEOUT is the only clock: the measured times and peaks are printed, never asserted. Under
// the sanitizers the accepted cases run at a tenth of their size (support/sanitized.hpp) and the
// cases that run the subset construction to its limit are left out: there they check memory,
// not growth, and the same code paths run.
#include <doctest/doctest.h>

#include <sys/resource.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <regex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "baton/grammar/grammar.hpp"
#include "support/expect_error.hpp"
#include "support/sanitized.hpp"

namespace g = baton::grammar;
using J = nlohmann::ordered_json;

namespace {

using baton::test::kSanitized;
using baton::test::sanitized_size;

// Every case runs under a 4 GiB address-space limit: a grammar that escaped its limits fails
// with bad_alloc instead of taking the machine. ASan reserves terabytes of shadow memory, so
// its builds go without (the release run still guards).
void bound_memory() {
  if constexpr (kSanitized) return;
  const rlim_t four_gib = rlim_t{4} << 30;
  rlimit now{};
  getrlimit(RLIMIT_AS, &now);
  if (now.rlim_cur != RLIM_INFINITY && now.rlim_cur <= four_gib) return;
  const rlimit bounded{four_gib, now.rlim_max};
  REQUIRE(setrlimit(RLIMIT_AS, &bounded) == 0);
}

// Every byte, a few longer tokens (runs of `a`, JSON punctuation) and an end-of-sequence id:
// tokens that split and join the strings below, without the cost of a real vocabulary.
std::shared_ptr<const g::Vocabulary> hostile_vocabulary() {
  std::vector<std::string> bytes;
  for (int b = 0; b < 256; ++b) bytes.emplace_back(1, static_cast<char>(b));
  for (const char* t : {"aa", "aaaa", "ab", "\", \"", "[\"", "\"]", "[[", "]]", "abcde", "1, "})
    bytes.emplace_back(t);
  bytes.emplace_back();
  const auto eos = static_cast<std::int32_t>(bytes.size() - 1);
  return std::make_shared<const g::Vocabulary>(std::move(bytes), std::vector<std::int32_t>{eos});
}

// Whether the grammar takes `s` whole, spelled one byte token at a time (token id = byte).
bool takes(const g::TokenGrammar& tg, std::string_view s) {
  std::int32_t q = 0;
  for (const char c : s) {
    q = tg.advance(q, static_cast<std::uint8_t>(c));
    if (q == g::kDead) return false;
  }
  return tg.accepting(q);
}

std::string times(std::string_view s, std::size_t n) {
  std::string out;
  for (std::size_t k = 0; k < n; ++k) out += s;
  return out;
}

// "[" + n copies of `item` joined by ", " + "]": a JSON array as the grammar writes it.
std::string json_array(const std::string& item, std::size_t n) {
  std::string out = "[";
  for (std::size_t k = 0; k < n; ++k) out += (k ? ", " : "") + item;
  return out + "]";
}

// What one case is expected to do: compile and take / refuse the listed strings, or fail
// naming `limit` (a GrammarLimits field, or another phrase of the error).
struct Case {
  std::string name;
  g::GrammarSpec spec;
  std::vector<std::string> takes, refuses;
  std::string limit;  // empty: must compile
  g::GrammarLimits limits{};
};

// The family's worst accepted grammar: compile time and the process's peak memory after it.
struct Worst {
  std::string name;
  double ms = -1;
};

long peak_rss_mb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss / 1024;
}

void run_family(const char* family, const std::vector<Case>& cases) {
  bound_memory();
  static const auto vocab = hostile_vocabulary();
  Worst worst;
  for (const Case& c : cases) {
    CAPTURE(c.name);
    const auto t0 = std::chrono::steady_clock::now();
    if (!c.limit.empty()) {
      // Each of these runs the subset construction to its limit (10M steps, ~0.5 s in a
      // release build): under ASan, several times slower, they would not fit the TIMEOUT.
      if (kSanitized && c.limit == "subset_work") continue;
      EXPECT_ERROR(baton::grammar_error, g::compile_grammar(c.spec, vocab, c.limits), c.limit);
      continue;
    }
    const auto tg = g::compile_grammar(c.spec, vocab, c.limits);
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (ms > worst.ms) worst = {c.name, ms};
    for (const std::string& s : c.takes) CHECK_MESSAGE(takes(*tg, s), s.substr(0, 60));
    for (const std::string& s : c.refuses) CHECK_MESSAGE(!takes(*tg, s), s.substr(0, 60));
  }
  MESSAGE(std::string(family) << ": worst accepted " << worst.name << " compiled in " << worst.ms
                              << " ms; process peak " << peak_rss_mb() << " MB");
}

g::GrammarSpec re(const std::string& pattern) { return g::GrammarSpec::regex(pattern); }
g::GrammarSpec schema(const J& s) { return g::GrammarSpec::json_schema(s); }

J nested_arrays(int depth, const J& leaf, int max_items = -1) {
  J s = leaf;
  for (int d = 0; d < depth; ++d) {
    J a{{"type", "array"}, {"items", s}};
    if (max_items >= 0) a["maxItems"] = max_items;
    s = a;
  }
  return s;
}

std::string nested_value(int depth, const std::string& leaf) {
  return times("[", static_cast<std::size_t>(depth)) + leaf +
         times("]", static_cast<std::size_t>(depth));
}

std::vector<std::string> random_words(std::size_t n) {
  std::mt19937 rng(22);
  std::vector<std::string> words;
  for (std::size_t k = 0; k < n; ++k) {
    std::string w;
    for (std::size_t len = 3 + rng() % 10; len > 0; --len) w += static_cast<char>('a' + rng() % 26);
    words.push_back(w + std::to_string(k));  // distinct
  }
  return words;
}

}  // namespace

TEST_CASE("hostile: chains of counted repetitions") {
  run_family("chains", {
                           {"(a{100}){100}",
                            re("(a{100}){100}"),
                            {times("a", 10000)},
                            {times("a", 9999), times("a", 10001)},
                            ""},
                           {"(ab{1000}){20}",
                            re("(ab{1000}){20}"),
                            {times("a" + times("b", 1000), 20)},
                            {times("a" + times("b", 1000), 19)},
                            ""},
                           {"(a{1000}){100}", re("(a{1000}){100}"), {}, {}, "dfa_states"},
                           {"(a{1000}){1000}", re("(a{1000}){1000}"), {}, {}, "syntax_nodes"},
                       });
}

TEST_CASE("hostile: nested counted repetitions") {
  run_family("nested counts",
             {
                 {"(a{0,30}){0,30}",
                  re("(a{0,30}){0,30}"),
                  {"", times("a", 900)},
                  {times("a", 901), "b"},
                  ""},
                 {"((a|b){1,20}){1,20}",
                  re("((a|b){1,20}){1,20}"),
                  {"ab", times("ab", 200)},
                  {"", times("ab", 200) + "a"},
                  ""},
                 {"((a{1,50}){1,50}){1,50}", re("((a{1,50}){1,50}){1,50}"), {}, {}, "subset_work"},
                 {"(a{0,300}){0,300}", re("(a{0,300}){0,300}"), {}, {}, "subset_work"},
             });
}

TEST_CASE("hostile: nested arrays") {
  const J integer{{"type", "integer"}};
  run_family(
      "nested arrays",
      {
          {"depth 18",
           schema(nested_arrays(18, integer)),
           {nested_value(18, "7"), nested_value(18, "1, 2"), nested_value(18, "")},
           {nested_value(17, "7"), nested_value(18, "7,8")},
           ""},
          {"depth 32",
           schema(nested_arrays(32, integer)),
           {nested_value(32, "-12"),
            "[" + nested_value(31, "") + ", " + nested_value(31, "3") + "]"},
           {nested_value(33, "1")},
           ""},
          {"depth 33", schema(nested_arrays(33, integer)), {}, {}, "schema_depth"},
          {"depth 10, maxItems 4", schema(nested_arrays(10, integer, 4)), {}, {}, "syntax_nodes"},
      });
}

TEST_CASE("hostile: long enums") {
  const std::vector<std::string> words = random_words(40000);
  const auto enum_of = [&](std::size_t n) {
    return J{{"enum", std::vector<std::string>(words.begin(), words.begin() + n)}};
  };
  const std::size_t n = sanitized_size(1000);  // and 2n
  run_family("long enums", {
                               {std::to_string(n) + " words",
                                schema(enum_of(n)),
                                {"\"" + words[0] + "\"", "\"" + words[n - 1] + "\""},
                                {"\"" + words[n] + "\"", words[0]},
                                ""},
                               {std::to_string(2 * n) + " words",
                                schema(enum_of(2 * n)),
                                {"\"" + words[2 * n - 1] + "\""},
                                {"\"" + words[2 * n] + "\"", "\"" + words[5] + "x\""},
                                ""},
                               {"20000 words", schema(enum_of(20000)), {}, {}, "syntax_nodes"},
                           });
}

TEST_CASE("hostile: long strings") {
  const std::size_t n = sanitized_size(1000);
  const J max_n{{"type", "string"}, {"maxLength", n}};
  const J max1000{{"type", "string"}, {"maxLength", 1000}};
  J fields{{"type", "object"},
           {"properties", J::object()},
           {"required", J::array()},
           {"additionalProperties", false}};
  for (int k = 0; k < 3; ++k) {
    fields["properties"]["f" + std::to_string(k)] = max1000;
    fields["required"].push_back("f" + std::to_string(k));
  }
  run_family("long strings",
             {
                 {"maxLength " + std::to_string(n),
                  schema(max_n),
                  {"\"\"", "\"" + times("\\\"", n) + "\"", "\"" + times("€", n) + "\""},
                  {"\"" + times("x", n + 1) + "\"", "\"" + times("\\\"", n / 2) + "\\\""},
                  ""},
                 {"minLength = maxLength = " + std::to_string(n),
                  schema(J{{"type", "string"}, {"minLength", n}, {"maxLength", n}}),
                  {"\"" + times("\\u001f", n) + "\""},
                  {"\"" + times("a", n - 1) + "\"", "\"" + times("a", n + 1) + "\""},
                  ""},
                 {"three fields of maxLength 1000", schema(fields), {}, {}, "subset_work"},
                 {"maxLength 1001",
                  schema(J{{"type", "string"}, {"maxLength", 1001}}),
                  {},
                  {},
                  "repeat_count"},
             });
}

TEST_CASE("hostile: many items of long strings") {
  const auto array_of = [](J item, int min, int max) {
    J a{{"type", "array"}, {"items", std::move(item)}, {"minItems", min}};
    if (max >= 0) a["maxItems"] = max;
    return a;
  };
  const J min5{{"type", "string"}, {"minLength", 5}};
  const J max5{{"type", "string"}, {"maxLength", 5}};
  const int n = static_cast<int>(sanitized_size(100));  // and 2n
  const auto count = static_cast<std::size_t>(n);
  run_family(
      "minItems x minLength",
      {
          {"minItems " + std::to_string(n) + " of minLength 5",
           schema(array_of(min5, n, -1)),
           {json_array("\"abcde\"", count), json_array("\"abcdefgh\"", count + 1)},
           {json_array("\"abcde\"", count - 1), json_array("\"abcd\"", count)},
           ""},
          {"exactly " + std::to_string(2 * n) + " of maxLength 5",
           schema(array_of(max5, 2 * n, 2 * n)),
           {json_array("\"\"", 2 * count), json_array("\"abcde\"", 2 * count)},
           {json_array("\"\"", 2 * count + 1), json_array("\"abcdef\"", 2 * count)},
           ""},
          {"minItems 1000 of minLength 5", schema(array_of(min5, 1000, -1)), {}, {}, "subset_work"},
          {"exactly 1000 of maxLength 5",
           schema(array_of(max5, 1000, 1000)),
           {},
           {},
           "subset_work"},
          {"minItems 1000 of minLength 1000",
           schema(array_of(J{{"type", "string"}, {"minLength", 1000}}, 1000, -1)),
           {},
           {},
           "syntax_nodes"},
      });
}

TEST_CASE("hostile: small regexes agree with std::regex") {
  // Independent judge on grammars small enough for std::regex (ECMAScript; the same meaning
  // for these patterns): every string over {a, b} up to length 9.
  bound_memory();
  const auto vocab = hostile_vocabulary();
  for (const char* pattern :
       {"(a{2}){3}", "((a|b){1,2}){2,3}", "(a{0,2}b?){0,3}", "(ab{1,3}){2}", "a{3,}(b{2}){1,}"}) {
    CAPTURE(pattern);
    const auto tg = g::compile_grammar(re(pattern), vocab);
    const std::regex judge(pattern);
    for (int len = 0; len <= 9; ++len)
      for (int bits = 0; bits < (1 << len); ++bits) {
        std::string s;
        for (int k = 0; k < len; ++k) s += (bits >> k) & 1 ? 'b' : 'a';
        CHECK_MESSAGE(takes(*tg, s) == std::regex_match(s, judge), s);
      }
  }
}

TEST_CASE("hostile: every limit stops its stage and names its field") {
  bound_memory();
  const auto vocab = hostile_vocabulary();
  const auto with = [](auto set) {
    g::GrammarLimits l;
    set(l);
    return l;
  };
  const auto fails = [&](const g::GrammarSpec& spec, const g::GrammarLimits& l, const char* field) {
    CAPTURE(std::string(field));
    EXPECT_ERROR(baton::grammar_error, g::compile_grammar(spec, vocab, l),
                 std::string("GrammarLimits::") + field, "reached");
  };
  fails(re("a{500}"), with([](auto& l) { l.syntax_nodes = 400; }), "syntax_nodes");
  fails(re("[a-z]{200}"), with([](auto& l) { l.nfa_states = 300; }), "nfa_states");
  fails(re("(a|b)*a(a|b){12}"), with([](auto& l) { l.dfa_states = 4000; }), "dfa_states");
  fails(re("(a{0,40}){0,40}"), with([](auto& l) { l.subset_work = 100'000; }), "subset_work");
  fails(re("((a|b){30}c)*"), with([](auto& l) { l.minimize_work = 100; }), "minimize_work");
  fails(re("[a-z]{0,100}"), with([](auto& l) { l.table_bytes = 100; }), "table_bytes");
  fails(re("[a-z]{0,100}"), with([](auto& l) { l.lift_work = 5000; }), "lift_work");
  EXPECT_ERROR(baton::grammar_error,
               g::compile_grammar(re("a{11}"), vocab, with([](auto& l) { l.repeat_count = 10; })),
               "above 10", "GrammarLimits::repeat_count");
  // The same grammars compile under the default limits.
  CHECK(takes(*g::compile_grammar(re("(a|b)*a(a|b){12}"), vocab), "ba" + times("b", 12)));
  CHECK(takes(*g::compile_grammar(re("[a-z]{0,100}"), vocab), times("z", 100)));
}

TEST_CASE("hostile: an enum beside other keywords is an error, not a silent widening") {
  bound_memory();
  const J words = {"yes", "no"};
  EXPECT_ERROR(baton::grammar_error, g::compile_dfa(schema(J{{"enum", words}, {"maxLength", 2}})),
               "\"maxLength\"", "enum");
  EXPECT_ERROR(baton::grammar_error, g::compile_dfa(schema(J{{"enum", words}, {"pattern", "^y"}})),
               "\"pattern\"");
  EXPECT_ERROR(baton::grammar_error,
               g::compile_dfa(schema(J{{"type", "string"}, {"enum", words}, {"minLength", 3}})),
               "\"minLength\"", "enum");
  // The enum alone, and its annotations, are fine.
  const auto tg = g::compile_grammar(schema(J{{"enum", words}, {"description", "an answer"}}),
                                     hostile_vocabulary());
  CHECK(takes(*tg, "\"no\""));
  CHECK_FALSE(takes(*tg, "\"maybe\""));
}

TEST_CASE("hostile: the empty grammar compiles, complete at the start") {
  bound_memory();
  const auto tg = g::compile_grammar(re(""), hostile_vocabulary());
  CHECK(tg->accepting(0));
  CHECK(tg->complete(0));
  CHECK(tg->complete_flags()[0] == 1);
  CHECK(tg->distance(0) == 0);
  CHECK(takes(*tg, ""));
  CHECK_FALSE(takes(*tg, "a"));
  // Only end of sequence is allowed.
  const auto mask = tg->mask(0);
  for (std::int32_t t = 0; t < tg->vocab_size(); ++t)
    CHECK(g::TokenGrammar::test(mask, t) == tg->is_eos(t));
  // The same for a schema whose only value is fixed: not complete before its text.
  const auto fixed = g::compile_grammar(schema(J{{"enum", {"x"}}}), hostile_vocabulary());
  CHECK_FALSE(fixed->complete(0));
}
