// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// Say what you mean (issue #22, item 4): a message quotes at most a short excerpt of its input
// (never 1 MB of it), does not carry the build machine's source path, speaks of JSON in its
// own words (no "[json.exception.parse_error.101]"), and names the field that was wrong (an
// adapter's 'r', not "the tensor has rank 257").
//
// Mutation checks (2026-12-02), applied together to a copy of include/ (each caught by its own
// checks), this file compiled alone against it and run:
//   detail::excerpt returns its whole input            -> the excerpt cases and 8 size checks
//   fail_at appends [file:line] again (unconditional)  -> 17 ".hpp:" checks, "plain message"
//   io::detail::json_reason returns its input          -> 5 "json.exception" checks
// and alone: LoraSlice's rank message back to "<tensor> has rank r" -> the rank case, 4 checks
// for each of r = 5, 8, 257
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "baton/backend/host.hpp"
#include "baton/core/error.hpp"
#include "baton/io/json_util.hpp"
#include "baton/lora/lora_slice.hpp"
#include "baton/relay/config.hpp"
#include "baton/text/relay_text.hpp"
#include "baton/text/tokenizer.hpp"
#include "support/chatml_tokenizer.hpp"
#include "support/expect_error.hpp"
#include "support/test_paths.hpp"
#include "support/tiny_model.hpp"

using namespace baton;
using namespace baton::test;
using json = nlohmann::json;
namespace fs = std::filesystem;

namespace {

/// What every message must be: short, free of nlohmann's tags and of source locations.
void check_clean(const std::string& msg) {
  CHECK_MESSAGE(msg.size() < 400, "message of " << msg.size() << " bytes: " << msg.substr(0, 200));
  CHECK_MESSAGE(msg.find("json.exception") == std::string::npos, msg);
  CHECK_MESSAGE(msg.find(".hpp:") == std::string::npos, msg);
  CHECK_MESSAGE(msg.find("include/baton") == std::string::npos, msg);
}

fs::path fresh_dir(const std::string& name) {
  const fs::path d = fs::path(BATON_TEST_TMP) / name;
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

void write_file(const fs::path& p, const std::string& text) { std::ofstream(p) << text; }

}  // namespace

TEST_CASE("detail::excerpt: short text whole, long text cut with its size, UTF-8 kept whole") {
  CHECK(baton::detail::excerpt("abc") == "abc");
  CHECK(baton::detail::excerpt(std::string(64, 'x')) == std::string(64, 'x'));
  CHECK(baton::detail::excerpt(std::string(1 << 20, 'x')) ==
        std::string(64, 'x') + "\xE2\x80\xA6(1048576 bytes)");
  CHECK(baton::detail::excerpt("abcdef", 3) == "abc\xE2\x80\xA6(6 bytes)");
  // "é" is two bytes: a cut at byte 64 inside it backs off to 63.
  const std::string e = std::string(63, 'a') + "\xC3\xA9" + std::string(10, 'b');
  CHECK(baton::detail::excerpt(e) == std::string(63, 'a') + "\xE2\x80\xA6(75 bytes)");
}

TEST_CASE("messages carry no source location of the library") {
  try {
    BATON_FAIL(config_error, "plain message");
  } catch (const error& e) {
#if defined(BATON_ERROR_SOURCE_LOCATION)
    CHECK(std::string(e.what()).starts_with("plain message ["));
#else
    CHECK(std::string(e.what()) == "plain message");
#endif
  }
  check_clean(ERROR_MESSAGE(config_error, parse_relay_spec(json::array(), "r.json"), "r.json"));
  check_clean(ERROR_MESSAGE(format_error, io::parse_json_strict("{\"a\": 1, \"a\": 2}", "d.json"),
                            "d.json: duplicate key 'a'"));
}

TEST_CASE("JSON syntax and type errors are in baton's words, with the byte offset") {
  check_clean(ERROR_MESSAGE(format_error, io::parse_json_strict("{\"a\": tru}", "relay.json"),
                            "relay.json: invalid JSON at byte ", "syntax error"));
  check_clean(ERROR_MESSAGE(format_error, io::parse_json_strict("[1, 2", "x.json"),
                            "x.json: invalid JSON at byte 5, line 1, column 6"));
  // A huge unterminated string: nlohmann's "last read" would quote all of it.
  check_clean(ERROR_MESSAGE(format_error,
                            io::parse_json_strict("[\"" + std::string(1 << 20, 'q'), "big.json"),
                            "big.json: invalid JSON at byte"));
  check_clean(ERROR_MESSAGE(
      format_error, io::with_field("t.json", "model.vocab", [] { return json("s").get<int>(); }),
      "t.json: field 'model.vocab': type must be number"));
  const fs::path dir = fresh_dir("hostile_messages_json");
  write_file(dir / "relay.json", "{\"model\": \"m\",}");
  check_clean(ERROR_MESSAGE(format_error, load_relay_spec(dir / "relay.json"), "relay.json",
                            "invalid JSON at byte 14"));
}

TEST_CASE("1 MB strings in a relay file are quoted as an excerpt") {
  const io::ReadLimits roomy{.relay_text_bytes = 4u << 20};
  const std::string big(1 << 20, 'z');
  json j = {{"model", "m"},
            {"stages", {{{"name", "a"}, {"input", {{{"request", true}}}}, {"max_new", 1}}}}};
  SUBCASE("an unknown field, an unknown stage, a backend") {
    json k = j;
    k[big] = 1;
    check_clean(ERROR_MESSAGE(config_error, parse_relay_spec(k, "r.json"), "unknown field 'zzz",
                              "(1048576 bytes)"));
    k = j;
    k["loop_from"] = big;
    check_clean(
        ERROR_MESSAGE(config_error, parse_relay_spec(k, "r.json"), "loop_from names stage"));
    k = j;
    k["backend"] = big;
    check_clean(ERROR_MESSAGE(config_error, parse_relay_spec(k, "r.json"), "field 'backend'"));
  }
  SUBCASE("a 1 MB allow_tokens string and stop_text, resolved with a tokenizer") {
    int vocab = 0;
    const Tokenizer tok = Tokenizer::from_json(chatml_tokenizer_json(vocab), "chatml");
    json k = j;
    k["stages"][0]["interceptors"] = {{{"allow_tokens", {big}}}};
    RelaySpec spec = parse_relay_spec(k, "r.json", roomy);
    check_clean(ERROR_MESSAGE(config_error, resolve_text(spec, tok), "allow_tokens",
                              "(1048576 bytes)\" is "));
    k = j;
    k["stages"][0]["stop_text"] = {big};
    spec = parse_relay_spec(k, "r.json", roomy);
    check_clean(
        ERROR_MESSAGE(config_error, resolve_text(spec, tok), "stop_text \"zzz", "(1048576 bytes)"));
  }
  SUBCASE("tokenizer.json: a 1 MB model.type and unk_token") {
    int vocab = 0;
    json t = chatml_tokenizer_json(vocab);
    t["model"]["type"] = big;
    check_clean(ERROR_MESSAGE(tokenizer_error, Tokenizer::from_json(t, "tok.json"),
                              "tok.json: model.type \"zzz", "(1048576 bytes)"));
    t = chatml_tokenizer_json(vocab);
    t["model"]["unk_token"] = big;
    check_clean(
        ERROR_MESSAGE(format_error, Tokenizer::from_json(t, "tok.json"), "model.unk_token \"zzz"));
  }
}

TEST_CASE("an adapter's rank past the slice's bound names adapter_config.json's 'r'") {
  TinySpec s;
  const TinyModel tm = make_tiny_model(s);
  for (const int r : {5, 8, 257}) {
    CAPTURE(r);
    const fs::path dir = fresh_dir("hostile_messages_rank" + std::to_string(r));
    write_tiny_adapter(make_tiny_adapter(tm.cfg, {.r = r, .targets = {"v_proj"}}), dir);
    const std::string msg =
        expect_error<shape_error>([&] { (void)LoraSlice<4, host>::load(dir, tm.cfg); },
                                  {"adapter_config.json's 'r'", "= " + std::to_string(r), "v_proj",
                                   "exceeds the largest rank 4"});
    CHECK(msg.find("has rank") == std::string::npos);
    check_clean(msg);
  }
}
