// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief safetensors reading: a fully validated, memory-mapped view of one file
/// (SafetensorsFile), typed copies out of it (read_tensor), and a model's tensors across
/// one file or an index of shards (TensorSource).
///
/// Every file is untrusted input: SafetensorsFile::open checks the header length, UTF-8,
/// JSON syntax, duplicate keys, every entry's dtype/shape/offsets with overflow-checked
/// arithmetic, and that the tensors tile the data section exactly, before any tensor byte
/// can be reached.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <span>
#include <sstream>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "baton/core/dtype.hpp"
#include "baton/core/error.hpp"
#include "baton/io/json_util.hpp"
#include "baton/io/mapped_file.hpp"

namespace baton::io {

/// The reference implementation's header cap (100 MB); larger headers are rejected.
inline constexpr std::uint64_t kMaxSafetensorsHeaderBytes = 100'000'000;

/// One tensor's entry in a safetensors header.
struct TensorInfo {
  std::string name;
  std::string dtype_name;            ///< as in the header, e.g. "F32", "I64"
  std::optional<baton::dtype> type;  ///< set for F32/BF16/F16 (the float types baton computes with)
  std::size_t element_size = 0;
  std::vector<std::size_t> shape;  ///< [] for scalars
  std::size_t begin = 0, end = 0;  ///< relative to the data section, end exclusive
  /// Product of shape (1 for scalars). Cannot overflow: open() checked it.
  std::size_t numel() const {
    std::size_t n = 1;
    for (const std::size_t d : shape) n *= d;
    return n;
  }
};

/// "[64, 8]" — how shapes appear in messages.
inline std::string format_shape(std::span<const std::size_t> shape) {
  std::ostringstream out;
  out << '[';
  for (std::size_t i = 0; i < shape.size(); ++i) out << (i ? ", " : "") << shape[i];
  out << ']';
  return out.str();
}

namespace detail {

struct SafetensorsDtype {
  std::string_view name;
  std::size_t size;
  std::optional<baton::dtype> type;
};

/// The dtypes of the safetensors format (its Rust `Dtype` enum: BOOL, U8, I8, F8_E5M2,
/// F8_E4M3, I16, U16, F16, BF16, I32, U32, F32, F64, I64, U64). Files may hold any of them;
/// only the three float storage types can be read into baton tensors.
inline constexpr std::array<SafetensorsDtype, 15> kSafetensorsDtypes{{
    {"BOOL", 1, std::nullopt},
    {"U8", 1, std::nullopt},
    {"I8", 1, std::nullopt},
    {"F8_E5M2", 1, std::nullopt},
    {"F8_E4M3", 1, std::nullopt},
    {"I16", 2, std::nullopt},
    {"U16", 2, std::nullopt},
    {"F16", 2, baton::dtype::f16},
    {"BF16", 2, baton::dtype::bf16},
    {"I32", 4, std::nullopt},
    {"U32", 4, std::nullopt},
    {"F32", 4, baton::dtype::f32},
    {"F64", 8, std::nullopt},
    {"I64", 8, std::nullopt},
    {"U64", 8, std::nullopt},
}};

inline const SafetensorsDtype* find_safetensors_dtype(std::string_view name) {
  for (const auto& d : kSafetensorsDtypes) {
    if (d.name == name) return &d;
  }
  return nullptr;
}

/// a * b, or nullopt if it does not fit in size_t.
inline std::optional<std::size_t> checked_mul(std::size_t a, std::size_t b) {
  if (a != 0 && b > std::numeric_limits<std::size_t>::max() / a) return std::nullopt;
  return a * b;
}

}  // namespace detail

/// One validated safetensors file, memory-mapped. Move-only; owns the mapping.
class SafetensorsFile {
 public:
  /// Maps and validates `file` completely (see the file comment); format_error naming the
  /// file, the tensor/field and the offending values on any violation, io_error if the file
  /// cannot be mapped.
  static SafetensorsFile open(const std::filesystem::path& file) {
    SafetensorsFile f;
    f.path_ = file;
    f.map_ = MappedFile::open(file);
    f.parse();
    return f;
  }

  SafetensorsFile(SafetensorsFile&&) noexcept = default;
  SafetensorsFile& operator=(SafetensorsFile&&) noexcept = default;

  const std::filesystem::path& path() const { return path_; }
  /// The header's "__metadata__" (empty if absent).
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  /// Every tensor, sorted by begin offset (then end, then name).
  const std::vector<TensorInfo>& tensors() const { return tensors_; }

  const TensorInfo* find(std::string_view name) const {
    const auto it = index_.find(name);
    return it == index_.end() ? nullptr : &tensors_[it->second];
  }
  const TensorInfo& at(std::string_view name) const {
    const TensorInfo* t = find(name);
    BATON_CHECK(t != nullptr, format_error, "missing tensor '", detail::excerpt(name, 200), "' in ",
                path_.string());
    return *t;
  }

  /// The tensor's bytes in the mapping. NOT aligned: copy them (memcpy), never cast the
  /// pointer to a wider type. `t` must come from this file's tensors() (usage_error if not).
  std::span<const std::byte> raw(const TensorInfo& t) const {
    const std::less<const TensorInfo*> before;
    const bool mine = !tensors_.empty() && !before(&t, tensors_.data()) &&
                      before(&t, tensors_.data() + tensors_.size());
    BATON_CHECK(mine, usage_error, "tensor '", detail::excerpt(t.name, 200),
                "' does not belong to ", path_.string());
    return map_.bytes().subspan(data_offset_ + t.begin, t.end - t.begin);
  }

  /// Size of the data section in bytes (file size - 8 - header length).
  std::size_t data_size() const { return map_.size() - data_offset_; }
  /// Offset of the data section in the file (8 + header length).
  std::size_t data_offset() const { return data_offset_; }

 private:
  SafetensorsFile() = default;

  template <class... Parts>
  [[noreturn]] void bad(const Parts&... parts) const {
    BATON_FAIL(format_error, path_.string(), ": ", parts...);
  }

  void parse() {
    const auto bytes = map_.bytes();
    if (bytes.size() < 8) {
      bad("file is ", bytes.size(), " bytes, shorter than the 8-byte header length field");
    }
    std::uint64_t n = 0;
    for (int i = 0; i < 8; ++i) n |= static_cast<std::uint64_t>(bytes[i]) << (8 * i);
    if (n > kMaxSafetensorsHeaderBytes) {
      bad("header length ", n, " exceeds the limit of ", kMaxSafetensorsHeaderBytes, " bytes");
    }
    if (n > bytes.size() - 8) {
      bad("header length ", n, " runs past the end of the file (file size ", bytes.size(),
          ", so at most ", bytes.size() - 8, " header bytes)");
    }
    data_offset_ = 8 + static_cast<std::size_t>(n);
    const std::string_view header(reinterpret_cast<const char*>(bytes.data()) + 8,
                                  static_cast<std::size_t>(n));
    if (header.empty()) bad("header length is 0; the header must be a JSON object");
    if (header.front() != '{') {
      bad("header does not start with '{' (first byte is ",
          static_cast<unsigned>(static_cast<unsigned char>(header.front())), ")");
    }
    const nlohmann::json j = parse_json_strict(header, path_.string() + " (header)");
    if (!j.is_object()) bad("header is not a JSON object");

    const std::size_t data_size = bytes.size() - data_offset_;
    for (const auto& [key, entry] : j.items()) {
      if (key == "__metadata__") {
        parse_metadata(entry);
        continue;
      }
      tensors_.push_back(parse_entry(key, entry, data_size));
    }
    std::sort(tensors_.begin(), tensors_.end(), [](const TensorInfo& a, const TensorInfo& b) {
      return std::tie(a.begin, a.end, a.name) < std::tie(b.begin, b.end, b.name);
    });
    // The ranges must tile [0, data_size) exactly: no overlap, no hole, no trailing bytes.
    std::size_t covered = 0;
    const TensorInfo* prev = nullptr;
    for (const TensorInfo& t : tensors_) {
      if (t.begin < covered) {
        bad("tensor '", t.name, "' [", t.begin, ", ", t.end, ") overlaps tensor '", prev->name,
            "' [", prev->begin, ", ", prev->end, ")");
      }
      if (t.begin > covered) {
        bad("data bytes [", covered, ", ", t.begin, ") belong to no tensor (a hole before '",
            t.name, "')");
      }
      covered = t.end;
      prev = &t;
    }
    if (covered != data_size) {
      bad("data section is ", data_size, " bytes but the tensors cover only [0, ", covered, ") (",
          data_size - covered, " trailing bytes belong to no tensor)");
    }
    for (std::size_t i = 0; i < tensors_.size(); ++i) index_.emplace(tensors_[i].name, i);
  }

  void parse_metadata(const nlohmann::json& m) {
    if (!m.is_object()) bad("__metadata__ is not an object: ", detail::show(m));
    for (const auto& [k, v] : m.items()) {
      if (!v.is_string()) {
        bad("__metadata__ value for key '", k, "' is not a string: ", detail::show(v));
      }
      metadata_.emplace(k, v.get<std::string>());
    }
  }

  /// A non-negative JSON integer as size_t, or a format_error naming what it is.
  std::size_t index_value(const nlohmann::json& v, const std::string& tensor, const char* field,
                          std::size_t pos) const {
    if (const auto u = non_negative_integer(v)) {
      if (*u > std::numeric_limits<std::size_t>::max()) {
        bad("tensor '", tensor, "': ", field, "[", pos, "] = ", *u, " does not fit in size_t");
      }
      return static_cast<std::size_t>(*u);
    }
    if (v.is_number_integer()) {
      bad("tensor '", tensor, "': ", field, "[", pos, "] = ", v.dump(), " is negative");
    }
    bad("tensor '", tensor, "': ", field, "[", pos, "] = ", detail::show(v),
        " is not a non-negative integer");
  }

  TensorInfo parse_entry(const std::string& name, const nlohmann::json& e,
                         std::size_t data_size) const {
    if (!e.is_object()) bad("entry '", name, "' is not an object: ", detail::show(e));
    TensorInfo t;
    t.name = name;

    const auto dt = e.find("dtype");
    if (dt == e.end()) bad("tensor '", name, "' has no \"dtype\"");
    if (!dt->is_string()) bad("tensor '", name, "': dtype ", detail::show(*dt), " is not a string");
    t.dtype_name = dt->get<std::string>();
    const detail::SafetensorsDtype* d = detail::find_safetensors_dtype(t.dtype_name);
    if (!d) bad("tensor '", name, "' has unknown dtype \"", t.dtype_name, "\"");
    t.element_size = d->size;
    t.type = d->type;

    const auto sh = e.find("shape");
    if (sh == e.end()) bad("tensor '", name, "' has no \"shape\"");
    if (!sh->is_array()) bad("tensor '", name, "': shape ", detail::show(*sh), " is not an array");
    std::size_t numel = 1;
    for (std::size_t i = 0; i < sh->size(); ++i) {
      const std::size_t dim = index_value((*sh)[i], name, "shape", i);
      t.shape.push_back(dim);
      const auto next = detail::checked_mul(numel, dim);
      if (!next) {
        bad("tensor '", name, "': shape ", format_shape(t.shape),
            "... has more elements than size_t can count");
      }
      numel = *next;
    }
    const auto nbytes = detail::checked_mul(numel, t.element_size);
    if (!nbytes) {
      bad("tensor '", name, "': shape ", format_shape(t.shape), " x ", t.element_size, "-byte ",
          t.dtype_name, " overflows size_t");
    }

    const auto off = e.find("data_offsets");
    if (off == e.end()) bad("tensor '", name, "' has no \"data_offsets\"");
    if (!off->is_array() || off->size() != 2) {
      bad("tensor '", name, "': data_offsets ", detail::show(*off),
          " is not an array [begin, end]");
    }
    t.begin = index_value((*off)[0], name, "data_offsets", 0);
    t.end = index_value((*off)[1], name, "data_offsets", 1);
    if (t.begin > t.end) {
      bad("tensor '", name, "': data_offsets begin ", t.begin, " > end ", t.end);
    }
    if (t.end > data_size) {
      bad("tensor '", name, "': data_offsets end ", t.end, " lies past the data section (",
          data_size, " bytes)");
    }
    if (t.end - t.begin != *nbytes) {
      bad("tensor '", name, "': data_offsets [", t.begin, ", ", t.end, ") hold ", t.end - t.begin,
          " bytes but shape ", format_shape(t.shape), " of ", t.dtype_name, " needs ", *nbytes);
    }
    return t;
  }

  std::filesystem::path path_;
  MappedFile map_;
  std::size_t data_offset_ = 0;
  std::map<std::string, std::string> metadata_;
  std::vector<TensorInfo> tensors_;
  std::map<std::string, std::size_t, std::less<>> index_;
};

/// Copies tensor `t` of `file` into `out`, converting its float dtype to T (widening is exact,
/// f32->bf16/f16 rounds to nearest even via baton::narrow; bf16<->f16 goes through f32, one
/// rounding). Checks first: t.type set (else shape_error naming file, tensor, dtype), shape ==
/// expected_shape exactly (shape_error naming file, tensor, expected and actual shape),
/// out.size() == numel (usage_error: a caller bug, not a file problem).
/// Never a typed load from a mapped address: element bytes are memcpy'd.
template <StorageType T>
void read_tensor(const SafetensorsFile& file, const TensorInfo& t,
                 std::span<const std::size_t> expected_shape, std::span<T> out) {
  static_assert(std::endian::native == std::endian::little,
                "safetensors data is little-endian; baton assumes a little-endian host");
  static_assert(sizeof(bf16) == 2 && sizeof(f16) == 2 && sizeof(float) == 4);
  BATON_CHECK(t.type.has_value(), shape_error, file.path().string(), ": tensor '",
              detail::excerpt(t.name, 200), "' has dtype ", detail::excerpt(t.dtype_name),
              "; baton reads only F32, BF16 and F16 tensors");
  BATON_CHECK(std::ranges::equal(t.shape, expected_shape), shape_error, file.path().string(),
              ": tensor '", detail::excerpt(t.name, 200), "' has shape ", format_shape(t.shape),
              ", expected ", format_shape(expected_shape));
  const std::size_t n = t.numel();
  BATON_CHECK(out.size() == n, usage_error, file.path().string(), ": tensor '",
              detail::excerpt(t.name, 200), "' has ", n, " elements but the output span holds ",
              out.size());
  const std::span<const std::byte> src = file.raw(t);
  if (n == 0) return;  // also keeps memcpy away from null pointers
  const std::byte* p = src.data();
  if (*t.type == dtype_of<T>) {
    std::memcpy(out.data(), p, n * sizeof(T));
    return;
  }
  switch (*t.type) {
    case dtype::f32:
      for (std::size_t i = 0; i < n; ++i) {
        float v;
        std::memcpy(&v, p + 4 * i, 4);
        out[i] = narrow<T>(v);
      }
      break;
    case dtype::bf16:
      for (std::size_t i = 0; i < n; ++i) {
        bf16 v;
        std::memcpy(&v.bits, p + 2 * i, 2);
        out[i] = narrow<T>(widen(v));
      }
      break;
    case dtype::f16:
      for (std::size_t i = 0; i < n; ++i) {
        f16 v;
        std::memcpy(&v.bits, p + 2 * i, 2);
        out[i] = narrow<T>(widen(v));
      }
      break;
  }
}

/// A model's tensors: one model.safetensors, or shards through model.safetensors.index.json
/// ("weight_map": {tensor: file}; every listed file opened + validated once; a tensor listed in
/// the index but absent from its shard, present in two shards, or present in a shard but not
/// listed, is a format_error).
class TensorSource {
 public:
  /// model.safetensors.index.json if present, else model.safetensors; io_error naming `dir`
  /// if neither exists.
  static TensorSource open_dir(const std::filesystem::path& dir, const ReadLimits& limits = {}) {
    const auto index = dir / "model.safetensors.index.json";
    const auto single = dir / "model.safetensors";
    std::error_code ec;
    if (std::filesystem::exists(index, ec)) return open_index(index, limits);
    if (std::filesystem::exists(single, ec)) {
      TensorSource s = open_file(single);
      s.where_ = dir.string();
      return s;
    }
    BATON_FAIL(io_error, dir.string(),
               ": neither model.safetensors.index.json nor model.safetensors exists there");
  }

  /// A single .safetensors file.
  static TensorSource open_file(const std::filesystem::path& file) {
    TensorSource s;
    s.where_ = file.string();
    s.files_.push_back(SafetensorsFile::open(file));
    const auto& tensors = s.files_[0].tensors();
    for (std::size_t i = 0; i < tensors.size(); ++i) s.map_.emplace(tensors[i].name, Slot{0, i});
    return s;
  }

  /// A sharded model through its index file (the shards lie next to it).
  static TensorSource open_index(const std::filesystem::path& index_file,
                                 const ReadLimits& limits = {}) {
    TensorSource s;
    const std::filesystem::path dir = index_file.parent_path();
    s.where_ = dir.empty() ? index_file.string() : dir.string();
    const std::string src = index_file.string();
    const nlohmann::json j = read_json_file(index_file, limits.config_bytes, limits.json_depth);
    BATON_CHECK(j.is_object(), format_error, src, ": not a JSON object");
    const auto wm = j.find("weight_map");
    BATON_CHECK(wm != j.end() && wm->is_object(), format_error, src,
                ": \"weight_map\" is missing or not an object");

    std::map<std::string, std::size_t, std::less<>> shard_index;  // file name -> files_ slot
    std::map<std::string, std::string, std::less<>> wanted;       // tensor -> file name
    for (const auto& [tensor, file] : wm->items()) {
      BATON_CHECK(file.is_string(), format_error, src, ": weight_map[\"",
                  detail::excerpt(tensor, 200), "\"] = ", detail::show(file),
                  " is not a file name");
      const std::string name = file.get<std::string>();
      // Shards are siblings of the index: a path that escapes the folder is not a shard.
      const std::filesystem::path p(name);
      BATON_CHECK(!name.empty() && p.filename() == p && name != "." && name != "..", format_error,
                  src, ": weight_map[\"", detail::excerpt(tensor, 200), "\"] = \"",
                  detail::excerpt(name), "\" is not a plain file name next to the index");
      wanted.emplace(tensor, name);
      if (!shard_index.contains(name)) {
        shard_index.emplace(name, s.files_.size());
        s.files_.push_back(SafetensorsFile::open(dir / p));
      }
    }
    // Where each tensor actually is, so duplicates across shards are caught by name.
    std::map<std::string_view, std::string_view> found_in;
    for (const auto& [file_name, slot] : shard_index) {
      const auto& tensors = s.files_[slot].tensors();
      for (std::size_t i = 0; i < tensors.size(); ++i) {
        const std::string& t = tensors[i].name;
        const auto [it, fresh] = found_in.emplace(t, file_name);
        BATON_CHECK(fresh, format_error, src, ": tensor '", detail::excerpt(t, 200),
                    "' is present in two shards, '", detail::excerpt(it->second), "' and '",
                    detail::excerpt(file_name), "'");
        const auto w = wanted.find(t);
        BATON_CHECK(w != wanted.end(), format_error, src, ": tensor '", detail::excerpt(t, 200),
                    "' in shard '", detail::excerpt(file_name),
                    "' is not listed in the weight_map");
        if (w->second == file_name) s.map_.emplace(t, Slot{slot, i});
      }
    }
    for (const auto& [tensor, file_name] : wanted) {
      BATON_CHECK(s.map_.contains(tensor), format_error, src, ": weight_map lists tensor '",
                  detail::excerpt(tensor, 200), "' in shard '", detail::excerpt(file_name),
                  "' but that shard does not contain it");
    }
    return s;
  }

  TensorSource(TensorSource&&) noexcept = default;
  TensorSource& operator=(TensorSource&&) noexcept = default;

  /// The directory or file this source was opened from (used in messages).
  const std::string& where() const { return where_; }
  bool contains(std::string_view name) const { return map_.find(name) != map_.end(); }
  const TensorInfo& info(std::string_view name) const {
    const Slot s = slot(name);
    return files_[s.file].tensors()[s.tensor];
  }
  /// The file holding `name` (format_error if absent).
  const SafetensorsFile& file_of(std::string_view name) const { return files_[slot(name).file]; }
  /// All tensor names, sorted.
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    out.reserve(map_.size());
    for (const auto& [name, s] : map_) out.push_back(name);
    return out;
  }
  /// The opened files (one, or one per distinct shard).
  const std::vector<SafetensorsFile>& files() const { return files_; }

  template <StorageType T>
  void read_into(std::string_view name, std::span<const std::size_t> expected_shape,
                 std::span<T> out) const {
    const Slot s = slot(name);
    read_tensor<T>(files_[s.file], files_[s.file].tensors()[s.tensor], expected_shape, out);
  }

  template <StorageType T>
  std::vector<T> read(std::string_view name, std::span<const std::size_t> expected_shape) const {
    const Slot s = slot(name);
    const TensorInfo& t = files_[s.file].tensors()[s.tensor];
    // Shape and dtype are checked before allocating, so a wrong request allocates nothing.
    std::vector<T> out(std::ranges::equal(t.shape, expected_shape) && t.type ? t.numel() : 0);
    read_tensor<T>(files_[s.file], t, expected_shape, std::span<T>(out));
    return out;
  }

 private:
  struct Slot {
    std::size_t file, tensor;
  };
  TensorSource() = default;
  Slot slot(std::string_view name) const {
    const auto it = map_.find(name);
    BATON_CHECK(it != map_.end(), format_error, "missing tensor '", detail::excerpt(name, 200),
                "' in ", where_);
    return it->second;
  }

  std::string where_;
  std::vector<SafetensorsFile> files_;
  std::map<std::string, Slot, std::less<>> map_;
};

}  // namespace baton::io
