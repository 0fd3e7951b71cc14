// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// Tokenizer pieces against hand-computed ids on the small tokenizer.json files in
// tokenizer/data (byte b has id b; merges listed in flags_tokenizer.json, ranks in file order;
// the same files are also checked against Hugging Face's tokenizers by the reference tests).
#include <doctest/doctest.h>

#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "baton/text/chat.hpp"
#include "baton/text/tokenizer.hpp"
#include "support/test_paths.hpp"

using baton::Tokenizer;
using Ids = std::vector<std::int32_t>;

namespace {
const std::string kData = BATON_TOKENIZER_DATA;

nlohmann::json load_json(const std::string& name) {
  std::ifstream in(kData + "/" + name);
  return nlohmann::json::parse(in);
}

// Message of the baton::error `f` throws ("" when it throws nothing).
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const baton::error& e) {
    return e.what();
  }
  return "";
}
}  // namespace

// Ids in flags_tokenizer.json: byte b -> b; merges (rank: result id)
//   0 Ġ+t:256  1 h+e:257  2 Ġt+he:258  3 i+n:259  4 Ġ+a:260  5 Ġa+n:261  6 Ġan+d:262
//   7 Ġ+Ġ:263  8 ĠĠ+ĠĠ:264  9 1+2:265  10 o+o:266  11 f+i:267  12 fi+x:268
// added: <s>:269 </s>:270 <lstrip>:271 <rstrip>:272 <both>:273 word(single_word):274
//        <s>x:275 ﬁx(normalized, NFKC):276
TEST_CASE("BPE merges apply lowest rank first") {
  const auto tok = Tokenizer::from_file(kData + "/flags_tokenizer.json");
  CHECK(tok.encode("the and in") == Ids{116, 257, 262, 32, 259});
  // "  the": \s+(?!\S) takes one space, then " the" merges Ġ+t, h+e, Ġt+he.
  CHECK(tok.encode("  the") == Ids{32, 258});
  CHECK(tok.encode("    ") == Ids{264});   // Ġ+Ġ twice, then ĠĠ+ĠĠ
  CHECK(tok.encode("12") == Ids{49, 50});  // Qwen's regex splits every digit: no 1+2 merge
  CHECK(tok.encode("") == Ids{});
  CHECK(tok.encode("é") == Ids{0xC3, 0xA9});  // bytes of U+00E9
  CHECK(tok.vocab_size() == 277);
  CHECK(tok.token_to_id("Ġthe") == 258);
  CHECK(tok.id_to_token(258) == "Ġthe");
  CHECK(!tok.token_to_id("nope"));
}

TEST_CASE("added tokens: longest first, case-sensitive, flags as Hugging Face applies them") {
  const auto tok = Tokenizer::from_file(kData + "/flags_tokenizer.json");
  CHECK(tok.encode("<s>x <s>y") == Ids{275, 32, 269, 121});
  CHECK(tok.encode("<S>") == Ids{60, 83, 62});                  // wrong case is text
  CHECK(tok.encode("<s") == Ids{60, 115});                      // partial tag is text
  CHECK(tok.encode("x <lstrip> y") == Ids{120, 271, 32, 121});  // the space before is eaten
  CHECK(tok.encode("y<rstrip>  z") == Ids{121, 272, 122});      // the spaces after are eaten
  CHECK(tok.encode("a <both> b") == Ids{97, 273, 98});
  CHECK(tok.encode("word words") == Ids{274, 32, 119, 111, 114, 100, 115});
  CHECK(tok.encode("_word") == Ids{95, 119, 111, 114, 100});  // '_' is a word character
  // normalized token: matched after NFKC, so the ligature and the plain spelling both hit.
  CHECK(tok.encode("\xEF\xAC\x81x fix") == Ids{276, 32, 276});
  CHECK(tok.encode("fi") == Ids{267});
  // post-processor template: <s> ... </s>
  CHECK(tok.encode("the", true) == Ids{269, 116, 257, 270});
  CHECK(Ids(tok.prefix_special_ids().begin(), tok.prefix_special_ids().end()) == Ids{269});
  CHECK(tok.is_special(269));
  CHECK(!tok.is_special(274));
  CHECK(Ids(tok.special_ids().begin(), tok.special_ids().end()) == Ids{269, 270, 271, 273});
}

TEST_CASE("decode, skip_special and the incremental decoder") {
  const auto tok = Tokenizer::from_file(kData + "/flags_tokenizer.json");
  const Ids ids{269, 116, 257, 262, 270};
  CHECK(tok.decode(ids) == "<s>the and</s>");
  CHECK(tok.decode(ids, true) == "the and");
  CHECK(tok.decode(Ids{276}) == "fix");  // normalized tokens decode to their normalized form
  CHECK(error_of([&] { (void)tok.decode(Ids{5000}); }).find("5000") != std::string::npos);
  // decode_known leaves out the ids the tokenizer lacks (Hugging Face's decode), wherever they
  // stand, and keeps skip_special.
  CHECK(tok.decode_known(Ids{5000, 269, 116, 9999, 257, 262, 270, -1}) == "<s>the and</s>");
  CHECK(tok.decode_known(Ids{269, 5000, 116, 257}, true) == "the");
  CHECK(tok.decode_known(Ids{5000}).empty());

  auto inc = tok.incremental_decoder();
  CHECK(inc.feed(116) == "t");
  CHECK(inc.feed(0xE2) == "");  // first byte of U+20AC: held back
  CHECK(inc.pending() == 1);
  CHECK(inc.feed(0x82) == "");
  CHECK(inc.feed(0xAC) == "\xE2\x82\xAC");
  CHECK(inc.feed(0xC3) == "");
  CHECK(inc.flush() == "\xC3");  // an unfinished tail comes out on flush
  CHECK(inc.pending() == 0);
  CHECK(inc.feed(0x80) == "\x80");  // a byte that can never complete is not held back
}

TEST_CASE("GPT-2 style: ByteLevel regex, add_prefix_space, ignore_merges, merges as pairs") {
  const auto tok = Tokenizer::from_file(kData + "/gpt2_style_tokenizer.json");
  CHECK(tok.encode("the") == Ids{258});                            // prefix space: " the"
  CHECK(tok.encode(" there") == Ids{269});                         // in the vocabulary: taken whole
  CHECK(tok.encode("the<|endoftext|>the") == Ids{258, 270, 258});  // prefix space per segment
  CHECK(tok.encode("the", true) == Ids{258});  // a ByteLevel post-processor adds nothing
}

TEST_CASE("both merge encodings and both merge strategies agree") {
  auto j = load_json("flags_tokenizer.json");
  const auto strings = Tokenizer::from_json(j, "strings");
  for (auto& m : j["model"]["merges"]) {
    const auto s = m.get<std::string>();
    m = nlohmann::json::array({s.substr(0, s.find(' ')), s.substr(s.find(' ') + 1)});
  }
  const auto pairs = Tokenizer::from_json(j, "pairs");
  const std::string text = "the and in   fix  12 oo foo the thethe";
  CHECK(strings.encode(text) == pairs.encode(text));

  // The scan (short words) and the heap (long words) must merge in the same order.
  const auto model = baton::text::BpeModel(
      [] {
        baton::text::TokenIdMap v;
        baton::text::ByteLevelAlphabet a;
        for (int b = 0; b < 256; ++b)
          v.emplace(std::string(a.symbol(static_cast<std::uint8_t>(b))), b);
        v.emplace("ab", 256);
        v.emplace("ba", 257);
        v.emplace("aa", 258);
        v.emplace("abab", 259);
        v.emplace("aaaa", 260);
        return v;
      }(),
      {{"a", "a"}, {"a", "b"}, {"b", "a"}, {"ab", "ab"}, {"aa", "aa"}}, false, std::nullopt,
      "test");
  std::mt19937 rng(7);
  baton::text::BpeScratch s;
  for (int trial = 0; trial < 300; ++trial) {
    std::string w;
    const int len = 1 + static_cast<int>(rng() % 120);
    for (int k = 0; k < len; ++k) w.push_back("ab"[rng() % 2]);
    Ids scan, heap;
    model.encode_word_with(w, scan, s, false);
    model.encode_word_with(w, heap, s, true);
    REQUIRE(scan == heap);
  }
  Ids out;
  model.encode_word_with("aaab", out, s, true);
  CHECK(out == Ids{258, 256});  // a+a first (rank 0, leftmost), then a+b
}

TEST_CASE("invalid UTF-8 is rejected with its byte offset") {
  const auto tok = Tokenizer::from_file(kData + "/flags_tokenizer.json");
  CHECK(error_of([&] { (void)tok.encode("ab\xFF"); }).find("byte offset 2 (byte 0xff)") !=
        std::string::npos);
  CHECK(error_of([&] { (void)tok.encode("a\xE2\x82"); }).find("byte offset 1") !=
        std::string::npos);
  using baton::text::first_invalid_utf8;
  using baton::text::replace_invalid_utf8;
  CHECK(first_invalid_utf8("abc\xC3\xA9") == std::string_view::npos);
  CHECK(first_invalid_utf8("\xC0\xAF") == 0);          // overlong
  CHECK(first_invalid_utf8("x\xED\xA0\x80") == 1);     // surrogate
  CHECK(first_invalid_utf8("\xF4\x90\x80\x80") == 0);  // above U+10FFFF
  // Maximal subparts become one U+FFFD each (WHATWG / JavaScript TextDecoder).
  CHECK(replace_invalid_utf8("a\xE2\x82 b") == "a\xEF\xBF\xBD b");
  CHECK(replace_invalid_utf8("\xC0\xAF") == "\xEF\xBF\xBD\xEF\xBF\xBD");
  CHECK(replace_invalid_utf8("\xED\xA0\x80") == "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
  CHECK(baton::text::complete_utf8_prefix("a\xE2\x82") == 1);
  CHECK(baton::text::complete_utf8_prefix("a\xE2\x82\xAC") == 4);
  CHECK(baton::text::complete_utf8_prefix("a\x80") == 2);
}

TEST_CASE("unsupported tokenizer kinds are rejected by name") {
  const auto base = load_json("flags_tokenizer.json");
  auto with = [&](auto&& edit) {
    auto j = base;
    edit(j);
    return error_of([&] { (void)Tokenizer::from_json(j, "edited.json"); });
  };
  using J = nlohmann::json;
  CHECK(with([](J& j) { j["model"]["type"] = "Unigram"; }).find("\"Unigram\"") !=
        std::string::npos);
  CHECK(with([](J& j) { j["model"]["type"] = "WordPiece"; }).find("\"WordPiece\"") !=
        std::string::npos);
  CHECK(with([](J& j) { j["model"]["byte_fallback"] = true; }).find("byte_fallback") !=
        std::string::npos);
  CHECK(with([](J& j) {
          j["pre_tokenizer"] = {{"type", "Metaspace"}, {"replacement", "_"}};
        }).find("\"Metaspace\"") != std::string::npos);
  CHECK(with([](J& j) { j["pre_tokenizer"]["pretokenizers"].erase(1); }).find("no ByteLevel") !=
        std::string::npos);
  CHECK(with([](J& j) {
          j["decoder"] = {{"type", "Metaspace"}};
        }).find("Metaspace") != std::string::npos);
  CHECK(with([](J& j) {
          j["pre_tokenizer"]["pretokenizers"][0]["behavior"] = "Removed";
        }).find("\"Removed\"") != std::string::npos);
  CHECK(with([](J& j) {
          j["normalizer"] = {{"type", "Lowercase"}};
        }).find("\"Lowercase\"") != std::string::npos);
  CHECK(with([](J& j) {
          j["post_processor"] = {{"type", "RobertaProcessing"}};
        }).find("RobertaProcessing") != std::string::npos);
  CHECK(with([](J& j) { j["added_tokens"][0]["id"] = 300; }).find("would assign it id 269") !=
        std::string::npos);
  CHECK(with([](J& j) { j["model"]["merges"][0] = "a b c"; }).find("merges[0]") !=
        std::string::npos);
  CHECK(with([](J& j) { j["model"]["merges"].push_back("q z"); }).find("not in model.vocab") !=
        std::string::npos);
  CHECK(with([](J& j) {
          j["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"] = "(unclosed";
        }).find("does not compile") != std::string::npos);
  CHECK_THROWS_AS((void)Tokenizer::from_file(kData + "/missing.json"), baton::io_error);
}

TEST_CASE("a runaway regex from a file stops at the match limit") {
  const auto pre = baton::text::PreTokenizer::from_patterns({"(a+)+$"});
  baton::text::PreTokenizer::State st(pre);
  const std::string text(40, 'a');
  CHECK(error_of([&] { pre.split(text + "!", st, [](std::string_view) {}); }).find("limit") !=
        std::string::npos);
}

TEST_CASE("copies share the tables and keep separate caches") {
  const auto tok = Tokenizer::from_file(kData + "/flags_tokenizer.json");
  const Tokenizer copy = tok;
  CHECK(copy.encode("the and") == tok.encode("the and"));
  CHECK(copy.encode("the and") == tok.encode("the and"));  // second time from the cache
}

TEST_CASE("ChatML: turns, prefix, assistant header and stop id as ids") {
  auto j = load_json("flags_tokenizer.json");
  j["added_tokens"].push_back(
      {{"id", 277}, {"content", "<|im_start|>"}, {"special", true}, {"normalized", false}});
  j["added_tokens"].push_back(
      {{"id", 278}, {"content", "<|im_end|>"}, {"special", true}, {"normalized", false}});
  const auto tok = Tokenizer::from_json(j, "chatml.json");
  const baton::ChatMl chat(tok);
  CHECK(chat.im_start_id() == 277);
  CHECK(chat.stop_id() == 278);
  // <|im_start|> "user" "\n" "q" <|im_end|> "\n"
  CHECK(chat.turn("user", "q") == Ids{277, 117, 115, 101, 114, 10, 113, 278, 10});
  CHECK(chat.assistant_header() == Ids{277, 97, 115, 115, 105, 115, 116, 97, 110, 116, 10});
  const baton::ChatExample shots[] = {{"q", "a"}};
  const std::string rendered =
      "<|im_start|>system\nsys<|im_end|>\n<|im_start|>user\nq<|im_end|>\n"
      "<|im_start|>assistant\na<|im_end|>\n";
  CHECK(chat.prefix("sys", shots) == tok.encode(rendered));
  auto req = chat.user_request("q");
  CHECK(req == tok.encode("<|im_start|>user\nq<|im_end|>\n<|im_start|>assistant\n"));
  CHECK(error_of([&] {
          baton::ChatMl bad(Tokenizer::from_file(kData + "/flags_tokenizer.json"));
        }).find("ChatML") != std::string::npos);
}
