// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// Conan test_package: uses each component's third-party library through baton's headers
// (nlohmann/json for baton::json, OpenMP for baton::host, PCRE2 + utf8proc for
// baton::text), for the components the package was created with.
#include <baton/core/error.hpp>
#include <baton/io/json_util.hpp>
#ifdef BATON_TEST_HOST
#include <baton/backend/host_matmul.hpp>
#include <baton/core/dtype.hpp>
#endif
#ifdef BATON_TEST_TEXT
#include <baton/text/normalizer.hpp>
#include <baton/text/pretokenizer.hpp>
#endif

#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace {
int failures = 0;
void expect(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "FAILED: %s\n", what);
    ++failures;
  }
}
}  // namespace

int main() {
#ifdef BATON_TEST_HOST
  // baton::host: 3 rows take the blocked matrix product (OpenMP loops without a HostContext).
  // X = I3, W = [[1,2,3],[4,5,6]].
  const std::vector<float> x{1, 0, 0, 0, 1, 0, 0, 0, 1};
  const std::vector<float> w{1, 2, 3, 4, 5, 6};
  std::vector<float> y(6, -1.0f);
  baton::host_ops::matmul_nt<baton::f32>(x.data(), 3, 3, 3, w.data(), 2, y.data(), 2, false);
  expect((y == std::vector<float>{1, 4, 2, 5, 3, 6}), "matmul_nt (blocked product)");
#endif
#ifdef BATON_TEST_TEXT
  // baton::text: utf8proc (NFC) and PCRE2 (the GPT-2 split pattern).
  const std::string nfc =
      baton::text::Normalizer::apply_one(baton::text::NormalForm::nfc, "e\xcc\x81");
  expect(nfc == "\xc3\xa9", "utf8proc NFC of e + combining acute");
  const auto pre =
      baton::text::PreTokenizer::from_patterns({std::string(baton::text::kGpt2Pattern)});
  baton::text::PreTokenizer::State state(pre);
  std::vector<std::string> words;
  pre.split("Hello world's", state, [&](std::string_view wd) { words.emplace_back(wd); });
  expect((words == std::vector<std::string>{"Hello", " world", "'s"}), "PCRE2 GPT-2 split");
#endif

  // baton::json: baton's strict JSON reader over nlohmann/json.
  expect(baton::io::parse_json_strict(R"({"n": 3})", "<test>").at("n") == 3,
         "parse_json_strict through nlohmann/json");

  if (failures == 0) std::puts("baton test_package: OK");
  return failures == 0 ? 0 : 1;
}
