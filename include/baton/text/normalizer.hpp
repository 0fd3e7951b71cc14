// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief tokenizer.json normalizers: the Unicode normal forms (Qwen uses NFC) through
/// utf8proc, or none. Other normalizer types are rejected by name.
#pragma once

#include <utf8proc.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "baton/core/error.hpp"
#include "baton/io/json_util.hpp"

namespace baton::text {

/// One Unicode normal form.
enum class NormalForm { nfc, nfd, nfkc, nfkd };

/// The `normalizer` of a tokenizer.json: a (possibly empty) sequence of normal forms.
class Normalizer {
 public:
  Normalizer() = default;

  /// Parses `normalizer` (null, one object, or a "Sequence"); `source` names the file.
  static Normalizer from_json(const nlohmann::json& j, std::string_view source) {
    Normalizer n;
    n.add(j, source, "normalizer");
    return n;
  }

  /// Applies one normal form to valid UTF-8 `text`.
  static std::string apply_one(NormalForm form, std::string_view text) {
    int options = UTF8PROC_STABLE;
    switch (form) {
      case NormalForm::nfc:
        options |= UTF8PROC_COMPOSE;
        break;
      case NormalForm::nfd:
        options |= UTF8PROC_DECOMPOSE;
        break;
      case NormalForm::nfkc:
        options |= UTF8PROC_COMPOSE | UTF8PROC_COMPAT;
        break;
      case NormalForm::nfkd:
        options |= UTF8PROC_DECOMPOSE | UTF8PROC_COMPAT;
        break;
    }
    utf8proc_uint8_t* out = nullptr;
    const utf8proc_ssize_t n = utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(text.data()),
                                            static_cast<utf8proc_ssize_t>(text.size()), &out,
                                            static_cast<utf8proc_option_t>(options));
    // The caller validated UTF-8 already, so a failure here is utf8proc's, not the input's.
    BATON_CHECK(n >= 0, tokenizer_error, "utf8proc normalization failed: ", utf8proc_errmsg(n));
    std::unique_ptr<utf8proc_uint8_t, decltype(&std::free)> guard(out, &std::free);
    return std::string(reinterpret_cast<const char*>(out), static_cast<std::size_t>(n));
  }

  bool empty() const { return forms_.empty(); }

  /// Normalizes `text` (valid UTF-8). Returns false and leaves `out` untouched when the text
  /// is unchanged, so callers can keep using the original bytes.
  bool apply(std::string_view text, std::string& out) const {
    if (forms_.empty()) return false;
    // Pure ASCII is invariant under every normal form: skip utf8proc (the common case).
    bool ascii = true;
    for (const char c : text)
      if (static_cast<unsigned char>(c) >= 0x80) {
        ascii = false;
        break;
      }
    if (ascii) return false;
    std::string cur(text);
    for (const NormalForm f : forms_) cur = apply_one(f, cur);
    if (cur == text) return false;
    out = std::move(cur);
    return true;
  }

 private:
  // `field` names `j` in errors ("normalizer.normalizers[2]").
  void add(const nlohmann::json& j, std::string_view source, const std::string& field) {
    if (j.is_null()) return;
    BATON_CHECK(j.is_object() && j.contains("type") && j["type"].is_string(), format_error, source,
                ": ", field, " must be null or an object with a \"type\"");
    const std::string type = j["type"].get<std::string>();
    if (type == "Sequence") {
      BATON_CHECK(j.contains("normalizers") && j["normalizers"].is_array(), format_error, source,
                  ": normalizer Sequence without a \"normalizers\" array");
      std::size_t i = 0;
      for (const auto& sub : j["normalizers"]) {
        const std::string sub_field = field + ".normalizers[" + std::to_string(i++) + "]";
        io::with_field(source, sub_field, [&] { add(sub, source, sub_field); });
      }
    } else if (type == "NFC") {
      forms_.push_back(NormalForm::nfc);
    } else if (type == "NFD") {
      forms_.push_back(NormalForm::nfd);
    } else if (type == "NFKC") {
      forms_.push_back(NormalForm::nfkc);
    } else if (type == "NFKD") {
      forms_.push_back(NormalForm::nfkd);
    } else {
      BATON_FAIL(tokenizer_error, source, ": ", field, " type \"", ::baton::detail::excerpt(type),
                 "\" is not supported (baton supports NFC, NFD, NFKC, NFKD and Sequence of them)");
    }
  }

  std::vector<NormalForm> forms_;
};

}  // namespace baton::text
