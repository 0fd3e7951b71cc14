// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief WeightReader: what a model family loads its tensors through — a checked read of one
///        named tensor (or several, concatenated by rows) converted to T and uploaded to B.
#pragma once

#include <cstddef>
#include <functional>
#include <initializer_list>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "baton/backend/backend.hpp"
#include "baton/io/safetensors.hpp"

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
    return B::upload(std::span<const T>(host));
  }

  const io::TensorSource& source() const { return *src_; }

  /// The checkpoint's tensors that no read() or concat() asked for, in the file's order.
  std::vector<std::string> unused() const {
    std::vector<std::string> out;
    for (const std::string& n : src_->names())
      if (!used_.contains(n)) out.push_back(n);
    return out;
  }

 private:
  static std::size_t elements(const std::vector<std::size_t>& shape) {
    std::size_t n = 1;
    for (std::size_t d : shape) n *= d;
    return n;
  }
  const io::TensorSource* src_;
  // What the family asked for, so a load can refuse tensors it would silently drop.
  mutable std::set<std::string, std::less<>> used_;
};

}  // namespace baton
