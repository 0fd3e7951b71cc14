// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// `baton quantize`'s file (model/quantized_file.hpp): SHA-256 against FIPS 180-4's examples;
// a model loaded from the file equals the one quantized at load, bit for bit; the file is
// refused, naming it and the way out, once the checkpoint beside it changes; a touched but
// unchanged checkpoint keeps it. (The bytes against gguf-py's quantizer:
// tests/quant/test_gguf_quantizer.py.)
#include <doctest/doctest.h>

#include <cstddef>
#include <filesystem>
#include <fstream>
#include <span>
#include <string>
#include <vector>

#include "baton/io/sha256.hpp"
#include "baton/model/host_forward.hpp"
#include "baton/model/quantized_file.hpp"
#include "support/expect_error.hpp"
#include "support/test_paths.hpp"

using namespace baton;
namespace fs = std::filesystem;

namespace {

std::string sha(std::string_view s, std::size_t chunk = 1000) {
  io::Sha256 h;
  for (std::size_t i = 0; i < s.size(); i += chunk)  // in pieces: the pending-block path
    h.update(std::as_bytes(std::span(s.data() + i, std::min(chunk, s.size() - i))));
  return h.hex();
}

/// Logits of 12 tokens (one prefill) and one decode step after them.
template <WeightStorage S>
std::vector<float> logits_of(const BaseModel<host, S>& model) {
  const auto slice = LoraSlice<16, host>::none(model.config());
  KvBuffer<layout::HeadMajor<f32, 8>, host> cache(model.config(), {0, 16, 1});
  cache.reset_prefix();
  cache.freeze_prefix();
  Workspace<host> ws;
  std::vector<std::int32_t> ids(12);
  for (int i = 0; i < 12; ++i) ids[i] = (i * 31 + 7) % 384;
  const auto a = forward(model, ws, slice, cache, KvTarget::in_slot(0), 0,
                         std::span<const std::int32_t>(ids), Logits::all);
  std::vector<float> out(a.begin(), a.end());
  const std::int32_t next = 5;
  const auto b = forward(model, ws, slice, cache, KvTarget::in_slot(0), 12,
                         std::span<const std::int32_t>(&next, 1), Logits::last);
  out.insert(out.end(), b.begin(), b.end());
  return out;
}

}  // namespace

TEST_CASE("SHA-256: FIPS 180-4's examples, whole and in pieces") {
  CHECK(sha("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(sha("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  const std::string two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  CHECK(sha(two) == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  CHECK(sha(two, 7) == sha(two));
  CHECK(sha(std::string(1000000, 'a'), 4093) ==
        "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST_CASE("quantized file: written once, loaded instead of quantizing, refused when stale") {
  const fs::path dir = fs::path(BATON_TEST_TMP) / "quantized-file-qwen-c";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path golden = fs::path(BATON_GOLDEN_DIR) / "qwen-c";
  fs::copy_file(golden / "model.safetensors", dir / "model.safetensors");
  fs::copy_file(golden / "config.json", dir / "config.json");

  const auto at_load = load_model<host, q4_0>(dir);
  CHECK_FALSE(at_load.prequantized());
  const std::vector<std::string> kept =
      write_quantized_file(io::TensorSource::open_dir(dir), BlockFormat::q4_0,
                           quantized_file_path(dir, BlockFormat::q4_0));
  CHECK(kept.empty());  // qwen-c's rows are all whole blocks
  CHECK(fs::exists(dir / "model.q4_0.safetensors"));
  const auto from_file = load_model<host, q4_0>(dir);
  CHECK(from_file.prequantized());
  CHECK(from_file.weight_bytes() == at_load.weight_bytes());
  CHECK(logits_of(from_file) == logits_of(at_load));
  // q8_0 has no file yet: quantized at load
  CHECK_FALSE(load_model<host, q8_0>(dir).prequantized());

  // a touched checkpoint with the same bytes: hashed again, and still taken
  fs::last_write_time(dir / "model.safetensors",
                      fs::last_write_time(dir / "model.safetensors") + std::chrono::seconds(5));
  CHECK(load_model<host, q4_0>(dir).prequantized());

  // one byte of a weight changed (same size): the file was made from another checkpoint
  {
    std::fstream f(dir / "model.safetensors", std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(-3, std::ios::end);
    f.put('\x5a');
  }
  EXPECT_ERROR(config_error, (load_model<host, q4_0>(dir)), "model.q4_0.safetensors",
               "another checkpoint", "SHA-256", "baton quantize --model");

  // a file of another storage under this name is refused as such
  fs::copy_file(dir / "model.q4_0.safetensors", dir / "model.q8_0.safetensors");
  EXPECT_ERROR(format_error, (load_model<host, q8_0>(dir)), "model.q8_0.safetensors",
               "not a file of `baton quantize` for q8_0");
}
