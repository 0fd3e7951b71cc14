// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief Runs a parsed template over a context: jinja2's scoping (a for loop's iterations and a
/// macro's body are scopes, `if` is not; a namespace is the way out), macros, the globals
/// transformers adds (raise_exception, strftime_now) and jinja2's (range, namespace, dict),
/// all within TemplateLimits: a template is code from a file.
#pragma once

#include <chrono>
#include <ctime>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include "baton/text/jinja/ast.hpp"
#include "baton/text/jinja/call.hpp"
#include "baton/text/jinja/filters.hpp"
#include "baton/text/jinja/ops.hpp"
#include "baton/text/jinja/tests.hpp"

namespace baton::jinja {

/// Bounds on one render; each is named in the error that reports it.
struct TemplateLimits {
  /// Loop iterations (and items filters walk) over the whole render.
  std::size_t max_loop_iterations = 1'000'000;
  /// Macro calls nested inside each other (a template's recursion).
  int max_call_depth = 64;
  /// Bytes of output, and of any one string the template builds.
  std::size_t max_output_bytes = std::size_t{16} << 20;
  /// Wall-clock time of one render.
  std::chrono::milliseconds max_render_time{2000};
  /// Statement and expression nesting accepted when parsing.
  int max_nesting = 200;
};

/// A lexical scope: the variables one level assigns, and the level it sits in.
struct Scope {
  std::vector<std::pair<std::string, Value>> vars;
  std::shared_ptr<Scope> parent;

  const Value* find(std::string_view name) const {
    for (const Scope* s = this; s; s = s->parent.get())
      for (const auto& [k, v] : s->vars)
        if (k == name) return &v;
    return nullptr;
  }
  void set(std::string_view name, Value v) {
    for (auto& [k, old] : vars) {
      if (k == name) {
        old = std::move(v);
        return;
      }
    }
    vars.emplace_back(std::string(name), std::move(v));
  }
};
using ScopePtr = std::shared_ptr<Scope>;

class Evaluator;

/// A macro, or a call block's body (`caller`): a body rendered in a fresh scope under the
/// scope it was defined in, so it reads the variables there as they are when it is called.
/// It holds its scope weakly: the scope holds the macro, and a cycle would never be freed.
struct Macro final : Callable {
  const Stmt* def;
  std::weak_ptr<Scope> closure;
  Evaluator* ev;
  Macro(const Stmt* d, const ScopePtr& c, Evaluator* e)
      : Callable(&Macro::run), def(d), closure(c), ev(e) {}
  static Value run(Callable& self, Runtime& rt, const Args& args);
};

/// range, namespace, dict, raise_exception, strftime_now.
struct Global final : Callable {
  std::string name;
  explicit Global(std::string n) : Callable(&Global::run), name(std::move(n)) {}
  static Value run(Callable& self, Runtime& rt, const Args& args) {
    return static_cast<Global&>(self).invoke(rt, args);
  }
  Value invoke(Runtime& rt, const Args& args);
};

inline const Value* builtin_global(std::string_view name) {
  static const std::pair<std::string_view, Value> kGlobals[] = {
      {"range", Value(CallablePtr(std::make_shared<Global>("range")))},
      {"namespace", Value(CallablePtr(std::make_shared<Global>("namespace")))},
      {"dict", Value(CallablePtr(std::make_shared<Global>("dict")))},
      {"raise_exception", Value(CallablePtr(std::make_shared<Global>("raise_exception")))},
      {"strftime_now", Value(CallablePtr(std::make_shared<Global>("strftime_now")))},
  };
  for (const auto& [k, v] : kGlobals)
    if (k == name) return &v;
  return nullptr;
}

inline Value Global::invoke(Runtime& rt, const Args& a) {
  if (name == "raise_exception") {
    a.check(1, {}, name);
    fail(to_str(a.need(0, "message", name)), template_error::Kind::raised);
  }
  if (name == "range") {
    if (!a.kw.empty()) fail("range() takes no keyword arguments");
    if (a.pos.empty() || a.pos.size() > 3) fail("range expected 1 to 3 arguments");
    std::int64_t v[3] = {0, 0, 1};
    for (std::size_t i = 0; i < a.pos.size(); ++i)
      v[a.pos.size() == 1 ? 1 : i] = detail::int_arg(a.pos[i], "range");
    if (v[2] == 0) fail("range() arg 3 must not be zero");
    std::vector<Value> out;
    const std::int64_t n =
        v[2] > 0 ? (v[1] - v[0] + v[2] - 1) / v[2] : (v[0] - v[1] - v[2] - 1) / -v[2];
    // The sandbox's own bound (jinja2.sandbox.MAX_RANGE), so the same templates are refused.
    if (n > 100000)
      fail("Range too big. The sandbox blocks ranges larger than MAX_RANGE (100000).");
    rt.charge(n > 0 ? static_cast<std::size_t>(n) : 0);
    for (std::int64_t i = 0; i < n; ++i) out.emplace_back(v[0] + i * v[2]);
    return make_list(std::move(out));
  }
  if (name == "namespace" || name == "dict") {
    Value d = make_dict({}, name == "namespace");
    if (a.pos.size() > 1) fail(name + "() takes at most 1 positional argument");
    if (!a.pos.empty()) {
      if (!a.pos[0].is_dict()) fail(name + "(): the positional argument must be a mapping");
      for (const auto& [k, v] : a.pos[0].dict().items) d.dict().set(k, v);
    }
    for (const auto& [k, v] : a.kw) d.dict().set(k, v);
    return d;
  }
  // strftime_now(format): the local time, as transformers' datetime.now().strftime does.
  a.check(1, {}, name);
  const Value fmt = a.need(0, "format", name);
  if (!fmt.is_string()) fail("strftime() argument 1 must be str, not " + type_name(fmt));
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  localtime_r(&now, &tm);
  std::string buf(256 + fmt.str().size() * 8, '\0');
  const std::size_t n =
      fmt.str().empty() ? 0 : std::strftime(buf.data(), buf.size(), fmt.str().c_str(), &tm);
  buf.resize(n);
  return Value(std::move(buf));
}

/// One render of one template.
class Evaluator final : public Runtime {
 public:
  Evaluator(const std::string& name, const TemplateLimits& limits, const Dict& context)
      : Runtime(ops()),
        name_(name),
        limits_(limits),
        context_(context),
        deadline_(std::chrono::steady_clock::now() + limits.max_render_time) {}
  Evaluator(const Evaluator&) = delete;
  Evaluator& operator=(const Evaluator&) = delete;
  /// Empties every namespace the render assigned to: one may hold itself (`set ns.me = [ns]`,
  /// or two holding each other), a cycle of shared pointers Python's collector would free and
  /// reference counts never do. Nothing of the render outlives it (it returns text).
  ~Evaluator() {
    for (const DictPtr& ns : assigned_namespaces_) ns->items.clear();
  }

  /// Renders `body`; throws template_error.
  std::string render(const Body& body) {
    std::string out;
    try {
      auto root = std::make_shared<Scope>();
      exec(body, root, out);
    } catch (const Failure& f) {
      if (f.kind == template_error::Kind::raised) throw template_error(f.kind, name_, f.message);
      throw template_error(f.kind, name_, "line " + std::to_string(line_) + ": " + f.message);
    }
    return out;
  }

  // --- Runtime ----------------------------------------------------------------------------
  Value call(const Value& callee, const Args& args) {
    if (callee.is_undefined()) undefined_error(callee);
    if (!callee.is_callable()) fail("'" + type_name(callee) + "' object is not callable");
    return std::get<CallablePtr>(callee.v)->call(*this, args);
  }
  Value filter(std::string_view name, const Value& input, const Args& args) {
    return run_filter(*this, name, input, args);
  }
  bool test(std::string_view name, const Value& input, const Args& args) {
    if (!is_known_test(name)) fail("No test named '" + std::string(name) + "'.");
    return run_test(name, input, args);
  }
  void charge(std::size_t n) {
    // Saturating: a huge count (a repetition's) must not wrap the total back under the limit.
    constexpr std::size_t kMax = std::numeric_limits<std::size_t>::max();
    iterations_ = n > kMax - iterations_ ? kMax : iterations_ + n;
    if (iterations_ > limits_.max_loop_iterations)
      fail("more than " + std::to_string(limits_.max_loop_iterations) +
               " loop iterations (TemplateLimits::max_loop_iterations)",
           template_error::Kind::limit);
    check_clock();
  }
  void check_size(std::size_t bytes) {
    if (bytes > limits_.max_output_bytes)
      fail("a string of " + std::to_string(bytes) + " bytes exceeds the limit of " +
               std::to_string(limits_.max_output_bytes) + " (TemplateLimits::max_output_bytes)",
           template_error::Kind::limit);
  }

  /// The Runtime functions above, as the table Runtime calls through.
  static const Ops& ops() {
    static constexpr Ops kOps{
        [](Runtime& rt, const Value& callee, const Args& args) {
          return static_cast<Evaluator&>(rt).call(callee, args);
        },
        [](Runtime& rt, std::string_view name, const Value& input, const Args& args) {
          return static_cast<Evaluator&>(rt).filter(name, input, args);
        },
        [](Runtime& rt, std::string_view name, const Value& input, const Args& args) {
          return static_cast<Evaluator&>(rt).test(name, input, args);
        },
        [](Runtime& rt, std::size_t n) { static_cast<Evaluator&>(rt).charge(n); },
        [](Runtime& rt, std::size_t bytes) { static_cast<Evaluator&>(rt).check_size(bytes); },
    };
    return kOps;
  }

  // --- macros -------------------------------------------------------------------------------
  Value call_macro(const Macro& m, const Args& args) {
    if (++call_depth_ > limits_.max_call_depth) {
      fail("macro calls nested deeper than " + std::to_string(limits_.max_call_depth) +
               " (TemplateLimits::max_call_depth)",
           template_error::Kind::limit);
    }
    struct Leave {
      int& d;
      ~Leave() { --d; }
    } leave{call_depth_};
    check_clock();
    const int saved_line = line_;
    auto scope = std::make_shared<Scope>();
    scope->parent = m.closure.lock();
    if (!scope->parent) fail("a macro was called after the scope that defined it ended");
    const Stmt& def = *m.def;
    std::vector<Value> varargs;
    for (std::size_t i = 0; i < args.pos.size(); ++i) {
      if (i < def.params.size())
        scope->set(def.params[i].name, args.pos[i]);
      else
        varargs.push_back(args.pos[i]);
    }
    std::vector<std::pair<std::string, Value>> extra;
    for (const auto& [k, v] : args.kw) {
      bool is_param = false;
      for (const Param& p : def.params) is_param = is_param || p.name == k;
      if (is_param || k == "caller")
        scope->set(k, v);
      else
        extra.emplace_back(k, v);
    }
    for (std::size_t i = 0; i < def.params.size(); ++i) {
      const Param& p = def.params[i];
      bool given = i < args.pos.size();
      for (const auto& [k, v] : args.kw) given = given || k == p.name;
      if (given) continue;
      scope->set(p.name, p.default_value
                             ? eval(*p.default_value, scope)
                             : Value(Undefined{"parameter '" + p.name + "' was not provided"}));
    }
    scope->set("varargs", make_list(std::move(varargs), true));
    scope->set("kwargs", make_dict(std::move(extra)));
    std::string out;
    exec(def.body, scope, out);
    line_ = saved_line;
    return Value(std::move(out));
  }

 private:
  enum class Flow { normal, break_, continue_ };

  void check_clock() {
    if ((++ticks_ & 255) == 0 && std::chrono::steady_clock::now() > deadline_)
      fail("rendering took longer than " + std::to_string(limits_.max_render_time.count()) +
               " ms (TemplateLimits::max_render_time)",
           template_error::Kind::limit);
  }

  void emit(std::string& out, const Value& v) {
    append_str(out, v);
    check_size(out.size());
  }

  Flow exec(const Body& body, const ScopePtr& scope, std::string& out) {
    for (const StmtPtr& sp : body) {
      const Stmt& s = *sp;
      if (s.line) line_ = s.line;
      switch (s.kind) {
        case StmtKind::text:
          out += s.text;
          check_size(out.size());
          break;
        case StmtKind::output:
          emit(out, eval(*s.expr, scope));
          break;
        case StmtKind::if_: {
          const Body* chosen = &s.else_body;
          for (const auto& [cond, b] : s.branches) {
            if (truthy(eval(*cond, scope))) {
              chosen = &b;
              break;
            }
          }
          const Flow f = exec(*chosen, scope, out);
          if (f != Flow::normal) return f;
          break;
        }
        case StmtKind::for_:
          exec_for(s, scope, out);
          break;
        case StmtKind::set: {
          Value v = eval(*s.expr, scope);
          if (!s.text.empty()) {
            const Value* ns = scope->find(s.targets[0]);
            if (!ns) ns = find_global(s.targets[0]);
            if (!ns || !ns->is_dict() || !ns->dict().ns)
              fail("cannot assign attribute on non-namespace object");
            const DictPtr& target = std::get<DictPtr>(ns->v);
            assigned_namespaces_.insert(target);
            target->set(s.text, std::move(v));
          } else {
            assign(s.targets, std::move(v), *scope);
          }
          break;
        }
        case StmtKind::block_set: {
          std::string text;
          auto inner = std::make_shared<Scope>();
          inner->parent = scope;
          exec(s.body, inner, text);
          Value v(std::move(text));
          for (const ExprPtr& f : s.filters) v = apply_filter(*f, std::move(v), scope);
          scope->set(s.targets[0], std::move(v));
          break;
        }
        case StmtKind::macro:
          scope->set(s.text, Value(CallablePtr(std::make_shared<Macro>(&s, scope, this))));
          break;
        case StmtKind::call_block: {
          const Value caller(CallablePtr(std::make_shared<Macro>(&s, scope, this)));
          const Expr& c = *s.expr;
          Args args = eval_args(c, scope, 1);
          args.kw.emplace_back("caller", caller);
          emit(out, call(eval(*c.args[0], scope), args));
          break;
        }
        case StmtKind::filter: {
          std::string text;
          exec(s.body, scope, text);
          Value v(std::move(text));
          for (const ExprPtr& f : s.filters) v = apply_filter(*f, std::move(v), scope);
          emit(out, v);
          break;
        }
        case StmtKind::scope: {
          auto inner = std::make_shared<Scope>();
          inner->parent = scope;
          std::string text;
          exec(s.body, inner, text);
          out += text;
          check_size(out.size());
          break;
        }
        case StmtKind::break_:
          return Flow::break_;
        case StmtKind::continue_:
          return Flow::continue_;
      }
    }
    return Flow::normal;
  }

  void assign(const std::vector<std::string>& targets, Value v, Scope& scope) {
    if (targets.size() == 1) {
      scope.set(targets[0], std::move(v));
      return;
    }
    const std::vector<Value> parts = iterate(v);
    if (parts.size() != targets.size())
      fail(parts.size() > targets.size()
               ? "too many values to unpack (expected " + std::to_string(targets.size()) + ")"
               : "not enough values to unpack (expected " + std::to_string(targets.size()) +
                     ", got " + std::to_string(parts.size()) + ")");
    for (std::size_t i = 0; i < targets.size(); ++i) scope.set(targets[i], parts[i]);
  }

  void exec_for(const Stmt& s, const ScopePtr& scope, std::string& out) {
    if (s.recursive) fail("recursive for loops are not supported by baton");
    std::vector<Value> all = iterate(eval(*s.expr, scope));
    charge(all.size());
    if (s.cond) {
      // The loop's filter sees the target, not `loop`; `loop.length` counts what passes.
      std::vector<Value> kept;
      for (Value& v : all) {
        auto probe = std::make_shared<Scope>();
        probe->parent = scope;
        assign(s.targets, v, *probe);
        if (truthy(eval(*s.cond, probe))) kept.push_back(std::move(v));
      }
      all = std::move(kept);
    }
    if (all.empty()) {
      exec(s.else_body, scope, out);
      return;
    }
    auto info = std::make_shared<LoopInfo>();
    info->items = std::make_shared<const std::vector<Value>>(std::move(all));
    const Value loop(info);
    for (std::size_t i = 0; i < info->items->size(); ++i) {
      info->index0 = i;
      check_clock();
      auto iter = std::make_shared<Scope>();
      iter->parent = scope;
      iter->vars.reserve(s.targets.size() + 1);
      assign(s.targets, (*info->items)[i], *iter);
      iter->set("loop", loop);
      if (exec(s.body, iter, out) == Flow::break_) break;
    }
  }

  const Value* find_global(std::string_view name) const {
    if (const Value* v = context_.find(name)) return v;
    return builtin_global(name);
  }

  Value lookup(const std::string& name, const ScopePtr& scope) const {
    if (const Value* v = scope->find(name)) return *v;
    if (const Value* v = find_global(name)) return *v;
    return Value(Undefined{"'" + name + "' is undefined"});
  }

  Args eval_args(const Expr& e, const ScopePtr& scope, std::size_t first) {
    Args a;
    a.pos.reserve(e.args.size() - first);
    for (std::size_t i = first; i < e.args.size(); ++i) a.pos.push_back(eval(*e.args[i], scope));
    for (const auto& [k, v] : e.kwargs) a.kw.emplace_back(k, eval(*v, scope));
    return a;
  }

  Value apply_filter(const Expr& f, Value input, const ScopePtr& scope) {
    if (f.unknown) fail("No filter named '" + f.name + "' found.");
    return run_filter(*this, f.name, input, eval_args(f, scope, 1));
  }

  Value eval(const Expr& e, const ScopePtr& scope) {
    switch (e.kind) {
      case ExprKind::constant:
        return e.value;
      case ExprKind::name:
        return lookup(e.name, scope);
      case ExprKind::getattr:
        return get_attr(eval(*e.args[0], scope), e.name);
      case ExprKind::getitem:
        return get_item(eval(*e.args[0], scope), eval(*e.args[1], scope));
      case ExprKind::slice: {
        const auto part = [&](const ExprPtr& p) { return p ? eval(*p, scope) : Value(None{}); };
        return get_slice(eval(*e.args[0], scope), part(e.args[1]), part(e.args[2]),
                         part(e.args[3]));
      }
      case ExprKind::call: {
        const Value callee = eval(*e.args[0], scope);
        return call(callee, eval_args(e, scope, 1));
      }
      case ExprKind::filter:
        return apply_filter(e, eval(*e.args[0], scope), scope);
      case ExprKind::test: {
        if (e.unknown) fail("No test named '" + e.name + "' found.");
        const bool r = run_test(e.name, eval(*e.args[0], scope), eval_args(e, scope, 1));
        return Value(r != e.negated);
      }
      case ExprKind::neg:
      case ExprKind::pos: {
        const Value x = eval(*e.args[0], scope);
        if (x.is_undefined()) undefined_error(x);
        if (x.is_bool())
          return Value(
              static_cast<std::int64_t>(e.kind == ExprKind::neg ? -int{x.boolean()} : x.boolean()));
        if (x.is_int()) return e.kind == ExprKind::neg ? Value(-x.integer()) : x;
        if (x.is_float()) return e.kind == ExprKind::neg ? Value(-x.real()) : x;
        fail("bad operand type for unary " + std::string(e.kind == ExprKind::neg ? "-" : "+") +
             ": '" + type_name(x) + "'");
      }
      case ExprKind::not_:
        return Value(!truthy(eval(*e.args[0], scope)));
      case ExprKind::and_: {
        Value a = eval(*e.args[0], scope);
        return truthy(a) ? eval(*e.args[1], scope) : a;
      }
      case ExprKind::or_: {
        Value a = eval(*e.args[0], scope);
        return truthy(a) ? a : eval(*e.args[1], scope);
      }
      case ExprKind::binary:
        return binary_op(e.name, eval(*e.args[0], scope), eval(*e.args[1], scope), *this);
      case ExprKind::compare: {
        Value left = eval(*e.args[0], scope);
        for (std::size_t i = 0; i < e.ops.size(); ++i) {
          Value right = eval(*e.args[i + 1], scope);
          if (!compare(left, right, e.ops[i])) return Value(false);
          left = std::move(right);
        }
        return Value(true);
      }
      case ExprKind::cond: {
        if (truthy(eval(*e.args[0], scope))) return eval(*e.args[1], scope);
        if (e.args[2]) return eval(*e.args[2], scope);
        return Value(Undefined{"the inline if-expression on line " + std::to_string(e.line) +
                               " evaluated to false and no else section was defined."});
      }
      case ExprKind::list:
      case ExprKind::tuple: {
        std::vector<Value> items;
        items.reserve(e.args.size());
        for (const ExprPtr& a : e.args) items.push_back(eval(*a, scope));
        return make_list(std::move(items), e.kind == ExprKind::tuple);
      }
      case ExprKind::dict: {
        Value d = make_dict();
        for (std::size_t i = 0; i + 1 < e.args.size(); i += 2) {
          const Value k = eval(*e.args[i], scope);
          d.dict().set(key_string(k), eval(*e.args[i + 1], scope));
        }
        return d;
      }
    }
    fail("unknown expression");
  }

  const std::string& name_;
  const TemplateLimits& limits_;
  const Dict& context_;
  std::chrono::steady_clock::time_point deadline_;
  std::size_t iterations_ = 0;
  std::size_t ticks_ = 0;
  int call_depth_ = 0;
  int line_ = 0;
  std::unordered_set<DictPtr> assigned_namespaces_;  ///< emptied at the end (see ~Evaluator)
};

inline Value Macro::run(Callable& self, Runtime&, const Args& args) {
  const Macro& m = static_cast<const Macro&>(self);
  return m.ev->call_macro(m, args);
}

}  // namespace baton::jinja
