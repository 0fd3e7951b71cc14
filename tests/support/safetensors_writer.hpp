// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// Test-side safetensors writer: builds files from tensors the test holds in memory, and
// lets a test corrupt the header or the data on purpose. Independent of baton's reader.
#pragma once

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "baton/core/dtype.hpp"

namespace baton::test {

/// One tensor to write: dtype name as in the header ("F32", "BF16", "F16", or anything for
/// error tests), shape, and the raw little-endian bytes.
struct RawTensor {
  std::string dtype;
  std::vector<std::int64_t> shape;
  std::vector<std::uint8_t> bytes;
};

inline RawTensor f32_tensor(std::vector<std::int64_t> shape, const std::vector<float>& values) {
  RawTensor t{"F32", std::move(shape), std::vector<std::uint8_t>(values.size() * 4)};
  // memcpy with null pointers is UB even for 0 bytes (UBSan flags it): skip empty tensors.
  if (!values.empty()) std::memcpy(t.bytes.data(), values.data(), t.bytes.size());
  return t;
}

inline RawTensor bf16_tensor(std::vector<std::int64_t> shape, const std::vector<float>& values) {
  RawTensor t{"BF16", std::move(shape), std::vector<std::uint8_t>(values.size() * 2)};
  for (std::size_t i = 0; i < values.size(); ++i) {
    const std::uint16_t b = to_bf16(values[i]).bits;
    std::memcpy(t.bytes.data() + 2 * i, &b, 2);
  }
  return t;
}

inline RawTensor f16_tensor(std::vector<std::int64_t> shape, const std::vector<float>& values) {
  RawTensor t{"F16", std::move(shape), std::vector<std::uint8_t>(values.size() * 2)};
  for (std::size_t i = 0; i < values.size(); ++i) {
    const std::uint16_t b = to_f16(values[i]).bits;
    std::memcpy(t.bytes.data() + 2 * i, &b, 2);
  }
  return t;
}

/// Tensors in name order, written back to back (the order the reference writer uses).
using TensorMap = std::map<std::string, RawTensor>;

/// The header JSON for `tensors` laid out back to back, plus optional metadata.
inline nlohmann::json safetensors_header(const TensorMap& tensors,
                                         const std::map<std::string, std::string>& meta = {}) {
  nlohmann::json h = nlohmann::json::object();
  std::uint64_t off = 0;
  for (const auto& [name, t] : tensors) {
    h[name] = {
        {"dtype", t.dtype}, {"shape", t.shape}, {"data_offsets", {off, off + t.bytes.size()}}};
    off += t.bytes.size();
  }
  if (!meta.empty()) h["__metadata__"] = meta;
  return h;
}

/// Writes raw pieces: an 8-byte length (given explicitly, so tests can lie), header text, data.
inline void write_raw_safetensors(const std::filesystem::path& path, std::uint64_t header_len,
                                  const std::string& header,
                                  const std::vector<std::uint8_t>& data) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  unsigned char len[8];
  for (int i = 0; i < 8; ++i) len[i] = static_cast<unsigned char>(header_len >> (8 * i));
  out.write(reinterpret_cast<const char*>(len), 8);
  out.write(header.data(), static_cast<std::streamsize>(header.size()));
  out.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size()));
}

/// Writes a valid file. `pad_header_to` > 0 pads the header with spaces to that many bytes
/// (8-byte alignment of the data section is NOT guaranteed unless the caller asks for it).
inline void write_safetensors(const std::filesystem::path& path, const TensorMap& tensors,
                              const std::map<std::string, std::string>& meta = {},
                              std::size_t pad_header_to = 0) {
  std::string header = safetensors_header(tensors, meta).dump();
  if (header.size() < pad_header_to) header.append(pad_header_to - header.size(), ' ');
  std::vector<std::uint8_t> data;
  for (const auto& [name, t] : tensors) data.insert(data.end(), t.bytes.begin(), t.bytes.end());
  write_raw_safetensors(path, header.size(), header, data);
}

inline void write_json(const std::filesystem::path& path, const nlohmann::json& j) {
  std::ofstream(path, std::ios::trunc) << j.dump(2);
}

/// Writes `text` verbatim: JSON a json object cannot express (duplicate keys, bad UTF-8).
inline void write_text(const std::filesystem::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      .write(text.data(), static_cast<std::streamsize>(text.size()));
}

/// A header text plus data with the length field set to the header's real size: the usual
/// way to build a file whose header content (not its framing) is what a test corrupts.
inline void write_header_and_data(const std::filesystem::path& path, const std::string& header,
                                  const std::vector<std::uint8_t>& data = {}) {
  write_raw_safetensors(path, header.size(), header, data);
}

}  // namespace baton::test
