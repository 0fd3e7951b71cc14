// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief Gates: predicates on the last stage's output that decide whether the relay passes.
///
/// The built-ins (starts_with, contains: the gates a relay file gives) keep their needle, so
/// on a backend with a device loop the relay evaluates them on the device, over the last
/// stage's output buffer (kernels/phased/gate.hpp). Any other callable is a custom gate and
/// runs on the host, on the ids the last stage's wait brought back.
#pragma once

#include <algorithm>
#include <concepts>
#include <cstdint>
#include <functional>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

namespace baton {

/// A gate sees the gating stage's output ids and says pass (true) or fail. Empty (no gate:
/// the relay passes after one cycle), a built-in, or a custom callable.
class Gate {
 public:
  enum class Kind { none, starts_with, contains, custom };

  Gate() = default;
  /// A custom gate: any callable bool(std::span<const std::int32_t>); runs on the host.
  template <class F>
  requires(!std::same_as<std::remove_cvref_t<F>, Gate> &&
           std::predicate<F&, std::span<const std::int32_t>>) Gate(F f)
      : kind_(Kind::custom), custom_(std::move(f)) {}  // NOLINT: implicit, like std::function

  /// Passes when the output begins with `prefix`.
  static Gate starts_with(std::vector<std::int32_t> prefix) {
    return Gate(Kind::starts_with, std::move(prefix));
  }
  /// Passes when `needle` occurs anywhere in the output (an empty needle always passes).
  static Gate contains(std::vector<std::int32_t> needle) {
    return Gate(Kind::contains, std::move(needle));
  }

  explicit operator bool() const { return kind_ != Kind::none; }
  Kind kind() const { return kind_; }
  /// Whether the device can evaluate it (a built-in).
  bool built_in() const { return kind_ == Kind::starts_with || kind_ == Kind::contains; }
  /// The built-in's needle (empty for the other kinds).
  const std::vector<std::int32_t>& needle() const { return needle_; }

  /// The verdict on `out` (a gate of kind none passes).
  bool operator()(std::span<const std::int32_t> out) const {
    switch (kind_) {
      case Kind::none:
        return true;
      case Kind::starts_with:
        return out.size() >= needle_.size() &&
               std::equal(needle_.begin(), needle_.end(), out.begin());
      case Kind::contains:
        // std::search finds an empty needle at out.begin(), which is out.end() for an empty
        // output: the empty needle is checked first so that it passes there too.
        return needle_.empty() ||
               std::search(out.begin(), out.end(), needle_.begin(), needle_.end()) != out.end();
      case Kind::custom:
        return custom_(out);
    }
    return false;
  }

 private:
  Gate(Kind kind, std::vector<std::int32_t> needle) : kind_(kind), needle_(std::move(needle)) {}

  Kind kind_ = Kind::none;
  std::vector<std::int32_t> needle_;
  std::function<bool(std::span<const std::int32_t>)> custom_;
};

/// Passes when the output begins with `prefix`.
inline Gate starts_with(std::vector<std::int32_t> prefix) {
  return Gate::starts_with(std::move(prefix));
}

/// Passes when `needle` occurs anywhere in the output (an empty needle always passes).
inline Gate contains(std::vector<std::int32_t> needle) { return Gate::contains(std::move(needle)); }

/// A gate that never passes: run every cycle (benchmarks, fixed-depth relays). Custom: the
/// host evaluates it.
inline Gate never() {
  return Gate([](std::span<const std::int32_t>) { return false; });
}

}  // namespace baton
