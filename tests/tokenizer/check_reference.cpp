// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// Compares baton::Tokenizer with Hugging Face's Rust tokenizer on a corpus, case by case:
//   check_reference STATUS TOKENIZER.json CORPUS.bin REFERENCE.json
// STATUS is the file the setup step (setup_reference.sh) wrote: "ok"; "skip: REASON" (this
// program prints "skipped: REASON" and exits 77, which ctest reports as skipped); or
// "fail: REASON" (exit 1). An absent TOKENIZER.json (the shared tokenizer folder is not there)
// is also a skip.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "baton/text/tokenizer.hpp"
#include "support/reference_status.hpp"

namespace {

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::uint32_t read_u32(const std::string& b, std::size_t& o) {
  std::uint32_t v = 0;
  for (int k = 0; k < 4; ++k)
    v |= static_cast<std::uint32_t>(static_cast<unsigned char>(b[o + k])) << (8 * k);
  o += 4;
  return v;
}

std::string escape(std::string_view s, std::size_t max = 300) {
  std::string out;
  for (std::size_t i = 0; i < s.size() && i < max; ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c == '\n')
      out += "\\n";
    else if (c == '\r')
      out += "\\r";
    else if (c == '\t')
      out += "\\t";
    else if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else
      out.push_back(static_cast<char>(c));
  }
  if (s.size() > max) out += "...";
  return out;
}

std::string ids_around(const std::vector<std::int32_t>& v, std::size_t at) {
  std::ostringstream s;
  const std::size_t b = at > 5 ? at - 5 : 0;
  s << "[" << b << "..] ";
  for (std::size_t i = b; i < v.size() && i < at + 6; ++i) s << (i == at ? "*" : "") << v[i] << " ";
  return s.str();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    std::cerr << "usage: check_reference STATUS TOKENIZER.json CORPUS.bin REFERENCE.json\n";
    return 2;
  }
  if (const auto code = baton::test::reference_status_exit(argv[1], "reference tokenizers"))
    return *code;
  if (!std::filesystem::exists(argv[2]))
    return baton::test::skip_or_fail(std::string("tokenizer file ") + argv[2] +
                                     " is absent (the shared tokenizer folder, ../shared/tokenizers"
                                     " by default, is not there; set -DBATON_TOKENIZERS_DIR)");
  try {
    auto tok = baton::Tokenizer::from_file(argv[2]);
    const std::string corpus = read_all(argv[3]);
    const auto ref = nlohmann::json::parse(read_all(argv[4]));
    const auto& cases = ref.at("cases");
    std::vector<std::pair<std::string, std::string>> texts;
    for (std::size_t o = 0; o < corpus.size();) {
      const auto nl = read_u32(corpus, o);
      std::string name = corpus.substr(o, nl);
      o += nl;
      const auto bl = read_u32(corpus, o);
      texts.emplace_back(std::move(name), corpus.substr(o, bl));
      o += bl;
    }
    if (texts.empty()) {
      std::cout << "FAILED: the corpus " << argv[3] << " has no case: nothing was compared\n";
      return 1;
    }
    if (texts.size() != cases.size()) {
      std::cerr << "corpus has " << texts.size() << " cases, reference has " << cases.size()
                << "\n";
      return 1;
    }
    // The NFC that encode applies: round trips are compared against normalized text.
    const auto file = nlohmann::json::parse(read_all(argv[2]));
    const bool nfc = file.contains("normalizer") && !file["normalizer"].is_null();
    // A prefix space added by the pre-tokenizer comes back from decode: no plain round trip.
    // So does whitespace swallowed by lstrip/rstrip added tokens.
    const bool round_trips =
        file["pre_tokenizer"].dump().find("\"add_prefix_space\":true") == std::string::npos &&
        file["added_tokens"].dump().find("strip\":true") == std::string::npos;

    std::size_t mismatches = 0, invalid_cases = 0, bytes = 0, tokens = 0;
    std::string first;
    auto report = [&](const std::string& name, const std::string& text, const std::string& what) {
      if (++mismatches == 1) first = "case \"" + name + "\" text \"" + escape(text) + "\": " + what;
      if (mismatches <= 10)
        std::cout << "  mismatch in case \"" << name << "\": " << what.substr(0, 300) << "\n";
    };
    auto compare = [&](const std::string& name, const std::string& text, const char* label,
                       const std::vector<std::int32_t>& got, const nlohmann::json& want_j) {
      const auto want = want_j.get<std::vector<std::int32_t>>();
      if (got == want) return;
      std::size_t at = 0;
      while (at < got.size() && at < want.size() && got[at] == want[at]) ++at;
      report(name, text,
             std::string(label) + " differ at index " + std::to_string(at) + " (baton " +
                 std::to_string(got.size()) + " ids, reference " + std::to_string(want.size()) +
                 ")\n  reference " + ids_around(want, at) + "\n  baton     " + ids_around(got, at));
    };

    const auto t0 = std::chrono::steady_clock::now();
    for (std::size_t i = 0; i < texts.size(); ++i) {
      const auto& [name, raw] = texts[i];
      const auto& c = cases[i];
      std::string text = raw;
      if (!c.at("valid").get<bool>()) {
        ++invalid_cases;
        // baton refuses invalid UTF-8, naming the offset; the reference saw U+FFFD repairs.
        const std::size_t bad = baton::text::first_invalid_utf8(raw);
        bool threw = false;
        try {
          (void)tok.encode(raw);
        } catch (const baton::tokenizer_error& e) {
          threw =
              std::string(e.what()).find("byte offset " + std::to_string(bad)) != std::string::npos;
        }
        if (!threw) report(name, raw, "invalid UTF-8 was not rejected with its byte offset");
        text = baton::text::replace_invalid_utf8(raw);
      }
      const auto ids = tok.encode(text);
      compare(name, text, "ids", ids, c.at("ids"));
      compare(name, text, "ids (add_special)", tok.encode(text, true), c.at("ids_special"));
      bytes += text.size();
      tokens += ids.size();
      const std::string decoded = tok.decode(ids);
      if (decoded != c.at("decoded").get<std::string>())
        report(name, text,
               "decode differs from the reference's decode: \"" + escape(decoded) + "\"");
      std::string expect = text;
      if (nfc) baton::text::Normalizer::from_json(file["normalizer"], "nfc").apply(text, expect);
      if (round_trips && decoded != expect)
        report(name, text,
               "round trip decode(encode(x)) != x (NFC'd when the tokenizer normalizes)");
      // Streaming decode: only complete UTF-8 per step, same bytes in the end.
      auto inc = tok.incremental_decoder();
      std::string streamed;
      for (const auto id : ids) {
        const std::string part = inc.feed(id);
        if (baton::text::first_invalid_utf8(part) != std::string_view::npos)
          report(name, text, "incremental decoder returned incomplete UTF-8");
        streamed += part;
      }
      streamed += inc.flush();
      if (streamed != decoded) report(name, text, "incremental decode differs from decode");
    }
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::cout << argv[2] << "\n  cases: " << texts.size() << " (" << invalid_cases
              << " with invalid UTF-8), bytes: " << bytes << ", tokens: " << tokens
              << "\n  reference: " << ref.value("reference", std::string("?"))
              << "\n  mismatches against Hugging Face tokenizers (Rust): " << mismatches
              << "\n  checked in " << secs << " s\n";
    if (mismatches) {
      std::cout << "FIRST MISMATCH: " << first << "\n";
      return 1;
    }
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
}
