// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief Calling things from a template: arguments as Python passes them (positional, then
/// keyword), and the one interface behind every callable (macros, global functions, methods).
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "baton/text/jinja/value.hpp"

namespace baton::jinja {

/// A call's arguments.
struct Args {
  std::vector<Value> pos;
  std::vector<std::pair<std::string, Value>> kw;

  /// Argument `i` by position or by `name`, or `fallback` when neither is given; what a Python
  /// signature `f(a, b=fallback)` binds. `fn` names the callee in errors.
  Value get(std::size_t i, std::string_view name, const Value& fallback,
            std::string_view fn) const {
    const Value* by_name = nullptr;
    for (const auto& [k, v] : kw)
      if (k == name) by_name = &v;
    if (i < pos.size()) {
      if (by_name)
        fail(std::string(fn) + "() got multiple values for argument '" + std::string(name) + "'");
      return pos[i];
    }
    return by_name ? *by_name : fallback;
  }
  /// As get(), for an argument the callee cannot do without.
  Value need(std::size_t i, std::string_view name, std::string_view fn) const {
    Value v = get(i, name, Value(Undefined{"\x01"}), fn);
    if (v.is_undefined() && std::get<Undefined>(v.v).hint == "\x01")
      fail(std::string(fn) + "() missing required argument '" + std::string(name) + "'");
    return v;
  }
  /// Refuses more positional arguments than `n` and keywords outside `names`.
  void check(std::size_t n, std::initializer_list<std::string_view> names,
             std::string_view fn) const {
    if (pos.size() > n)
      fail(std::string(fn) + "() takes at most " + std::to_string(n) + " arguments (" +
           std::to_string(pos.size()) + " given)");
    for (const auto& [k, v] : kw) {
      bool ok = false;
      for (auto n2 : names) ok = ok || n2 == k;
      if (!ok) fail(std::string(fn) + "() got an unexpected keyword argument '" + k + "'");
    }
  }
};

class Runtime;

/// Anything a template can call. Implementations: macros (evaluator.hpp), global functions and
/// bound methods (methods.hpp).
struct Callable {
  virtual ~Callable() = default;
  virtual Value call(Runtime& rt, const Args& args) = 0;
};

/// What builtins need from the running evaluator: calling a callable (map over a macro),
/// applying a filter or test by name (map('upper'), select('odd')), and charging the
/// template's limits for work done outside statements.
class Runtime {
 public:
  virtual ~Runtime() = default;
  virtual Value call(const Value& callee, const Args& args) = 0;
  virtual Value filter(std::string_view name, const Value& input, const Args& args) = 0;
  virtual bool test(std::string_view name, const Value& input, const Args& args) = 0;
  /// Counts `n` loop iterations (and checks the clock) against the limits.
  virtual void charge(std::size_t n) = 0;
  /// Checks that a string of `bytes` bytes may be made.
  virtual void check_size(std::size_t bytes) = 0;
};

}  // namespace baton::jinja
