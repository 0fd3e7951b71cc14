// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief baton::Tokenizer: byte-level BPE from a Hugging Face tokenizer.json (Qwen2/2.5/3,
/// Llama-3): added tokens, normalizer, regex pre-tokenizer, BPE, post-processor, decoder.
#pragma once

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <span>
#include <sstream>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "baton/core/error.hpp"
#include "baton/io/json_util.hpp"
#include "baton/text/added_tokens.hpp"
#include "baton/text/bpe.hpp"
#include "baton/text/normalizer.hpp"
#include "baton/text/pretokenizer.hpp"
#include "baton/text/utf8.hpp"

namespace baton {

/// A byte-level BPE tokenizer loaded from a Hugging Face `tokenizer.json`.
///
/// The tables (vocabulary, merges, compiled regex) are immutable and shared by copies. Each
/// Tokenizer object also owns a word -> ids cache and regex match buffers that `encode`
/// updates: **concurrent `encode` calls on one object are not safe**. Give each thread its
/// own copy; copying is cheap (the tables are shared, the copy starts with an empty cache).
/// `decode`, the lookups and IncrementalDecoder do not touch the cache and are thread-safe.
///
/// Input text must be valid UTF-8: `encode` throws tokenizer_error naming the byte offset of
/// the first invalid byte. (Hugging Face's Rust API only accepts valid UTF-8; its JavaScript
/// binding gets a JS string, in which lone surrogates and undecodable bytes have already
/// become U+FFFD. `baton::text::replace_invalid_utf8` reproduces that repair when wanted.)
class Tokenizer {
  struct Core;
  struct State;

 public:
  /// Reads and parses a tokenizer.json file within `limits` (docs/security.md).
  static Tokenizer from_file(const std::filesystem::path& path, const io::ReadLimits& limits = {}) {
    // Strict like every other JSON input: size cap, regular file, nesting limit (the
    // pre-tokenizer/normalizer Sequences are copied recursively), duplicate keys (a second
    // "normalizer" must not silently win), no trailing bytes.
    const std::string source = path.string();
    return from_json(io::read_json_file(path, limits.tokenizer_bytes, limits.json_depth), source);
  }

  /// Builds a tokenizer from parsed tokenizer.json content; `source` names it in errors.
  static Tokenizer from_json(const nlohmann::json& j, std::string_view source = "<json>") {
    try {
      return Tokenizer(std::make_shared<const Core>(j, source));
    } catch (const nlohmann::json::exception& e) {
      BATON_FAIL(format_error, source, ": unexpected tokenizer.json content: ",
                 io::detail::excerpt(io::detail::json_reason(e.what()), 200));
    }
  }

  Tokenizer(const Tokenizer& other) : Tokenizer(other.core_) {}
  Tokenizer& operator=(const Tokenizer& other) {
    if (this != &other) *this = Tokenizer(other.core_);
    return *this;
  }
  Tokenizer(Tokenizer&&) noexcept = default;
  Tokenizer& operator=(Tokenizer&&) noexcept = default;
  ~Tokenizer() = default;

  /// Token ids of `text` (valid UTF-8). Added tokens written in the text ("<|im_end|>")
  /// become their ids. `add_special` applies the post-processor template (Llama-3 prepends
  /// <|begin_of_text|>; Qwen's adds nothing). Not thread-safe on one object (see above).
  std::vector<std::int32_t> encode(std::string_view text, bool add_special = false) const {
    std::vector<std::int32_t> ids;
    ids.reserve(text.size() / 3 + 4);
    encode_append(text, ids, add_special);
    return ids;
  }

  /// Like encode, appending to `out` (reuse one vector across calls to avoid allocation).
  void encode_append(std::string_view text, std::vector<std::int32_t>& out,
                     bool add_special = false) const {
    if (const std::size_t bad = text::first_invalid_utf8(text); bad != std::string_view::npos) {
      std::ostringstream byte;
      byte << std::hex << static_cast<int>(static_cast<unsigned char>(text[bad]));
      BATON_FAIL(tokenizer_error, "invalid UTF-8 in text to encode at byte offset ", bad,
                 " (byte 0x", byte.str(), ")");
    }
    const Core& c = *core_;
    if (add_special) out.insert(out.end(), c.prefix_ids.begin(), c.prefix_ids.end());
    State& s = *state_;
    s.raw.clear();
    c.raw_added.split(text, 0, s.raw);
    for (const text::Segment& seg : s.raw) {
      if (seg.id >= 0) {
        out.push_back(seg.id);
        continue;
      }
      encode_piece(text.substr(seg.begin, seg.end - seg.begin), out, true);
    }
    if (add_special) out.insert(out.end(), c.suffix_ids.begin(), c.suffix_ids.end());
  }

  /// A byte range [first, second) of a text.
  using Span = std::pair<std::size_t, std::size_t>;

  /// Like encode_append (no post-processor), except that no added token is recognised where
  /// it overlaps one of the `literal` byte ranges: there the text stays text, encoded together
  /// with the ordinary text around it exactly as if that token did not exist. This is how a
  /// chat prompt keeps a user's "<|im_start|>" as text while the template's own tags stay
  /// control tokens (text/chat_encode.hpp). Normalized added tokens are not matched inside
  /// such a stretch either.
  void encode_append_literal(std::string_view text, std::span<const Span> literal,
                             std::vector<std::int32_t>& out) const {
    if (literal.empty()) return encode_append(text, out);
    if (const std::size_t bad = text::first_invalid_utf8(text); bad != std::string_view::npos)
      BATON_FAIL(tokenizer_error, "invalid UTF-8 in text to encode at byte offset ", bad);
    State& s = *state_;
    s.raw.clear();
    core_->raw_added.split(text, 0, s.raw);
    const auto overlaps = [&](const text::Segment& seg) {
      for (const Span& l : literal)
        if (seg.begin < l.second && l.first < seg.end) return true;
      return false;
    };
    // Runs of ordinary segments (and demoted tokens) become one piece: the segments cover the
    // text contiguously, so a run is one byte range.
    std::size_t run_begin = 0;
    bool in_run = false, demoted = false;
    const auto flush = [&](std::size_t end) {
      if (in_run && end > run_begin)
        encode_piece(text.substr(run_begin, end - run_begin), out, !demoted);
      in_run = demoted = false;
    };
    for (const text::Segment& seg : s.raw) {
      const bool keep_token = seg.id >= 0 && !overlaps(seg);
      if (keep_token) {
        flush(seg.begin);
        out.push_back(seg.id);
        continue;
      }
      if (!in_run) {
        in_run = true;
        run_begin = seg.begin;
      }
      demoted = demoted || seg.id >= 0;
    }
    flush(text.size());
  }

  /// The text of every special added token ("<|im_start|>", "<|eot_id|>", ...): the control
  /// tags that text from a user must not be able to spell.
  std::vector<std::string> special_token_texts() const {
    std::vector<std::string> out;
    for (std::size_t id = 0; id < core_->special.size(); ++id)
      if (core_->special[id] && core_->added[id] && !core_->tokens[id].empty())
        out.push_back(core_->tokens[id]);
    return out;
  }

  /// The bytes the ids stand for. `skip_special` drops special added tokens. Unlike Hugging
  /// Face, which applies a lossy UTF-8 repair to the result, the exact bytes come back: ids
  /// cut in the middle of a character give invalid UTF-8 (use IncrementalDecoder when
  /// streaming, text::replace_invalid_utf8 for Hugging Face's output). An id outside the
  /// vocabulary throws tokenizer_error (Hugging Face skips it silently).
  std::string decode(std::span<const std::int32_t> ids, bool skip_special = false) const {
    std::string out;
    out.reserve(ids.size() * 4);
    for (const std::int32_t id : ids) core_->append_token_bytes(id, skip_special, out);
    return out;
  }

  /// decode() of the ids the tokenizer has, the others left out, as Hugging Face's decode
  /// does: for showing model output, whose vocabulary may be larger than the tokenizer's
  /// (checkpoints pad their embedding rows; an untrained or fine-tuned model can pick those).
  std::string decode_known(std::span<const std::int32_t> ids, bool skip_special = false) const {
    std::string out;
    out.reserve(ids.size() * 4);
    for (const std::int32_t id : ids) {
      if (contains_id(id)) core_->append_token_bytes(id, skip_special, out);
    }
    return out;
  }

  /// The id of a token string (vocabulary or added token), as it is spelled in the file.
  std::optional<std::int32_t> token_to_id(std::string_view token) const {
    const auto& c = *core_;
    if (const auto it = c.added_by_content.find(token); it != c.added_by_content.end())
      return it->second;
    if (const auto it = c.bpe.vocab().find(token); it != c.bpe.vocab().end()) return it->second;
    return std::nullopt;
  }

  /// The token string of `id` as spelled in the file (byte-level symbols, e.g. "Ġthe").
  const std::string& id_to_token(std::int32_t id) const {
    core_->check_id(id);
    return core_->tokens[static_cast<std::size_t>(id)];
  }

  /// One past the largest id (vocabulary and added tokens together).
  std::size_t vocab_size() const { return core_->tokens.size(); }

  /// Whether `id` is an added token marked `special` (dropped by decode's skip_special).
  bool is_special(std::int32_t id) const {
    return id >= 0 && static_cast<std::size_t>(id) < core_->special.size() &&
           core_->special[static_cast<std::size_t>(id)];
  }

  /// Whether `id` names a token (vocabulary or added); ids below vocab_size() may be holes.
  bool contains_id(std::int32_t id) const {
    return id >= 0 && static_cast<std::size_t>(id) < core_->present.size() &&
           core_->present[static_cast<std::size_t>(id)];
  }

  /// Whether `id` is an added token, special or not (matched as a whole, never spelled by
  /// ordinary text: a grammar over text never allows one).
  bool is_added(std::int32_t id) const {
    return id >= 0 && static_cast<std::size_t>(id) < core_->added.size() &&
           core_->added[static_cast<std::size_t>(id)];
  }

  /// The bytes token `id` stands for (what decode({id}) returns); throws for an unknown id.
  std::string token_bytes(std::int32_t id) const {
    std::string out;
    core_->append_token_bytes(id, false, out);
    return out;
  }

  /// The ids of all special added tokens, ascending.
  std::span<const std::int32_t> special_ids() const { return core_->special_ids; }

  /// Ids the post-processor puts before / after the text when add_special is true.
  std::span<const std::int32_t> prefix_special_ids() const { return core_->prefix_ids; }
  std::span<const std::int32_t> suffix_special_ids() const { return core_->suffix_ids; }

  /// Turns a stream of ids into text that is always complete UTF-8: bytes of a character
  /// that is still unfinished are held back until the ids that complete it arrive. Owns a
  /// share of the tables, so it may outlive the Tokenizer. One per stream; not thread-safe.
  class IncrementalDecoder {
   public:
    /// Appends the bytes of `ids`; returns the newly completed text (possibly empty).
    std::string feed(std::span<const std::int32_t> ids) {
      for (const std::int32_t id : ids) core_->append_token_bytes(id, skip_special_, tail_);
      const std::size_t n = text::complete_utf8_prefix(tail_);
      std::string done = tail_.substr(0, n);
      tail_.erase(0, n);
      return done;
    }
    std::string feed(std::int32_t id) { return feed(std::span<const std::int32_t>(&id, 1)); }
    /// Returns whatever is held back (an unfinished character: invalid UTF-8) and resets.
    std::string flush() { return std::exchange(tail_, std::string()); }
    /// Number of bytes held back.
    std::size_t pending() const { return tail_.size(); }

   private:
    friend class Tokenizer;
    IncrementalDecoder(std::shared_ptr<const Core> core, bool skip)
        : core_(std::move(core)), skip_special_(skip) {}
    std::shared_ptr<const Core> core_;
    bool skip_special_;
    std::string tail_;
  };

  /// A decoder for one stream of generated ids.
  IncrementalDecoder incremental_decoder(bool skip_special = false) const {
    return IncrementalDecoder(core_, skip_special);
  }

  /// Encodes `text` as ordinary text: added tokens written in it are not recognised (use for
  /// untrusted content that must not inject control tokens). No post-processor.
  std::vector<std::int32_t> encode_ordinary_text(std::string_view text) const {
    if (const std::size_t bad = text::first_invalid_utf8(text); bad != std::string_view::npos)
      BATON_FAIL(tokenizer_error, "invalid UTF-8 in text to encode at byte offset ", bad);
    std::vector<std::int32_t> out;
    std::string normalized;
    if (core_->normalizer.apply(text, normalized)) text = normalized;
    encode_ordinary(text, out);
    return out;
  }

  /// Where the tokenizer came from (the file path given to from_file).
  const std::string& source() const { return core_->source; }
  /// Whether the pre-tokenizer regex runs JIT-compiled (false: the PCRE2 interpreter).
  bool regex_jit() const {
    for (const auto& re : core_->pre.splits())
      if (!re.jit()) return false;
    return true;
  }

 private:
  // Everything immutable after loading; shared by copies and incremental decoders.
  struct Core {
    std::string source;
    text::BpeModel bpe;
    text::Normalizer normalizer;
    text::PreTokenizer pre;
    text::AddedTokenMatcher raw_added, norm_added;
    text::TokenIdMap added_by_content;
    std::vector<std::string> tokens;  // id -> token string ("" for unused ids)
    std::vector<bool> present, special, added;
    std::vector<std::int32_t> special_ids, prefix_ids, suffix_ids;

    Core(const nlohmann::json& j, std::string_view src) : source(src) {
      // Each section under its field name, so a value of the wrong type ("content": 5) is
      // reported where it is, not as a bare "type must be string".
      BATON_CHECK(j.is_object(), format_error, src, ": a tokenizer.json must be a JSON object");
      io::with_field(src, "model", [&] { load_model(j, src); });
      normalizer = io::with_field(src, "normalizer", [&] {
        return text::Normalizer::from_json(section(j, "normalizer"), src);
      });
      pre = io::with_field(src, "pre_tokenizer", [&] {
        return text::PreTokenizer::from_json(section(j, "pre_tokenizer"), src);
      });
      load_added(j, src);
      io::with_field(src, "post_processor", [&] {
        load_post_processor(section(j, "post_processor"), src, "post_processor");
      });
      io::with_field(src, "decoder", [&] { load_decoder(section(j, "decoder"), src); });
    }

    /// A top-level section, or null when absent.
    static nlohmann::json section(const nlohmann::json& j, const char* key) {
      const auto it = j.find(key);
      return it == j.end() ? nlohmann::json() : *it;
    }

    void check_id(std::int32_t id) const {
      BATON_CHECK(id >= 0 && static_cast<std::size_t>(id) < tokens.size() &&
                      present[static_cast<std::size_t>(id)],
                  tokenizer_error, source, ": token id ", id, " is not in the vocabulary (size ",
                  tokens.size(), ")");
    }

    void append_token_bytes(std::int32_t id, bool skip_special, std::string& out) const {
      check_id(id);
      const auto k = static_cast<std::size_t>(id);
      if (skip_special && special[k]) return;
      bpe.alphabet().decode_append(tokens[k], out);
    }

    void set_token(std::int32_t id, const std::string& s) {
      const auto k = static_cast<std::size_t>(id);
      if (k >= tokens.size()) {
        tokens.resize(k + 1);
        present.resize(k + 1, false);
        special.resize(k + 1, false);
        added.resize(k + 1, false);
      }
      tokens[k] = s;
      present[k] = true;
    }

    void load_model(const nlohmann::json& j, std::string_view src) {
      BATON_CHECK(j.is_object() && j.contains("model") && j["model"].is_object(), format_error, src,
                  ": no \"model\" object");
      const auto& m = j["model"];
      std::string type = m.value("type", std::string());
      if (type.empty() && m.contains("merges")) type = "BPE";  // old files omit the tag
      BATON_CHECK(type == "BPE", tokenizer_error, src, ": model.type \"",
                  ::baton::detail::excerpt(type),
                  "\" is not supported (baton implements byte-level BPE only)");
      BATON_CHECK(!m.value("byte_fallback", false), tokenizer_error, src,
                  ": model.byte_fallback is true (a sentencepiece/Llama-2-style BPE), not "
                  "supported: baton implements byte-level BPE");
      if (m.contains("dropout") && !m["dropout"].is_null())
        BATON_CHECK(m["dropout"].get<double>() == 0.0, tokenizer_error, src, ": model.dropout ",
                    io::detail::show(m["dropout"]),
                    " is not supported (encoding "
                    "must be deterministic)");
      for (const char* field : {"continuing_subword_prefix", "end_of_word_suffix"}) {
        if (m.contains(field) && m[field].is_string())
          BATON_CHECK(m[field].get<std::string>().empty(), tokenizer_error, src, ": model.", field,
                      " \"", ::baton::detail::excerpt(m[field].get<std::string>()),
                      "\" is not supported");
      }
      BATON_CHECK(m.contains("vocab") && m["vocab"].is_object(), format_error, src,
                  ": model.vocab must be an object {token: id}");
      text::TokenIdMap vocab;
      vocab.reserve(m["vocab"].size());
      // Ids index dense tables (id -> token), so an id is bounded by the entry count before
      // anything is sized by it: one entry with id 2^26 must not allocate gigabytes.
      const auto entries = static_cast<std::int64_t>(m["vocab"].size());
      for (const auto& [tok, idv] : m["vocab"].items()) {
        BATON_CHECK(idv.is_number_integer() && idv.get<std::int64_t>() >= 0 &&
                        idv.get<std::int64_t>() < entries,
                    format_error, src, ": model.vocab[\"", io::detail::excerpt(tok),
                    "\"] = ", io::detail::show(idv), " is not a valid id (ids run from 0 to the ",
                    entries, " entries - 1)");
        const auto id = static_cast<std::int32_t>(idv.get<std::int64_t>());
        vocab.emplace(tok, id);
        set_token(id, tok);
      }
      std::vector<std::pair<std::string, std::string>> merges;
      if (m.contains("merges")) {
        BATON_CHECK(m["merges"].is_array(), format_error, src, ": model.merges must be an array");
        merges.reserve(m["merges"].size());
        std::size_t i = 0;
        for (const auto& e : m["merges"]) {
          if (e.is_string()) {
            // Older files: "left right" (byte-level symbols never contain a raw space).
            const std::string s = e.get<std::string>();
            const auto sp = s.find(' ');
            BATON_CHECK(sp != std::string::npos && s.find(' ', sp + 1) == std::string::npos,
                        format_error, src, ": model.merges[", i, "] \"",
                        ::baton::detail::excerpt(s), "\" is not two tokens separated by one space");
            merges.emplace_back(s.substr(0, sp), s.substr(sp + 1));
          } else {
            BATON_CHECK(e.is_array() && e.size() == 2 && e[0].is_string() && e[1].is_string(),
                        format_error, src, ": model.merges[", i, "] = ", io::detail::show(e),
                        " is neither \"a b\" nor [\"a\", \"b\"]");
            merges.emplace_back(e[0].get<std::string>(), e[1].get<std::string>());
          }
          ++i;
        }
      }
      std::optional<std::int32_t> unk;
      if (m.contains("unk_token") && m["unk_token"].is_string()) {
        const auto it = vocab.find(m["unk_token"].get<std::string>());
        BATON_CHECK(it != vocab.end(), format_error, src, ": model.unk_token \"",
                    ::baton::detail::excerpt(m["unk_token"].get<std::string>()),
                    "\" is not in model.vocab");
        unk = it->second;
      }
      bpe = text::BpeModel(std::move(vocab), merges, m.value("ignore_merges", false), unk, src);
    }

    void load_added(const nlohmann::json& j, std::string_view src) {
      if (!j.contains("added_tokens") || j["added_tokens"].is_null()) return;
      BATON_CHECK(j["added_tokens"].is_array(), format_error, src,
                  ": added_tokens must be an array");
      std::vector<text::AddedToken> raw, norm;
      // Hugging Face ignores the "id" of an added token when loading: a token already in the
      // vocabulary keeps its vocabulary id, any other gets the next free id after the
      // vocabulary and the added tokens before it. A file whose ids disagree would make the
      // two libraries produce different ids, so it is rejected instead of guessed at.
      std::int64_t next_free = static_cast<std::int64_t>(bpe.vocab().size()), max_assigned = -1;
      std::size_t index = 0;
      for (const auto& e : j["added_tokens"]) {
        const std::string field = "added_tokens[" + std::to_string(index++) + "]";
        io::with_field(src, field,
                       [&] { add_one(e, src, field, raw, norm, next_free, max_assigned); });
      }
      raw_added = text::AddedTokenMatcher(std::move(raw));
      norm_added = text::AddedTokenMatcher(std::move(norm));
      for (std::size_t k = 0; k < special.size(); ++k)
        if (special[k]) special_ids.push_back(static_cast<std::int32_t>(k));
    }

    void add_one(const nlohmann::json& e, std::string_view src, const std::string& field,
                 std::vector<text::AddedToken>& raw, std::vector<text::AddedToken>& norm,
                 std::int64_t next_free, std::int64_t& max_assigned) {
      {
        text::AddedToken t;
        BATON_CHECK(e.is_object() && e.contains("id") && e.contains("content"), format_error, src,
                    ": ", field, " = ", io::detail::show(e), " needs \"id\" and \"content\"");
        const auto id = e["id"].get<std::int64_t>();
        BATON_CHECK(id >= 0 && id < (std::int64_t{1} << 30), format_error, src, ": added token id ",
                    id, " is out of range");
        t.id = static_cast<std::int32_t>(id);
        t.content = e["content"].get<std::string>();
        BATON_CHECK(!t.content.empty(), format_error, src, ": added token ", id,
                    " has empty content");
        BATON_CHECK(text::first_invalid_utf8(t.content) == std::string_view::npos, format_error,
                    src, ": added token ", id, " content is not valid UTF-8");
        {
          const auto in_vocab = bpe.vocab().find(t.content);
          const std::int64_t expected = in_vocab != bpe.vocab().end()
                                            ? in_vocab->second
                                            : std::max(next_free, max_assigned + 1);
          BATON_CHECK(id == expected, tokenizer_error, src, ": added token \"",
                      ::baton::detail::excerpt(t.content), "\" has id ", id,
                      " but Hugging Face would assign it id ", expected,
                      " (added tokens outside the vocabulary must take consecutive ids after it)");
          max_assigned = std::max(max_assigned, expected);
        }
        t.special = e.value("special", false);
        t.single_word = e.value("single_word", false);
        t.lstrip = e.value("lstrip", false);
        t.rstrip = e.value("rstrip", false);
        // Hugging Face's default: special tokens are matched raw, others after normalization.
        t.normalized = e.value("normalized", !t.special);
        added_by_content[t.content] = t.id;
        if (t.normalized) {
          // Matched against normalized text, so the content is normalized the same way; like
          // Hugging Face, decode then yields the normalized spelling ("ﬁx" -> "fix" under NFKC).
          std::string n;
          if (normalizer.apply(t.content, n)) t.content = n;
          added_by_content[t.content] = t.id;
        }
        set_token(t.id, t.content);
        added[static_cast<std::size_t>(t.id)] = true;
        special[static_cast<std::size_t>(t.id)] = t.special;
        if (t.normalized) {
          norm.push_back(std::move(t));
        } else {
          raw.push_back(std::move(t));
        }
      }
    }

    void load_post_processor(const nlohmann::json& p, std::string_view src,
                             const std::string& field) {
      if (p.is_null()) return;
      const std::string type = p.value("type", std::string());
      if (type == "Sequence") {
        std::size_t i = 0;
        for (const auto& sub : p.at("processors")) {
          const std::string sub_field = field + ".processors[" + std::to_string(i++) + "]";
          io::with_field(src, sub_field, [&] { load_post_processor(sub, src, sub_field); });
        }
      } else if (type == "ByteLevel") {
        // Adjusts offsets only; no ids.
      } else if (type == "TemplateProcessing") {
        BATON_CHECK(prefix_ids.empty() && suffix_ids.empty(), tokenizer_error, src,
                    ": more than one TemplateProcessing post-processor");
        const auto& specials = p.at("special_tokens");
        bool seen_sequence = false;
        for (const auto& piece : p.at("single")) {
          if (piece.contains("Sequence")) {
            BATON_CHECK(piece["Sequence"].value("id", std::string("A")) == "A" && !seen_sequence,
                        tokenizer_error, src, ": TemplateProcessing single template ",
                        io::detail::show(p["single"]), " must contain sequence A exactly once");
            seen_sequence = true;
          } else if (piece.contains("SpecialToken")) {
            const std::string name = piece["SpecialToken"].at("id").get<std::string>();
            BATON_CHECK(specials.contains(name), format_error, src,
                        ": TemplateProcessing uses special token \"", name,
                        "\" missing from its special_tokens");
            for (const auto& idv : specials[name].at("ids")) {
              const auto id = idv.get<std::int32_t>();
              check_id(id);
              (seen_sequence ? suffix_ids : prefix_ids).push_back(id);
            }
          } else {
            BATON_FAIL(format_error, src, ": TemplateProcessing piece ", io::detail::show(piece),
                       " is neither Sequence nor SpecialToken");
          }
        }
        BATON_CHECK(seen_sequence, tokenizer_error, src,
                    ": TemplateProcessing single template has no sequence A");
      } else {
        BATON_FAIL(tokenizer_error, src, ": post_processor type \"", type,
                   "\" is not supported (baton implements ByteLevel, TemplateProcessing, "
                   "Sequence)");
      }
    }

    void load_decoder(const nlohmann::json& d, std::string_view src) {
      BATON_CHECK(!d.is_null(), tokenizer_error, src,
                  ": decoder is null; baton needs a ByteLevel decoder (byte-level BPE)");
      const std::string type = d.value("type", std::string());
      if (type == "ByteLevel") return;
      if (type == "Sequence" && d.contains("decoders") && d["decoders"].size() == 1 &&
          d["decoders"][0].value("type", std::string()) == "ByteLevel")
        return;
      BATON_FAIL(tokenizer_error, src, ": decoder ", io::detail::show(d),
                 " is not supported (baton needs a ByteLevel decoder: byte-level BPE; "
                 "Metaspace/ByteFallback decoders belong to sentencepiece-style tokenizers)");
    }
  };

  // Per-object mutable encoding state: regex match data, merge scratch and the word cache.
  struct State {
    static constexpr std::size_t kMaxCachedWordBytes = 64;
    static constexpr std::size_t kMaxCacheEntries = 1 << 17;
    explicit State(const Core& c) : pre(c.pre) {}
    text::PreTokenizer::State pre;
    text::BpeScratch scratch;
    std::vector<text::Segment> raw, norm;
    std::string prefixed;
    // word bytes -> (offset, count) in cache_ids
    std::unordered_map<std::string, std::pair<std::uint32_t, std::uint32_t>, text::StringHash,
                       std::equal_to<>>
        cache;
    std::vector<std::int32_t> cache_ids;
  };

  explicit Tokenizer(std::shared_ptr<const Core> core)
      : core_(std::move(core)), state_(std::make_unique<State>(*core_)) {}

  // Pre-tokenize and BPE one normalized span that contains no added token.
  // Ordinary text between added tokens: normalized, then (when `match_normalized`) cut at the
  // added tokens matched on normalized text, then pre-tokenized and BPE-encoded.
  void encode_piece(std::string_view piece, std::vector<std::int32_t>& out,
                    bool match_normalized) const {
    const Core& c = *core_;
    std::string normalized;
    if (c.normalizer.apply(piece, normalized)) piece = normalized;
    if (c.norm_added.empty() || !match_normalized) {
      encode_ordinary(piece, out);
      return;
    }
    State& s = *state_;
    s.norm.clear();
    c.norm_added.split(piece, 0, s.norm);
    for (const text::Segment& sub : s.norm) {
      if (sub.id >= 0) {
        out.push_back(sub.id);
      } else {
        encode_ordinary(piece.substr(sub.begin, sub.end - sub.begin), out);
      }
    }
  }

  void encode_ordinary(std::string_view piece, std::vector<std::int32_t>& out) const {
    if (piece.empty()) return;
    const Core& c = *core_;
    State& s = *state_;
    if (c.pre.add_prefix_space() && piece.front() != ' ') {
      // clear + push_back rather than assign(" "): GCC 12 at -O3 reports a false -Wrestrict
      // overlap inside std::string::assign(const char*) once this is inlined into a caller.
      s.prefixed.clear();
      s.prefixed.push_back(' ');
      s.prefixed.append(piece);
      piece = s.prefixed;
    }
    c.pre.split(piece, s.pre, [&](std::string_view word) { encode_word(word, out); });
  }

  void encode_word(std::string_view word, std::vector<std::int32_t>& out) const {
    State& s = *state_;
    if (word.size() > State::kMaxCachedWordBytes) {
      core_->bpe.encode_word(word, out, s.scratch);
      return;
    }
    if (const auto it = s.cache.find(word); it != s.cache.end()) {
      const auto [off, n] = it->second;
      out.insert(out.end(), s.cache_ids.begin() + off, s.cache_ids.begin() + off + n);
      return;
    }
    const std::size_t before = out.size();
    core_->bpe.encode_word(word, out, s.scratch);
    if (s.cache.size() >= State::kMaxCacheEntries) {
      // Bounded memory: start over rather than track recency (text repeats words quickly).
      s.cache.clear();
      s.cache_ids.clear();
    }
    const auto off = static_cast<std::uint32_t>(s.cache_ids.size());
    s.cache_ids.insert(s.cache_ids.end(), out.begin() + static_cast<std::ptrdiff_t>(before),
                       out.end());
    s.cache.emplace(std::string(word),
                    std::pair{off, static_cast<std::uint32_t>(out.size() - before)});
  }

  std::shared_ptr<const Core> core_;
  std::unique_ptr<State> state_;  // mutable through a const Tokenizer: see the class comment
};

}  // namespace baton
