// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief The pre-tokenizer: splits normalized text into words with the tokenizer.json regex
/// (PCRE2, UTF + UCP, JIT-compiled when the platform allows) before BPE sees them.
#pragma once

// The 8-bit library; baton::pcre2 defines this too, so consumers without CMake still compile.
#ifndef PCRE2_CODE_UNIT_WIDTH
#define PCRE2_CODE_UNIT_WIDTH 8
#endif
#include <pcre2.h>

#include <cctype>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "baton/core/error.hpp"
#include "baton/io/json_util.hpp"

namespace baton::text {

/// A compiled PCRE2 pattern. The compiled code is immutable and shared by copies; each
/// matcher thread needs its own Regex::Matcher (PCRE2 match data is per call site).
class Regex {
 public:
  /// Backtracking budget per match: the pattern comes from a file, so a hostile or broken one
  /// must fail with an error instead of running for minutes.
  static constexpr std::uint32_t kMatchLimit = 10'000'000;
  static constexpr std::uint32_t kDepthLimit = 100'000;

  Regex() = default;

  /// Compiles `pattern` with PCRE2_UTF | PCRE2_UCP; `source` names the file in errors.
  Regex(std::string_view pattern, std::string_view source) : pattern_(pattern) {
    int code = 0;
    PCRE2_SIZE offset = 0;
    pcre2_code* re = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                                   PCRE2_UTF | PCRE2_UCP, &code, &offset, nullptr);
    if (!re) {
      PCRE2_UCHAR msg[256];
      pcre2_get_error_message(code, msg, sizeof msg);
      BATON_FAIL(tokenizer_error, source, ": pre_tokenizer regex \"",
                 ::baton::detail::excerpt(pattern), "\" does not compile at offset ", offset, ": ",
                 reinterpret_cast<char*>(msg));
    }
    code_.reset(re, &pcre2_code_free);
    // JIT is an optimization only: on platforms without it (or with W^X memory policies)
    // pcre2_jit_compile fails and the interpreter runs the same pattern.
    jit_ = pcre2_jit_compile(re, PCRE2_JIT_COMPLETE) == 0;
    pcre2_match_context* ctx = pcre2_match_context_create(nullptr);
    BATON_CHECK(ctx, tokenizer_error, "out of memory creating a PCRE2 match context");
    pcre2_set_match_limit(ctx, kMatchLimit);
    pcre2_set_depth_limit(ctx, kDepthLimit);
    context_.reset(ctx, &pcre2_match_context_free);
  }

  bool jit() const { return jit_; }
  const std::string& pattern() const { return pattern_; }

  /// Per-thread matching state (PCRE2 match data) for one Regex.
  class Matcher {
   public:
    explicit Matcher(const Regex& re) : re_(&re) {
      data_.reset(pcre2_match_data_create_from_pattern(re.code_.get(), nullptr));
      BATON_CHECK(data_, tokenizer_error, "out of memory creating PCRE2 match data");
    }

    /// Finds the next match in `text` at or after `start`: true and [begin, end) when found.
    /// `text` must be valid UTF-8 (checked by the caller, so PCRE2 does not re-check it).
    bool find(std::string_view text, std::size_t start, std::size_t& begin, std::size_t& end) {
      const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data());
      const int rc = re_->jit_ ? pcre2_jit_match(re_->code_.get(), subject, text.size(), start, 0,
                                                 data_.get(), re_->context_.get())
                               : pcre2_match(re_->code_.get(), subject, text.size(), start,
                                             PCRE2_NO_UTF_CHECK, data_.get(), re_->context_.get());
      if (rc == PCRE2_ERROR_NOMATCH) return false;
      if (rc < 0) {
        PCRE2_UCHAR msg[256];
        pcre2_get_error_message(rc, msg, sizeof msg);
        BATON_FAIL(tokenizer_error, "pre_tokenizer regex \"",
                   ::baton::detail::excerpt(re_->pattern_), "\" failed at byte offset ", start,
                   ": ", reinterpret_cast<char*>(msg));
      }
      const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(data_.get());
      begin = ov[0];
      end = ov[1];
      return true;
    }

   private:
    const Regex* re_;
    std::unique_ptr<pcre2_match_data, decltype(&pcre2_match_data_free)> data_{
        nullptr, &pcre2_match_data_free};
  };

 private:
  std::string pattern_;
  std::shared_ptr<pcre2_code> code_;
  std::shared_ptr<pcre2_match_context> context_;
  bool jit_ = false;
};

/// The GPT-2 pattern a ByteLevel pre-tokenizer applies when `use_regex` is true.
inline constexpr std::string_view kGpt2Pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

/// The `pre_tokenizer` of a byte-level tokenizer.json: an ordered list of regex splits (each
/// "Isolated": matches and the gaps between them both become words), optionally preceded by
/// ByteLevel's add_prefix_space. Immutable and shareable.
class PreTokenizer {
 public:
  PreTokenizer() = default;

  /// Parses `pre_tokenizer`; `source` names the file. Throws tokenizer_error for any split
  /// behaviour or pre-tokenizer type baton does not implement, and when no ByteLevel step
  /// says that the tokenizer is byte-level.
  static PreTokenizer from_json(const nlohmann::json& j, std::string_view source) {
    PreTokenizer p;
    p.add(j, source, true, "pre_tokenizer");
    BATON_CHECK(p.byte_level_, tokenizer_error, source,
                ": pre_tokenizer has no ByteLevel step, so this is not a byte-level BPE "
                "tokenizer (Metaspace/sentencepiece-style tokenizers are not supported)");
    return p;
  }

  /// Builds one from explicit patterns (tests).
  static PreTokenizer from_patterns(const std::vector<std::string>& patterns) {
    PreTokenizer p;
    for (const auto& pat : patterns) p.splits_.emplace_back(pat, "<patterns>");
    p.byte_level_ = true;
    return p;
  }

  bool add_prefix_space() const { return add_prefix_space_; }
  const std::vector<Regex>& splits() const { return splits_; }

  /// Per-thread state: one matcher per split step.
  class State {
   public:
    explicit State(const PreTokenizer& p) {
      matchers_.reserve(p.splits_.size());
      for (const auto& re : p.splits_) matchers_.emplace_back(re);
    }

   private:
    friend class PreTokenizer;
    std::vector<Regex::Matcher> matchers_;
  };

  /// Calls `word(std::string_view)` for each word of `text` (valid UTF-8, normalized, without
  /// the prefix space, which the caller adds), in order.
  template <class F>
  void split(std::string_view text, State& state, F&& word) const {
    split_level(text, 0, state, word);
  }

 private:
  template <class F>
  void split_level(std::string_view text, std::size_t level, State& state, F& word) const {
    if (text.empty()) return;
    if (level == splits_.size()) {
      word(text);
      return;
    }
    auto& m = state.matchers_[level];
    std::size_t pos = 0, last = 0, b = 0, e = 0;
    while (pos <= text.size() && m.find(text, pos, b, e)) {
      if (e == b) {
        // An empty match splits nothing; step over one character and keep looking.
        if (b >= text.size()) break;
        pos = b + 1;
        while (pos < text.size() && (static_cast<unsigned char>(text[pos]) & 0xC0) == 0x80) ++pos;
        continue;
      }
      if (b > last) split_level(text.substr(last, b - last), level + 1, state, word);
      split_level(text.substr(b, e - b), level + 1, state, word);
      last = pos = e;
    }
    if (last < text.size()) split_level(text.substr(last), level + 1, state, word);
  }

  // `field` names `j` in errors ("pre_tokenizer.pretokenizers[1]").
  void add(const nlohmann::json& j, std::string_view source, bool first, const std::string& field) {
    BATON_CHECK(j.is_object() && j.contains("type") && j["type"].is_string(), tokenizer_error,
                source,
                ": pre_tokenizer must be an object with a \"type\" (a byte-level BPE "
                "tokenizer needs a ByteLevel pre-tokenizer)");
    const std::string type = j["type"].get<std::string>();
    if (type == "Sequence") {
      BATON_CHECK(j.contains("pretokenizers") && j["pretokenizers"].is_array(), format_error,
                  source, ": pre_tokenizer Sequence without a \"pretokenizers\" array");
      bool sub_first = first;
      std::size_t i = 0;
      for (const auto& sub : j["pretokenizers"]) {
        const std::string sub_field = field + ".pretokenizers[" + std::to_string(i++) + "]";
        io::with_field(source, sub_field, [&] { add(sub, source, sub_first, sub_field); });
        sub_first = false;
      }
    } else if (type == "Split") {
      const std::string behavior = j.value("behavior", std::string("Isolated"));
      BATON_CHECK(behavior == "Isolated", tokenizer_error, source,
                  ": pre_tokenizer Split behavior \"", ::baton::detail::excerpt(behavior),
                  "\" is not supported (baton implements \"Isolated\")");
      BATON_CHECK(!j.value("invert", false), tokenizer_error, source,
                  ": pre_tokenizer Split with \"invert\": true is not supported");
      BATON_CHECK(j.contains("pattern") && j["pattern"].is_object(), format_error, source,
                  ": pre_tokenizer Split without a \"pattern\" object");
      const auto& pat = j["pattern"];
      if (pat.contains("Regex")) {
        splits_.emplace_back(pat["Regex"].get<std::string>(), source);
      } else if (pat.contains("String")) {
        splits_.emplace_back(quote_literal(pat["String"].get<std::string>()), source);
      } else {
        BATON_FAIL(format_error, source,
                   ": pre_tokenizer Split pattern needs \"Regex\" or "
                   "\"String\"");
      }
    } else if (type == "ByteLevel") {
      byte_level_ = true;
      if (j.value("add_prefix_space", false)) {
        // Hugging Face prepends the space to every piece that exists when ByteLevel runs;
        // only as the first step is that the same as prepending it to each text segment.
        BATON_CHECK(first, tokenizer_error, source,
                    ": ByteLevel pre_tokenizer with add_prefix_space is only supported as the "
                    "first pre-tokenizer step");
        add_prefix_space_ = true;
      }
      if (j.value("use_regex", true)) splits_.emplace_back(kGpt2Pattern, source);
    } else {
      BATON_FAIL(tokenizer_error, source, ": pre_tokenizer type \"", ::baton::detail::excerpt(type),
                 "\" is not supported (baton implements byte-level BPE: Split, ByteLevel, "
                 "Sequence)");
    }
  }

  static std::string quote_literal(std::string_view s) {
    // \Q...\E would break on a literal "\E"; escape every non-alphanumeric ASCII byte instead.
    std::string out;
    for (const char c : s) {
      const auto u = static_cast<unsigned char>(c);
      if (u < 0x80 && !std::isalnum(u)) out.push_back('\\');
      out.push_back(c);
    }
    return out;
  }

  std::vector<Regex> splits_;
  bool add_prefix_space_ = false;
  bool byte_level_ = false;
};

}  // namespace baton::text
