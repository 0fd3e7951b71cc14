// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief A checkpoint's matrices quantized once, in a file next to it: `baton quantize` writes
///        `model.q8_0.safetensors` / `model.q4_0.safetensors` into the model folder, and
///        BaseModel<B, q8_0 / q4_0>::load reads its blocks instead of quantizing at load.
///
/// The file is safetensors: every 2-D float tensor of the checkpoint under its own name, as
/// dtype U8 [rows, row bytes] holding the rows' blocks (core/quant.hpp), or as F16 [rows, cols]
/// where the rows are not a multiple of 32 (what quantizing at load keeps in f16). The header's
/// "__metadata__" names the storage ("baton.storage") and the source checkpoint
/// ("baton.source": its safetensors files with byte size, modification time and SHA-256). At
/// load, a source file whose size differs refuses the quantized file; one whose time differs is
/// hashed again and refused if its SHA-256 differs (a copied checkpoint keeps its quantized
/// file; an edited one does not). Norms and biases are read from the checkpoint as always.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "baton/core/error.hpp"
#include "baton/core/quant.hpp"
#include "baton/io/safetensors.hpp"
#include "baton/io/sha256.hpp"

namespace baton {

/// Where `baton quantize` puts a model folder's matrices in format f.
inline std::filesystem::path quantized_file_path(const std::filesystem::path& dir, BlockFormat f) {
  return dir / ("model." + std::string(block_format_name(f)) + ".safetensors");
}

namespace detail {

inline long long modified_ns(const std::filesystem::path& p) {
  return static_cast<long long>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                    std::filesystem::last_write_time(p).time_since_epoch())
                                    .count());
}

/// The checkpoint's files as "baton.source" records them (with SHA-256 when `hash`).
inline nlohmann::json describe_source(const io::TensorSource& src, bool hash) {
  nlohmann::json files = nlohmann::json::array();
  for (const io::SafetensorsFile& f : src.files()) {
    nlohmann::json d{{"file", f.path().filename().string()},
                     {"bytes", std::filesystem::file_size(f.path())},
                     {"modified_ns", modified_ns(f.path())}};
    if (hash) d["sha256"] = io::sha256_file(f.path());
    files.push_back(std::move(d));
  }
  return files;
}

}  // namespace detail

/// Writes `src`'s matrices in format f (q8_0 or q4_0) to `out`; returns the tensors kept f16.
inline std::vector<std::string> write_quantized_file(const io::TensorSource& src, BlockFormat f,
                                                     const std::filesystem::path& out) {
  BATON_CHECK(f != BlockFormat::f16, usage_error, "write_quantized_file: q8_0 or q4_0");
  nlohmann::json header = nlohmann::json::object();
  header["__metadata__"] = {{"baton.storage", std::string(block_format_name(f))},
                            {"baton.source", detail::describe_source(src, true).dump()}};
  std::vector<std::vector<std::uint8_t>> data;
  std::vector<std::string> kept_f16;
  std::size_t offset = 0;
  for (const std::string& name : src.names()) {
    const io::TensorInfo& t = src.info(name);
    if (t.shape.size() != 2 || !t.type) continue;
    const std::size_t rows = t.shape[0], cols = t.shape[1];
    const std::vector<float> v = src.read<float>(name, std::span<const std::size_t>(t.shape));
    const BlockFormat held = cols % kQuantBlock == 0 ? f : BlockFormat::f16;
    if (held == BlockFormat::f16) kept_f16.push_back(name);
    const std::size_t row_bytes = block_row_bytes(held, cols);
    std::vector<std::uint8_t> bytes(rows * row_bytes);
    for (std::size_t r = 0; r < rows; ++r)
      quantize_row(held, v.data() + r * cols, cols, bytes.data() + r * row_bytes);
    header[name] = {{"dtype", held == BlockFormat::f16 ? "F16" : "U8"},
                    {"shape", held == BlockFormat::f16 ? std::vector<std::size_t>{rows, cols}
                                                       : std::vector<std::size_t>{rows, row_bytes}},
                    {"data_offsets", {offset, offset + bytes.size()}}};
    offset += bytes.size();
    data.push_back(std::move(bytes));
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');  // the data section starts 8-byte aligned
  const std::filesystem::path tmp = out.string() + ".partial";
  {
    std::ofstream o(tmp, std::ios::binary | std::ios::trunc);
    BATON_CHECK(o.good(), io_error, tmp.string(), ": cannot write");
    const std::uint64_t n = text.size();
    char len[8];
    for (int i = 0; i < 8; ++i) len[i] = static_cast<char>((n >> (8 * i)) & 0xff);  // little-endian
    o.write(len, 8);
    o.write(text.data(), static_cast<std::streamsize>(text.size()));
    for (const auto& d : data)
      o.write(reinterpret_cast<const char*>(d.data()), static_cast<std::streamsize>(d.size()));
    BATON_CHECK(o.good(), io_error, tmp.string(), ": write failed");
  }
  std::filesystem::rename(tmp, out);  // never a half-written file under the final name
  return kept_f16;
}

/// Opens `dir`'s quantized file for format f when there is one and it was made from `src`;
/// nullopt when there is none. A file made from another checkpoint is a config_error.
inline std::optional<io::SafetensorsFile> open_quantized_file(const std::filesystem::path& dir,
                                                              const io::TensorSource& src,
                                                              BlockFormat f) {
  const std::filesystem::path path = quantized_file_path(dir, f);
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return std::nullopt;
  io::SafetensorsFile file = io::SafetensorsFile::open(path);
  const auto& meta = file.metadata();
  const auto storage = meta.find("baton.storage");
  const auto source = meta.find("baton.source");
  BATON_CHECK(
      storage != meta.end() && storage->second == block_format_name(f) && source != meta.end(),
      format_error, path.string(), ": not a file of `baton quantize` for ", block_format_name(f),
      " (its __metadata__ lacks baton.storage / baton.source)");
  const nlohmann::json made_from = nlohmann::json::parse(source->second, nullptr, false);
  const nlohmann::json now = detail::describe_source(src, false);
  const auto refuse = [&](const std::string& why) {
    BATON_FAIL(config_error, path.string(), " was made from another checkpoint than ", src.where(),
               " (", why, "); run `baton quantize --model ", dir.string(), " --storage ",
               block_format_name(f), "` again, or delete it");
  };
  if (!made_from.is_array() || made_from.size() != now.size()) refuse("other files");
  for (std::size_t i = 0; i < now.size(); ++i) {
    const nlohmann::json& was = made_from[i];
    if (!was.is_object() || was.value("file", "") != now[i]["file"].get<std::string>() ||
        was.value("bytes", std::uint64_t{0}) != now[i]["bytes"].get<std::uint64_t>())
      refuse(now[i]["file"].get<std::string>() + " differs in name or size");
    if (was.value("modified_ns", 0LL) != now[i]["modified_ns"].get<long long>() &&
        was.value("sha256", "") != io::sha256_file(src.files()[i].path()))
      refuse(now[i]["file"].get<std::string>() + " has another SHA-256");
  }
  return file;
}

}  // namespace baton
