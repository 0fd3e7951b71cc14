// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief baton.Tokenizer: a tokenizer.json file (byte-level BPE), as relays and models use it.
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <mutex>
#include <string>
#include <vector>

#include "bindings.hpp"
#include "convert.hpp"

namespace baton::python {

namespace {

/// A Tokenizer for Python. encode() fills a cache, so one object is not for two threads at once
/// (text/tokenizer.hpp); the lock lets Python threads share it.
struct TokenizerHandle {
  explicit TokenizerHandle(const std::string& file) : path(file), tok(Tokenizer::from_file(file)) {}
  std::string path;
  Tokenizer tok;
  std::mutex mutex;
};

}  // namespace

void bind_tokenizer(nb::module_& m) {
  nb::class_<TokenizerHandle>(m, "Tokenizer", "A Hugging Face tokenizer.json (byte-level BPE).")
      .def_static(
          "from_file",
          [](const std::string& path) {
            nb::gil_scoped_release unlocked;
            return new TokenizerHandle(path);
          },
          nb::arg("path"), nb::rv_policy::take_ownership, "Reads and checks a tokenizer.json file.")
      .def(
          "encode",
          [](TokenizerHandle& t, const std::string& text, bool specials) {
            nb::gil_scoped_release unlocked;
            const std::scoped_lock lock(t.mutex);
            return specials ? t.tok.encode(text) : t.tok.encode_ordinary_text(text);
          },
          nb::arg("text"), nb::kw_only(), nb::arg("specials") = true,
          "Token ids of `text`. With specials (the default) added tokens written in it "
          "('<|im_end|>') become their ids; specials=False spells them byte by byte, as a relay "
          "encodes untrusted request text.")
      .def(
          "decode",
          [](TokenizerHandle& t, const std::vector<std::int32_t>& ids) {
            return decode_text(t.tok, ids);
          },
          nb::arg("ids"), "The text of `ids` (invalid UTF-8 replaced by U+FFFD).")
      .def_prop_ro(
          "vocab_size", [](const TokenizerHandle& t) { return t.tok.vocab_size(); },
          "How many ids the tokenizer has.")
      .def_ro("path", &TokenizerHandle::path, "The file it was read from.")
      .def("__repr__", [](const TokenizerHandle& t) {
        return "Tokenizer(" + repr_str(t.path) +
               ", vocab_size=" + std::to_string(t.tok.vocab_size()) + ")";
      });
}

}  // namespace baton::python
