// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// A small ChatML byte-level tokenizer.json written by the tests: the 256 byte tokens (the
// GPT-2 byte-to-unicode alphabet), a few merges, and <|im_start|> / <|im_end|> as added
// special tokens, with Qwen2's pre-tokenizer shape. Small enough to pair with a tiny model.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace baton::test {

/// UTF-8 of one code point.
inline std::string utf8_of(unsigned cp) {
  std::string s;
  if (cp < 0x80) {
    s += static_cast<char>(cp);
  } else if (cp < 0x800) {
    s += static_cast<char>(0xc0 | (cp >> 6));
    s += static_cast<char>(0x80 | (cp & 0x3f));
  } else {
    s += static_cast<char>(0xe0 | (cp >> 12));
    s += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    s += static_cast<char>(0x80 | (cp & 0x3f));
  }
  return s;
}

/// The byte-level alphabet: printable Latin-1 bytes stand for themselves, the other bytes
/// for 256, 257, ... in byte order.
inline std::vector<std::string> byte_alphabet() {
  std::vector<std::string> out(256);
  unsigned next = 256;
  for (unsigned b = 0; b < 256; ++b) {
    const bool printable = (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae);
    out[b] = utf8_of(printable ? b : next++);
  }
  return out;
}

/// Vocabulary: ids 0..255 bytes, 256.. merges, then the two specials. Returns the JSON and
/// sets `vocab_size` (ids are dense).
inline nlohmann::json chatml_tokenizer_json(int& vocab_size) {
  const auto alpha = byte_alphabet();
  nlohmann::json vocab = nlohmann::json::object();
  for (int b = 0; b < 256; ++b) vocab[alpha[b]] = b;
  const std::string sp = alpha[' '];  // "Ġ"
  const std::vector<std::pair<std::string, std::string>> merges = {
      {"i", "m"}, {sp, "t"},   {"h", "e"},   {sp + "t", "he"}, {"s", "t"},
      {"P", "A"}, {"PA", "S"}, {"PAS", "S"}, {"a", "r"},       {"st", "ar"}};
  int id = 256;
  nlohmann::json merge_list = nlohmann::json::array();
  for (const auto& [a, b] : merges) {
    vocab[a + b] = id++;
    merge_list.push_back(a + " " + b);
  }
  const int im_start = id++, im_end = id++;
  vocab_size = id;
  const std::string qwen_split =
      "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| "
      "?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|"
      "\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
  const auto added = [](int i, const char* c) {
    return nlohmann::json{{"id", i},         {"content", c},    {"single_word", false},
                          {"lstrip", false}, {"rstrip", false}, {"normalized", false},
                          {"special", true}};
  };
  return {{"version", "1.0"},
          {"added_tokens", {added(im_start, "<|im_start|>"), added(im_end, "<|im_end|>")}},
          {"normalizer", {{"type", "NFC"}}},
          {"pre_tokenizer",
           {{"type", "Sequence"},
            {"pretokenizers",
             {{{"type", "Split"},
               {"pattern", {{"Regex", qwen_split}}},
               {"behavior", "Isolated"},
               {"invert", false}},
              {{"type", "ByteLevel"},
               {"add_prefix_space", false},
               {"trim_offsets", false},
               {"use_regex", false}}}}}},
          {"post_processor",
           {{"type", "ByteLevel"},
            {"add_prefix_space", false},
            {"trim_offsets", false},
            {"use_regex", false}}},
          {"decoder",
           {{"type", "ByteLevel"},
            {"add_prefix_space", false},
            {"trim_offsets", false},
            {"use_regex", false}}},
          {"model",
           {{"type", "BPE"},
            {"dropout", nullptr},
            {"unk_token", nullptr},
            {"continuing_subword_prefix", ""},
            {"end_of_word_suffix", ""},
            {"fuse_unk", false},
            {"byte_fallback", false},
            {"ignore_merges", false},
            {"vocab", vocab},
            {"merges", merge_list}}}};
}

}  // namespace baton::test
