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
/// bound methods (methods.hpp), each handing its own function to this constructor.
///
/// Function pointers, not virtual functions (here and in Runtime): the vtable of a class whose
/// virtual functions are all inline is emitted, with every function it names and all they
/// call, in each unit where inline code constructs the class, whether that code is ever
/// compiled into the unit or not. Virtual, the whole interpreter was object code in every unit
/// that included this header (444 KB at -O0; docs/ci.md); a pointer is emitted only with the
/// code that stores it, which is code that renders.
struct Callable {
  using Run = Value (*)(Callable& self, Runtime& rt, const Args& args);
  explicit Callable(Run run) : run_(run) {}
  Value call(Runtime& rt, const Args& args) { return run_(*this, rt, args); }

 private:
  Run run_;
};

/// What builtins need from the running evaluator: calling a callable (map over a macro),
/// applying a filter or test by name (map('upper'), select('odd')), and charging the
/// template's limits for work done outside statements. The evaluator hands over a table of
/// its functions (Ops) for the reason Callable gives.
class Runtime {
 public:
  struct Ops {
    Value (*call)(Runtime&, const Value& callee, const Args& args);
    Value (*filter)(Runtime&, std::string_view name, const Value& input, const Args& args);
    bool (*test)(Runtime&, std::string_view name, const Value& input, const Args& args);
    void (*charge)(Runtime&, std::size_t n);
    void (*check_size)(Runtime&, std::size_t bytes);
  };

  Value call(const Value& callee, const Args& args) { return ops_->call(*this, callee, args); }
  Value filter(std::string_view name, const Value& input, const Args& args) {
    return ops_->filter(*this, name, input, args);
  }
  bool test(std::string_view name, const Value& input, const Args& args) {
    return ops_->test(*this, name, input, args);
  }
  /// Counts `n` loop iterations (and checks the clock) against the limits.
  void charge(std::size_t n) { ops_->charge(*this, n); }
  /// Checks that a string of `bytes` bytes may be made.
  void check_size(std::size_t bytes) { ops_->check_size(*this, bytes); }

 protected:
  explicit Runtime(const Ops& ops) : ops_(&ops) {}
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;
  ~Runtime() = default;

 private:
  const Ops* ops_;
};

}  // namespace baton::jinja
