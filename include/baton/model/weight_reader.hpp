// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief WeightReader: what a model family loads its tensors through — a checked read of one
///        named tensor (or several, concatenated by rows) converted to T and uploaded to B.
#pragma once

#include <algorithm>
#include <cstddef>
#include <functional>
#include <initializer_list>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "baton/backend/backend.hpp"
#include "baton/core/quant.hpp"
#include "baton/io/safetensors.hpp"
#include "baton/model/block_matrix.hpp"

namespace baton {

/// Reads tensors of one checkpoint into backend buffers, remembering which it read. Shapes are
/// checked against what the caller states (shape_error naming the tensor and both shapes); other
/// float dtypes convert to T (narrowing rounds to nearest even).
template <Backend B>
class WeightReader {
 public:
  explicit WeightReader(const io::TensorSource& src) : src_(&src) {}

  /// One tensor, which must have `shape`.
  template <class T>
  typename B::template buffer<T> read(const std::string& name,
                                      std::initializer_list<std::size_t> shape) const {
    used_.insert(name);
    const std::vector<T> host = src_->template read<T>(name, std::span<const std::size_t>(shape));
    return B::upload(std::span<const T>(host));
  }

  /// A tensor and its shape, as one part of a row concatenation.
  struct Part {
    std::string name;
    std::vector<std::size_t> shape;
  };
  /// Several tensors one after another in one buffer (fused projections: q|k|v, gate|up).
  template <class T>
  typename B::template buffer<T> concat(const std::vector<Part>& parts) const {
    const std::vector<T> host = concat_host<T>(parts);
    return B::upload(std::span<const T>(host));
  }

  /// A weight matrix in storage S: read() / concat() for the float storages; for the block
  /// storages the rows are read in f32 and quantized (or kept f16 when their width is not a
  /// multiple of 32: the matrix is then listed in fallbacks()). Quantizing rows of a
  /// concatenation is quantizing each part, since a row never spans two parts.
  template <WeightStorage S>
  weight_matrix<B, S> matrix(const std::vector<Part>& parts) const {
    if constexpr (StorageType<S>) {
      return parts.size() == 1 ? read_as<S>(parts[0]) : concat<S>(parts);
    } else {
      const std::size_t cols = parts.at(0).shape.size() == 2 ? parts[0].shape[1] : 0;
      BlockMatrix<B> m;
      m.cols = cols;
      m.format = cols % kQuantBlock == 0 ? S::format : BlockFormat::f16;
      if (m.format == BlockFormat::f16) {
        std::string names;
        for (const Part& p : parts) names += (names.empty() ? "" : "+") + p.name;
        fallbacks_.push_back(names);
      }
      const std::size_t row_bytes = block_row_bytes(m.format, cols);
      std::vector<std::uint8_t> bytes;
      if (quantized_ != nullptr) {
        for (const Part& p : parts) append_quantized(p, m.format, row_bytes, bytes);
      } else {
        const std::vector<float> values =
            parts.size() == 1 ? read_host(parts[0]) : concat_host<float>(parts);
        bytes.resize(values.size() / cols * row_bytes);
        for (std::size_t r = 0; r < values.size() / cols; ++r)
          quantize_row(m.format, values.data() + r * cols, cols, bytes.data() + r * row_bytes);
      }
      m.rows = bytes.size() / row_bytes;
      // the host's products read eight rows at a time (core/quant.hpp's grouped layout)
      if constexpr (requires { requires B::groups_block_rows; })
        m.format = group_block_rows(m.format, m.rows, cols, bytes);
      m.bytes = B::upload(std::span<const std::uint8_t>(bytes));
      return m;
    }
  }
  /// One tensor as a weight matrix in storage S (see the list overload).
  template <WeightStorage S>
  weight_matrix<B, S> matrix(const std::string& name, std::vector<std::size_t> shape) const {
    return matrix<S>(std::vector<Part>{{name, std::move(shape)}});
  }

  /// Reads the block storage's matrices from `file` (a `baton quantize` file made from this
  /// checkpoint: model/quantized_file.hpp), which must outlive the reads, instead of quantizing.
  void use_quantized(const io::SafetensorsFile* file) { quantized_ = file; }

  /// The matrices a block storage kept in f16 (rows not a multiple of 32), by tensor name(s).
  const std::vector<std::string>& fallbacks() const { return fallbacks_; }

  const io::TensorSource& source() const { return *src_; }

  /// The checkpoint's tensors that no read() or concat() asked for, in the file's order.
  std::vector<std::string> unused() const {
    std::vector<std::string> out;
    for (const std::string& n : src_->names())
      if (!used_.contains(n)) out.push_back(n);
    return out;
  }

 private:
  template <class T>
  typename B::template buffer<T> read_as(const Part& p) const {
    used_.insert(p.name);
    const std::vector<T> host =
        src_->template read<T>(p.name, std::span<const std::size_t>(p.shape));
    return B::upload(std::span<const T>(host));
  }
  /// Part `p`'s rows from the quantized file, checked against the checkpoint's shape and the
  /// format the rows' width gives (blocks as U8, the f16 fallback as F16).
  void append_quantized(const Part& p, BlockFormat format, std::size_t row_bytes,
                        std::vector<std::uint8_t>& out) const {
    used_.insert(p.name);
    const io::TensorInfo& want = src_->info(p.name);  // also: the checkpoint has it
    BATON_CHECK(std::ranges::equal(want.shape, p.shape), shape_error, "tensor '", p.name, "' in ",
                src_->where(), " has shape ", io::format_shape(want.shape), ", expected ",
                io::format_shape(p.shape));
    const io::TensorInfo* t = quantized_->find(p.name);
    const bool f16 = format == BlockFormat::f16;
    const std::size_t rows = p.shape[0];
    BATON_CHECK(t != nullptr && t->dtype_name == (f16 ? "F16" : "U8") && t->shape.size() == 2 &&
                    t->shape[0] == rows && t->shape[1] == (f16 ? p.shape[1] : row_bytes),
                format_error, quantized_->path().string(), ": tensor '", p.name,
                "' is missing or is not ", rows, " rows of ",
                f16 ? "f16" : std::string(block_format_name(format)) + " blocks");
    const std::span<const std::byte> raw = quantized_->raw(*t);
    const auto* b = reinterpret_cast<const std::uint8_t*>(raw.data());
    out.insert(out.end(), b, b + raw.size());
  }

  std::vector<float> read_host(const Part& p) const {
    used_.insert(p.name);
    return src_->template read<float>(p.name, std::span<const std::size_t>(p.shape));
  }
  /// The parts one after another in host memory, converted to T.
  template <class T>
  std::vector<T> concat_host(const std::vector<Part>& parts) const {
    std::size_t total = 0;
    for (const Part& p : parts) total += elements(p.shape);
    std::vector<T> host(total);
    std::size_t off = 0;
    for (const Part& p : parts) {
      used_.insert(p.name);
      const std::size_t n = elements(p.shape);
      src_->template read_into<T>(p.name, std::span<const std::size_t>(p.shape),
                                  std::span<T>(host.data() + off, n));
      off += n;
    }
    return host;
  }

  static std::size_t elements(const std::vector<std::size_t>& shape) {
    std::size_t n = 1;
    for (std::size_t d : shape) n *= d;
    return n;
  }
  const io::TensorSource* src_;
  // What the family asked for, so a load can refuse tensors it would silently drop.
  mutable std::set<std::string, std::less<>> used_;
  mutable std::vector<std::string> fallbacks_;
  const io::SafetensorsFile* quantized_ = nullptr;
};

}  // namespace baton
