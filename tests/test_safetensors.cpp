// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// safetensors reading: valid round trips (f32/bf16/f16, metadata, scalars, empty tensors,
// an unaligned data section), every validation rule by exception type and message, and
// sharded models through an index.
//
// Mutation-checked while writing: disabling the duplicate-key callback, the hole check, the
// overflow check (plain multiplication) or the shard "present in two shards" check each made
// the corresponding case below fail; replacing read_tensor's memcpy with a typed float load
// makes the unaligned case fail under -fsanitize=undefined ("load of misaligned address").
#include <doctest/doctest.h>

#include "support/expect_error.hpp"

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <functional>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "baton/io/safetensors.hpp"
#include "support/safetensors_writer.hpp"
#include "support/test_paths.hpp"

namespace fs = std::filesystem;
using namespace baton;
using baton::io::SafetensorsFile;
using baton::io::TensorInfo;
using baton::io::TensorSource;
using baton::test::RawTensor;
using baton::test::TensorMap;

namespace {

/// A fresh, empty folder for one test case.
fs::path fresh_dir(const std::string& name) {
#ifdef BATON_TEST_TMP
  const fs::path root = fs::path(BATON_TEST_TMP) / "io_safetensors";
#else
  const fs::path root = fs::temp_directory_path() / "baton_io_safetensors";
#endif
  const fs::path dir = root / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::vector<std::size_t> dims(std::initializer_list<std::size_t> d) { return d; }

/// A file with a single F32 tensor "w" of 4 elements, described by a hand-written header
/// entry so tests can corrupt one field at a time.
void write_entry(const fs::path& p, const std::string& entry, std::size_t data_bytes = 16) {
  baton::test::write_header_and_data(p, "{\"w\":" + entry + "}",
                                     std::vector<std::uint8_t>(data_bytes, 0));
}

}  // namespace

TEST_CASE("valid file: f32/bf16/f16, metadata, a scalar and a 0-element tensor round-trip") {
  const fs::path dir = fresh_dir("roundtrip");
  const std::vector<float> a = {1.0f, -2.5f, 3.25f, 0.0f, 1e-3f, 65504.0f};
  const std::vector<float> b = {1.5f, -2.0f, 0.15625f, 256.0f};  // exact in bf16
  const std::vector<float> c = {0.5f, -0.25f, 1024.0f, 3.0f};    // exact in f16
  TensorMap m;
  m["a.f32"] = baton::test::f32_tensor({2, 3}, a);
  m["b.bf16"] = baton::test::bf16_tensor({4}, b);
  m["c.f16"] = baton::test::f16_tensor({2, 2}, c);
  m["s.scalar"] = baton::test::f32_tensor({}, {7.5f});
  m["z.empty"] = baton::test::f32_tensor({0, 4}, {});
  m["i.ids"] = RawTensor{"I64", {2}, std::vector<std::uint8_t>(16, 1)};
  const fs::path p = dir / "m.safetensors";
  baton::test::write_safetensors(p, m, {{"format", "pt"}, {"note", "hello"}});

  const SafetensorsFile f = SafetensorsFile::open(p);
  CHECK(f.path() == p);
  CHECK(f.metadata().size() == 2);
  CHECK(f.metadata().at("format") == "pt");
  REQUIRE(f.tensors().size() == 6);
  for (std::size_t i = 1; i < f.tensors().size(); ++i) {
    CHECK(f.tensors()[i - 1].begin <= f.tensors()[i].begin);
  }

  const TensorInfo& ta = f.at("a.f32");
  CHECK(ta.dtype_name == "F32");
  CHECK(ta.type == dtype::f32);
  CHECK(ta.element_size == 4);
  CHECK(ta.shape == dims({2, 3}));
  CHECK(ta.numel() == 6);
  CHECK(ta.end - ta.begin == 24);
  CHECK(f.find("nope") == nullptr);
  CHECK(f.find("b.bf16")->type == dtype::bf16);
  CHECK(f.at("c.f16").type == dtype::f16);
  CHECK_FALSE(f.at("i.ids").type.has_value());
  CHECK(f.at("i.ids").element_size == 8);

  std::vector<f32> out_a(6);
  io::read_tensor<f32>(f, ta, dims({2, 3}), out_a);
  CHECK(out_a == a);

  std::vector<bf16> out_b(4);
  io::read_tensor<bf16>(f, f.at("b.bf16"), dims({4}), out_b);
  for (std::size_t i = 0; i < 4; ++i) CHECK(widen(out_b[i]) == b[i]);
  std::vector<f32> out_b32(4);
  io::read_tensor<f32>(f, f.at("b.bf16"), dims({4}), out_b32);
  CHECK(out_b32 == b);

  std::vector<f16> out_c(4);
  io::read_tensor<f16>(f, f.at("c.f16"), dims({2, 2}), out_c);
  for (std::size_t i = 0; i < 4; ++i) CHECK(widen(out_c[i]) == c[i]);

  // Narrowing conversions round like baton::narrow.
  std::vector<bf16> a_bf(6);
  io::read_tensor<bf16>(f, ta, dims({2, 3}), a_bf);
  for (std::size_t i = 0; i < 6; ++i) CHECK(a_bf[i].bits == to_bf16(a[i]).bits);
  std::vector<f16> a_h(6);
  io::read_tensor<f16>(f, ta, dims({2, 3}), a_h);
  for (std::size_t i = 0; i < 6; ++i) CHECK(a_h[i].bits == to_f16(a[i]).bits);
  std::vector<bf16> c_bf(4);  // f16 -> bf16 through f32
  io::read_tensor<bf16>(f, f.at("c.f16"), dims({2, 2}), c_bf);
  for (std::size_t i = 0; i < 4; ++i) CHECK(widen(c_bf[i]) == c[i]);

  // Scalar: shape [] and one element.
  f32 s = 0;
  io::read_tensor<f32>(f, f.at("s.scalar"), {}, std::span<f32>(&s, 1));
  CHECK(s == 7.5f);
  CHECK(f.at("s.scalar").shape.empty());
  CHECK(f.at("s.scalar").numel() == 1);

  // 0-element tensor: legal, reads nothing.
  CHECK(f.at("z.empty").numel() == 0);
  CHECK(f.raw(f.at("z.empty")).empty());
  io::read_tensor<bf16>(f, f.at("z.empty"), dims({0, 4}), std::span<bf16>());

  // Raw bytes are exactly what was written.
  const auto raw = f.raw(f.at("c.f16"));
  REQUIRE(raw.size() == m["c.f16"].bytes.size());
  CHECK(std::memcmp(raw.data(), m["c.f16"].bytes.data(), raw.size()) == 0);

  // TensorSource over the same file.
  const TensorSource src = TensorSource::open_file(p);
  CHECK(src.contains("a.f32"));
  CHECK_FALSE(src.contains("x"));
  CHECK(src.names().size() == 6);
  CHECK(src.read<f32>("a.f32", dims({2, 3})) == a);
  CHECK(src.read<f32>("z.empty", dims({0, 4})).empty());
  std::vector<f32> into(4);
  src.read_into<f32>("c.f16", dims({2, 2}), std::span<f32>(into));
  CHECK(into == c);
  EXPECT_ERROR(format_error, src.info("x"), "missing tensor 'x'", p.string());
}

TEST_CASE("read_tensor checks dtype, shape and output size first, naming file and tensor") {
  const fs::path dir = fresh_dir("read_checks");
  TensorMap m;
  m["w"] = baton::test::f32_tensor({2, 3}, {1, 2, 3, 4, 5, 6});
  m["ids"] = RawTensor{"I32", {2}, std::vector<std::uint8_t>(8, 0)};
  const fs::path p = dir / "m.safetensors";
  baton::test::write_safetensors(p, m);
  const SafetensorsFile f = SafetensorsFile::open(p);
  std::vector<f32> out(6);
  EXPECT_ERROR(shape_error, io::read_tensor<f32>(f, f.at("w"), dims({3, 2}), out), p.string(),
               "'w'", "[2, 3]", "expected [3, 2]");
  EXPECT_ERROR(shape_error, io::read_tensor<f32>(f, f.at("w"), dims({6}), out), "[2, 3]", "[6]");
  std::vector<f32> two(2);
  EXPECT_ERROR(shape_error, io::read_tensor<f32>(f, f.at("ids"), dims({2}), two), p.string(),
               "'ids'", "I32");
  std::vector<f32> small(5);
  EXPECT_ERROR(usage_error, io::read_tensor<f32>(f, f.at("w"), dims({2, 3}), small), "'w'", "6",
               "5");
  EXPECT_ERROR(format_error, f.at("missing"), "missing tensor 'missing' in", p.string());
  // A TensorInfo that is not this file's own is refused rather than trusted.
  TensorInfo foreign = f.at("w");
  EXPECT_ERROR(usage_error, f.raw(foreign), "does not belong");
  const TensorSource src = TensorSource::open_file(p);
  EXPECT_ERROR(shape_error, src.read<bf16>("w", dims({2, 2})), "[2, 3]", "[2, 2]");
}

TEST_CASE("an unaligned data section is read correctly (no typed loads from the mapping)") {
  const fs::path dir = fresh_dir("unaligned");
  const std::vector<float> a = {1.0f, 2.0f, -3.0f, 4.5f, 5.0f};
  const std::vector<float> b = {0.5f, 1.5f, -2.0f};
  TensorMap m;
  m["a"] = baton::test::f32_tensor({5}, a);
  m["b"] = baton::test::bf16_tensor({3}, b);
  m["c"] = baton::test::f16_tensor({3}, b);
  // Pad the header to an odd length: the data section then starts at an odd file offset, so
  // every tensor's mapped address is odd (the mapping itself is page-aligned).
  const std::size_t natural = baton::test::safetensors_header(m).dump().size();
  const std::size_t odd = natural % 2 ? natural + 2 : natural + 1;
  const fs::path p = dir / "odd.safetensors";
  baton::test::write_safetensors(p, m, {}, odd);
  const SafetensorsFile f = SafetensorsFile::open(p);
  REQUIRE(f.data_offset() % 2 == 1);
  for (const TensorInfo& t : f.tensors()) {
    CHECK(reinterpret_cast<std::uintptr_t>(f.raw(t).data()) % 2 == 1 - (t.begin % 2));
  }
  std::vector<f32> out(5);
  io::read_tensor<f32>(f, f.at("a"), dims({5}), out);
  CHECK(out == a);
  std::vector<f32> out3(3);
  io::read_tensor<f32>(f, f.at("b"), dims({3}), out3);
  CHECK(out3 == b);
  io::read_tensor<f32>(f, f.at("c"), dims({3}), out3);
  CHECK(out3 == b);
  std::vector<bf16> same(3);  // same-type path (bulk memcpy) from an odd address
  io::read_tensor<bf16>(f, f.at("b"), dims({3}), same);
  for (std::size_t i = 0; i < 3; ++i) CHECK(widen(same[i]) == b[i]);
  std::vector<f16> conv(5);
  io::read_tensor<f16>(f, f.at("a"), dims({5}), conv);
  for (std::size_t i = 0; i < 5; ++i) CHECK(widen(conv[i]) == a[i]);
}

TEST_CASE("every documented safetensors dtype is accepted with its element size") {
  const fs::path dir = fresh_dir("dtypes");
  const std::pair<const char*, std::size_t> all[] = {
      {"BOOL", 1}, {"U8", 1},  {"I8", 1},  {"F8_E5M2", 1}, {"F8_E4M3", 1},
      {"I16", 2},  {"U16", 2}, {"F16", 2}, {"BF16", 2},    {"I32", 4},
      {"U32", 4},  {"F32", 4}, {"F64", 8}, {"I64", 8},     {"U64", 8}};
  TensorMap m;
  for (const auto& [name, size] : all) {
    m[std::string("t_") + name] = RawTensor{name, {3}, std::vector<std::uint8_t>(3 * size, 0)};
  }
  const fs::path p = dir / "all.safetensors";
  baton::test::write_safetensors(p, m);
  const SafetensorsFile f = SafetensorsFile::open(p);
  for (const auto& [name, size] : all) {
    const char* const dtype = name;  // CAPTURE takes it in a lambda: not a structured binding
    CAPTURE(dtype);
    const TensorInfo& t = f.at(std::string("t_") + name);
    CHECK(t.dtype_name == name);
    CHECK(t.element_size == size);
  }
}

TEST_CASE("an empty header object with no data is a valid file; empty data with bytes is not") {
  const fs::path dir = fresh_dir("empty");
  const fs::path p = dir / "e.safetensors";
  baton::test::write_header_and_data(p, "{}  ");  // trailing-space padding is allowed
  const SafetensorsFile f = SafetensorsFile::open(p);
  CHECK(f.tensors().empty());
  CHECK(f.metadata().empty());
  baton::test::write_header_and_data(p, "{}", {1, 2, 3});
  EXPECT_ERROR(format_error, SafetensorsFile::open(p), p.string(), "3 bytes", "[0, 0)");
}

TEST_CASE("framing errors: short file, header length past EOF or over 100 MB, bad start") {
  const fs::path dir = fresh_dir("framing");
  const fs::path p = dir / "f.safetensors";

  baton::test::write_text(p, "");
  EXPECT_ERROR(format_error, SafetensorsFile::open(p), p.string(), "0 bytes", "8-byte");
  baton::test::write_text(p, std::string("\x05\0\0\0\0", 5));
  EXPECT_ERROR(format_error, SafetensorsFile::open(p), p.string(), "5 bytes");

  baton::test::write_raw_safetensors(p, 1000, "{}", std::vector<std::uint8_t>(40, ' '));
  EXPECT_ERROR(format_error, SafetensorsFile::open(p), p.string(), "header length 1000",
               "file size 50");
  // 2^64 - 1: must not wrap when 8 is added.
  baton::test::write_raw_safetensors(p, ~std::uint64_t{0}, "{}", {});
  EXPECT_ERROR(format_error, SafetensorsFile::open(p), "18446744073709551615", "100000000");
  baton::test::write_raw_safetensors(p, 100'000'001, "{}", {});
  EXPECT_ERROR(format_error, SafetensorsFile::open(p), "header length 100000001", "100000000");

  baton::test::write_raw_safetensors(p, 0, "", {});
  EXPECT_ERROR(format_error, SafetensorsFile::open(p), p.string(), "header length is 0");
  baton::test::write_header_and_data(p, " {}");
  EXPECT_ERROR(format_error, SafetensorsFile::open(p), "does not start with '{'", "32");
  baton::test::write_header_and_data(p, "[1, 2]");
  EXPECT_ERROR(format_error, SafetensorsFile::open(p), "does not start with '{'");
}

TEST_CASE("header content errors: UTF-8, JSON syntax, duplicate keys, metadata") {
  const fs::path dir = fresh_dir("header");
  const fs::path p = dir / "h.safetensors";

  baton::test::write_header_and_data(p, "{\"a\xff\": 1}");
  EXPECT_ERROR(format_error, SafetensorsFile::open(p), p.string(), "UTF-8", "offset 3");
  baton::test::write_header_and_data(p, "{\"\xc0\xaf\": 1}");  // overlong '/'
  EXPECT_ERROR(format_error, SafetensorsFile::open(p), "UTF-8");
  baton::test::write_header_and_data(p, "{\"\xed\xa0\x80\": 1}");  // a UTF-16 surrogate
  EXPECT_ERROR(format_error, SafetensorsFile::open(p), "UTF-8");

  baton::test::write_header_and_data(p, "{\"w\": }");
  EXPECT_ERROR(format_error, SafetensorsFile::open(p), p.string(), "invalid JSON");
  // nlohmann stops at a NUL byte; the bytes after it must not be silently ignored.
  baton::test::write_raw_safetensors(p, 4, std::string("{}\0\0", 4), {});  // NUL padding
  EXPECT_ERROR(format_error, SafetensorsFile::open(p), "invalid JSON", "NUL byte at offset 2");
  baton::test::write_raw_safetensors(p, 9, std::string("{}\0{\"a\":1}", 9), {});
  EXPECT_ERROR(format_error, SafetensorsFile::open(p), "NUL byte");

  const std::string entry = R"({"dtype":"F32","shape":[1],"data_offsets":[0,4]})";
  baton::test::write_header_and_data(p, "{\"w\":" + entry + ",\"w\":" + entry + "}",
                                     std::vector<std::uint8_t>(4, 0));
  EXPECT_ERROR(format_error, SafetensorsFile::open(p), p.string(), "duplicate key 'w'");
  // A duplicate inside an entry is just as ambiguous (which dtype wins?).
  baton::test::write_header_and_data(
      p, R"({"w":{"dtype":"F32","dtype":"I32","shape":[1],"data_offsets":[0,4]}})",
      std::vector<std::uint8_t>(4, 0));
  EXPECT_ERROR(format_error, SafetensorsFile::open(p), "duplicate key 'dtype'");
  baton::test::write_header_and_data(p, R"({"__metadata__":{"k":"a","k":"b"}})");
  EXPECT_ERROR(format_error, SafetensorsFile::open(p), "duplicate key 'k'");
  // The same key in two different objects is fine.
  baton::test::write_header_and_data(
      p, R"({"__metadata__":{"dtype":"x"},"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})",
      std::vector<std::uint8_t>(4, 0));
  CHECK(SafetensorsFile::open(p).metadata().at("dtype") == "x");

  baton::test::write_header_and_data(p, R"({"__metadata__":["a"]})");
  EXPECT_ERROR(format_error, SafetensorsFile::open(p), p.string(), "__metadata__", "not an object");
  baton::test::write_header_and_data(p, R"({"__metadata__":{"format":1}})");
  EXPECT_ERROR(format_error, SafetensorsFile::open(p), "__metadata__", "'format'", "not a string");
}

TEST_CASE("entry errors: shape, dtype and data_offsets fields") {
  const fs::path dir = fresh_dir("entries");
  const fs::path p = dir / "e.safetensors";
  const auto open = [&] { return SafetensorsFile::open(p); };

  write_entry(p, "5");
  EXPECT_ERROR(format_error, open(), p.string(), "entry 'w'", "not an object");
  write_entry(p, R"({"shape":[4],"data_offsets":[0,16]})");
  EXPECT_ERROR(format_error, open(), "'w'", "no \"dtype\"");
  write_entry(p, R"({"dtype":7,"shape":[4],"data_offsets":[0,16]})");
  EXPECT_ERROR(format_error, open(), "'w'", "dtype 7", "not a string");
  write_entry(p, R"({"dtype":"Q4_K","shape":[4],"data_offsets":[0,16]})");
  EXPECT_ERROR(format_error, open(), "'w'", "unknown dtype \"Q4_K\"");
  write_entry(p, R"({"dtype":"f32","shape":[4],"data_offsets":[0,16]})");  // case matters
  EXPECT_ERROR(format_error, open(), "unknown dtype \"f32\"");

  write_entry(p, R"({"dtype":"F32","data_offsets":[0,16]})");
  EXPECT_ERROR(format_error, open(), "'w'", "no \"shape\"");
  write_entry(p, R"({"dtype":"F32","shape":4,"data_offsets":[0,16]})");
  EXPECT_ERROR(format_error, open(), "'w'", "shape 4", "not an array");
  write_entry(p, R"({"dtype":"F32","shape":[-4],"data_offsets":[0,16]})");
  EXPECT_ERROR(format_error, open(), "'w'", "shape[0] = -4", "negative");
  write_entry(p, R"({"dtype":"F32","shape":[2, 2.0],"data_offsets":[0,16]})");
  EXPECT_ERROR(format_error, open(), "'w'", "shape[1] = 2.0", "not a non-negative integer");
  write_entry(p, R"({"dtype":"F32","shape":["4"],"data_offsets":[0,16]})");
  EXPECT_ERROR(format_error, open(), "shape[0] = \"4\"");

  write_entry(p, R"({"dtype":"F32","shape":[4]})");
  EXPECT_ERROR(format_error, open(), "'w'", "no \"data_offsets\"");
  write_entry(p, R"({"dtype":"F32","shape":[4],"data_offsets":[0]})");
  EXPECT_ERROR(format_error, open(), "data_offsets [0]", "[begin, end]");
  write_entry(p, R"({"dtype":"F32","shape":[4],"data_offsets":"0-16"})");
  EXPECT_ERROR(format_error, open(), "data_offsets \"0-16\"");
  write_entry(p, R"({"dtype":"F32","shape":[4],"data_offsets":[0,-16]})");
  EXPECT_ERROR(format_error, open(), "data_offsets[1] = -16", "negative");
  write_entry(p, R"({"dtype":"F32","shape":[4],"data_offsets":[0,1.6e1]})");
  EXPECT_ERROR(format_error, open(), "data_offsets[1]", "not a non-negative integer");
  // Bigger than u64: nlohmann stores it as a double, so it is "not an integer", not wrapped.
  write_entry(p, R"({"dtype":"F32","shape":[4],"data_offsets":[0,99999999999999999999999]})");
  EXPECT_ERROR(format_error, open(), "data_offsets[1]", "not a non-negative integer");
}

TEST_CASE("offset errors: begin > end, past the data, size mismatch, overflow") {
  const fs::path dir = fresh_dir("offsets");
  const fs::path p = dir / "o.safetensors";
  const auto open = [&] { return SafetensorsFile::open(p); };

  write_entry(p, R"({"dtype":"F32","shape":[4],"data_offsets":[16,0]})");
  EXPECT_ERROR(format_error, open(), p.string(), "'w'", "begin 16 > end 0");
  write_entry(p, R"({"dtype":"F32","shape":[5],"data_offsets":[0,20]})");
  EXPECT_ERROR(format_error, open(), "'w'", "end 20", "past the data section (16 bytes)");
  write_entry(p, R"({"dtype":"F32","shape":[3],"data_offsets":[0,16]})");
  EXPECT_ERROR(format_error, open(), "'w'", "hold 16 bytes", "[3]", "needs 12");
  write_entry(p, R"({"dtype":"F16","shape":[2,2],"data_offsets":[0,16]})");
  EXPECT_ERROR(format_error, open(), "'w'", "[2, 2] of F16 needs 8");

  // [2^62, 8]: the element count itself overflows; a clean error, not a wrapped size.
  write_entry(p, R"({"dtype":"F32","shape":[4611686018427387904, 8],"data_offsets":[0,16]})");
  EXPECT_ERROR(format_error, open(), "'w'", "[4611686018427387904, 8]",
               "more elements than size_t can count");
  // [2^62, 2]: the count fits (2^63) but count * 4 bytes does not.
  write_entry(p, R"({"dtype":"F32","shape":[4611686018427387904, 2],"data_offsets":[0,16]})");
  EXPECT_ERROR(format_error, open(), "'w'", "overflows size_t");
  // 2^62 * 4 bytes = 2^64 wraps to exactly 0; a zero-byte range must not make it "fit".
  write_entry(p, R"({"dtype":"F32","shape":[4611686018427387904],"data_offsets":[0,0]})", 0);
  EXPECT_ERROR(format_error, open(), "'w'", "overflows size_t");
  write_entry(p, R"({"dtype":"U8","shape":[4294967296, 4294967296],"data_offsets":[0,0]})", 0);
  EXPECT_ERROR(format_error, open(), "'w'", "more elements than size_t can count");
  // A zero dimension makes the product 0 even next to a huge one: legal, 0 bytes.
  write_entry(p, R"({"dtype":"F32","shape":[0, 4611686018427387904],"data_offsets":[0,0]})", 0);
  CHECK(open().at("w").numel() == 0);
}

TEST_CASE("layout errors: overlaps, holes and trailing bytes are rejected") {
  const fs::path dir = fresh_dir("layout");
  const fs::path p = dir / "l.safetensors";
  const auto open = [&] { return SafetensorsFile::open(p); };
  const auto two = [&](std::size_t a0, std::size_t a1, std::size_t b0, std::size_t b1,
                       std::size_t data) {
    const std::string h = "{\"a\":{\"dtype\":\"U8\",\"shape\":[" + std::to_string(a1 - a0) +
                          "],\"data_offsets\":[" + std::to_string(a0) + "," + std::to_string(a1) +
                          "]},\"b\":{\"dtype\":\"U8\",\"shape\":[" + std::to_string(b1 - b0) +
                          "],\"data_offsets\":[" + std::to_string(b0) + "," + std::to_string(b1) +
                          "]}}";
    baton::test::write_header_and_data(p, h, std::vector<std::uint8_t>(data, 0));
  };
  two(0, 8, 8, 12, 12);
  CHECK(open().tensors().size() == 2);
  two(8, 12, 0, 8, 12);  // header order need not be offset order
  CHECK(open().tensors().front().name == "b");

  two(0, 8, 4, 12, 12);
  EXPECT_ERROR(format_error, open(), p.string(), "'b' [4, 12) overlaps tensor 'a' [0, 8)");
  two(0, 8, 0, 8, 8);  // identical ranges
  EXPECT_ERROR(format_error, open(), "overlaps");
  two(0, 4, 8, 12, 12);
  EXPECT_ERROR(format_error, open(), p.string(), "[4, 8) belong to no tensor", "'b'");
  two(4, 8, 8, 12, 12);  // hole at the start
  EXPECT_ERROR(format_error, open(), "[0, 4) belong to no tensor", "'a'");
  two(0, 4, 4, 8, 12);
  EXPECT_ERROR(format_error, open(), "data section is 12 bytes", "[0, 8)", "4 trailing");

  // A 0-element tensor inside another's range overlaps it; at a boundary it is fine.
  const std::string in_middle = R"({"a":{"dtype":"U8","shape":[8],"data_offsets":[0,8]},)"
                                R"("z":{"dtype":"U8","shape":[0],"data_offsets":[4,4]}})";
  baton::test::write_header_and_data(p, in_middle, std::vector<std::uint8_t>(8, 0));
  EXPECT_ERROR(format_error, open(), "'z' [4, 4) overlaps tensor 'a' [0, 8)");
  const std::string at_edges = R"({"a":{"dtype":"U8","shape":[8],"data_offsets":[0,8]},)"
                               R"("y":{"dtype":"U8","shape":[0],"data_offsets":[0,0]},)"
                               R"("z":{"dtype":"U8","shape":[0],"data_offsets":[8,8]}})";
  baton::test::write_header_and_data(p, at_edges, std::vector<std::uint8_t>(8, 0));
  CHECK(open().tensors().size() == 3);
}

TEST_CASE("OS errors are io_error naming the path") {
  const fs::path dir = fresh_dir("oserr");
  EXPECT_ERROR(io_error, SafetensorsFile::open(dir / "absent.safetensors"),
               (dir / "absent.safetensors").string(), "No such file");
  EXPECT_ERROR(io_error, SafetensorsFile::open(dir), dir.string(), "not a regular file");
  EXPECT_ERROR(io_error, TensorSource::open_dir(dir), dir.string(),
               "neither model.safetensors.index.json nor model.safetensors");
}

TEST_CASE("MappedFile is move-only RAII and handles empty files") {
  const fs::path dir = fresh_dir("mapped");
  baton::test::write_text(dir / "x", "hello");
  baton::test::write_text(dir / "empty", "");
  io::MappedFile a = io::MappedFile::open(dir / "x");
  CHECK(a.bytes().size() == 5);
  io::MappedFile b = std::move(a);
  CHECK(a.bytes().empty());
  REQUIRE(b.bytes().size() == 5);
  CHECK(static_cast<char>(b.bytes()[4]) == 'o');
  b = io::MappedFile::open(dir / "empty");
  CHECK(b.bytes().empty());
  static_assert(!std::is_copy_constructible_v<io::MappedFile>);
  static_assert(!std::is_copy_constructible_v<SafetensorsFile>);
  static_assert(std::is_move_constructible_v<SafetensorsFile>);
}

namespace {

/// Two shards + index: a,b in shard 1; c in shard 2.
void write_sharded(const fs::path& dir) {
  TensorMap s1, s2;
  s1["a"] = baton::test::f32_tensor({2}, {1, 2});
  s1["b"] = baton::test::bf16_tensor({1, 2}, {3, 4});
  s2["c"] = baton::test::f16_tensor({3}, {5, 6, 7});
  baton::test::write_safetensors(dir / "model-00001-of-00002.safetensors", s1);
  baton::test::write_safetensors(dir / "model-00002-of-00002.safetensors", s2);
  baton::test::write_json(dir / "model.safetensors.index.json",
                          {{"metadata", {{"total_size", 18}}},
                           {"weight_map",
                            {{"a", "model-00001-of-00002.safetensors"},
                             {"b", "model-00001-of-00002.safetensors"},
                             {"c", "model-00002-of-00002.safetensors"}}}});
}

}  // namespace

TEST_CASE("sharded model: index + two shards, each opened once") {
  const fs::path dir = fresh_dir("sharded");
  write_sharded(dir);
  const TensorSource src = TensorSource::open_dir(dir);
  CHECK(src.files().size() == 2);
  CHECK(src.names() == std::vector<std::string>{"a", "b", "c"});
  CHECK(src.read<f32>("a", dims({2})) == std::vector<f32>{1, 2});
  CHECK(src.read<f32>("b", dims({1, 2})) == std::vector<f32>{3, 4});
  CHECK(src.read<f32>("c", dims({3})) == std::vector<f32>{5, 6, 7});
  CHECK(src.info("c").dtype_name == "F16");
  CHECK(src.file_of("c").path().filename() == "model-00002-of-00002.safetensors");
  EXPECT_ERROR(format_error, src.info("d"), "missing tensor 'd' in", dir.string());
  EXPECT_ERROR(shape_error, src.read<f32>("c", dims({4})), "model-00002-of-00002", "'c'", "[3]",
               "[4]");

  // With a single model.safetensors and no index, open_dir takes the single file.
  const fs::path one = fresh_dir("single");
  baton::test::write_safetensors(one / "model.safetensors",
                                 {{"x", baton::test::f32_tensor({1}, {9})}});
  const TensorSource single = TensorSource::open_dir(one);
  CHECK(single.read<f32>("x", dims({1})) == std::vector<f32>{9});
  EXPECT_ERROR(format_error, single.info("y"), "missing tensor 'y' in", one.string());
}

TEST_CASE("sharded model errors") {
  const fs::path dir = fresh_dir("sharded_bad");
  const fs::path index = dir / "model.safetensors.index.json";
  const std::string s1 = "model-00001-of-00002.safetensors";
  const std::string s2 = "model-00002-of-00002.safetensors";
  const auto open = [&] { return TensorSource::open_dir(dir); };

  write_sharded(dir);
  baton::test::write_json(index, {{"weight_map", {{"a", s1}, {"b", s1}, {"c", s2}, {"d", s2}}}});
  EXPECT_ERROR(format_error, open(), index.string(), "tensor 'd'", s2, "does not contain it");

  write_sharded(dir);
  baton::test::write_json(index, {{"weight_map", {{"a", s1}, {"c", s2}}}});
  EXPECT_ERROR(format_error, open(), "tensor 'b'", s1, "not listed in the weight_map");

  write_sharded(dir);  // "a" also stored in shard 2
  baton::test::write_safetensors(dir / s2, {{"a", baton::test::f32_tensor({2}, {1, 2})},
                                            {"c", baton::test::f16_tensor({3}, {5, 6, 7})}});
  EXPECT_ERROR(format_error, open(), "tensor 'a' is present in two shards", s1, s2);

  write_sharded(dir);  // listed in shard 2, stored only in shard 1
  baton::test::write_json(index, {{"weight_map", {{"a", s2}, {"b", s1}, {"c", s2}}}});
  EXPECT_ERROR(format_error, open(), "tensor 'a'", s2, "does not contain it");

  baton::test::write_json(index, {{"metadata", {}}});
  EXPECT_ERROR(format_error, open(), index.string(), "weight_map");
  baton::test::write_json(index, {{"weight_map", {{"a", 1}}}});
  EXPECT_ERROR(format_error, open(), "weight_map[\"a\"] = 1", "not a file name");
  baton::test::write_json(index, {{"weight_map", {{"a", "../model.safetensors"}}}});
  EXPECT_ERROR(format_error, open(), "../model.safetensors", "not a plain file name");
  baton::test::write_json(index, {{"weight_map", {{"a", "/etc/passwd"}}}});
  EXPECT_ERROR(format_error, open(), "/etc/passwd", "not a plain file name");
  baton::test::write_json(index, {{"weight_map", {{"a", "gone.safetensors"}}}});
  EXPECT_ERROR(io_error, open(), (dir / "gone.safetensors").string());
  baton::test::write_text(index, R"({"weight_map": {"a": "x", "a": "y"}})");
  EXPECT_ERROR(format_error, open(), index.string(), "duplicate key 'a'");
  baton::test::write_text(index, R"({"weight_map": )");
  EXPECT_ERROR(format_error, open(), index.string(), "invalid JSON");

  // A corrupt shard is reported with the shard's own path.
  write_sharded(dir);
  baton::test::write_header_and_data(dir / s2, "{\"c\": 3}");
  EXPECT_ERROR(format_error, open(), (dir / s2).string(), "entry 'c'");
}
