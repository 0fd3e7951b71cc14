// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief Tokens to a statement tree, following jinja2's grammar (its parser.py) rule for rule,
/// so operator precedence and what `is`, `if` and `|` bind to come out the same. Names of
/// filters and tests are checked here, as jinja2 checks them when compiling: a template that
/// names an unknown filter is refused before rendering even if that line never runs.
#pragma once

#include <functional>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "baton/text/jinja/ast.hpp"
#include "baton/text/jinja/lexer.hpp"

namespace baton::jinja {

/// Bounds on what parsing accepts: nesting deeper than this is refused (the parser recurses).
struct ParseLimits {
  int max_nesting = 200;
};

class Parser {
 public:
  using NameCheck = std::function<bool(std::string_view)>;

  Parser(std::vector<Token> tokens, std::string name, NameCheck is_filter, NameCheck is_test,
         ParseLimits limits = {})
      : toks_(std::move(tokens)),
        name_(std::move(name)),
        is_filter_(std::move(is_filter)),
        is_test_(std::move(is_test)),
        limits_(limits) {}

  Body parse_template() {
    std::string end;
    Body body = parse_body({}, end);
    check_names(body, false);
    return body;
  }

 private:
  // --- token stream ---------------------------------------------------------------------
  const Token& cur() const { return toks_[pos_]; }
  const Token& peek(std::size_t k = 1) const { return toks_[std::min(pos_ + k, toks_.size() - 1)]; }
  Token next() { return toks_[pos_ < toks_.size() - 1 ? pos_++ : pos_]; }
  bool is_op(std::string_view op) const { return cur().type == Tok::op && cur().text == op; }
  bool is_name(std::string_view n) const { return cur().type == Tok::name && cur().text == n; }
  bool skip_op(std::string_view op) {
    if (!is_op(op)) return false;
    ++pos_;
    return true;
  }
  bool skip_name(std::string_view n) {
    if (!is_name(n)) return false;
    ++pos_;
    return true;
  }
  [[noreturn]] void fail(const std::string& msg) const {
    throw template_error(template_error::Kind::syntax, name_,
                         "line " + std::to_string(cur().line) + ": " + msg);
  }
  std::string describe(const Token& t) const {
    switch (t.type) {
      case Tok::eof:
        return "end of template";
      case Tok::block_end:
        return "end of statement block";
      case Tok::var_end:
        return "end of print statement";
      case Tok::name:
        return "'" + t.text + "'";
      case Tok::op:
        return "'" + t.text + "'";
      default:
        return "a literal";
    }
  }
  void expect_op(std::string_view op) {
    if (!skip_op(op)) fail("expected '" + std::string(op) + "', got " + describe(cur()));
  }
  std::string expect_name() {
    if (cur().type != Tok::name) fail("expected a name, got " + describe(cur()));
    return next().text;
  }
  void expect_block_end() {
    if (cur().type != Tok::block_end)
      fail("expected the end of the statement block, got " + describe(cur()));
    ++pos_;
  }

  struct Depth {
    explicit Depth(Parser& p) : p_(p) {
      if (++p_.depth_ > p_.limits_.max_nesting)
        p_.fail("nesting deeper than the limit of " + std::to_string(p_.limits_.max_nesting) +
                " (ParseLimits::max_nesting)");
    }
    ~Depth() { --p_.depth_; }
    Parser& p_;
  };

  static ExprPtr node(ExprKind k, int line) {
    auto e = std::make_unique<Expr>();
    e->kind = k;
    e->line = line;
    return e;
  }

  // --- statements -------------------------------------------------------------------------

  /// Statements up to a block tag named in `ends` (consumed up to and including that name);
  /// `found` says which. With no `ends`, up to the end of the template.
  Body parse_body(std::initializer_list<std::string_view> ends, std::string& found) {
    Depth depth(*this);
    Body body;
    for (;;) {
      const Token& t = cur();
      if (t.type == Tok::eof) {
        if (ends.size() == 0) return body;
        std::string want;
        for (auto e : ends) want += (want.empty() ? "'" : " or '") + std::string(e) + "'";
        fail("unexpected end of template; looking for " + want);
      }
      if (t.type == Tok::data) {
        auto s = std::make_unique<Stmt>();
        s->kind = StmtKind::text;
        s->text = next().text;
        body.push_back(std::move(s));
      } else if (t.type == Tok::var_begin) {
        ++pos_;
        auto s = std::make_unique<Stmt>();
        s->kind = StmtKind::output;
        s->line = cur().line;
        s->expr = parse_tuple(true);
        if (cur().type != Tok::var_end) fail("expected '}}', got " + describe(cur()));
        ++pos_;
        body.push_back(std::move(s));
      } else if (t.type == Tok::block_begin) {
        const Token& tag = peek();
        if (tag.type != Tok::name) {
          ++pos_;
          fail("a block tag must start with a name, got " + describe(cur()));
        }
        for (auto e : ends) {
          if (tag.text == e) {
            pos_ += 2;
            found = tag.text;
            return body;
          }
        }
        ++pos_;
        body.push_back(parse_statement());
      } else {
        fail("unexpected " + describe(t));
      }
    }
  }

  StmtPtr parse_statement() {
    const int line = cur().line;
    const std::string tag = expect_name();
    auto s = std::make_unique<Stmt>();
    s->line = line;
    std::string end;
    if (tag == "if") {
      s->kind = StmtKind::if_;
      for (;;) {
        ExprPtr c = parse_tuple(false);
        expect_block_end();
        Body b = parse_body({"elif", "else", "endif"}, end);
        s->branches.emplace_back(std::move(c), std::move(b));
        if (end == "elif") continue;
        if (end == "else") {
          expect_block_end();
          s->else_body = parse_body({"endif"}, end);
        }
        break;
      }
    } else if (tag == "for") {
      s->kind = StmtKind::for_;
      s->targets = parse_targets();
      if (!skip_name("in")) fail("expected 'in' in a for loop, got " + describe(cur()));
      s->expr = parse_tuple(false, true);
      if (skip_name("if")) s->cond = parse_expression(true);
      s->recursive = skip_name("recursive");
      expect_block_end();
      ++loops_;
      s->body = parse_body({"endfor", "else"}, end);
      --loops_;
      if (end == "else") {
        expect_block_end();
        s->else_body = parse_body({"endfor"}, end);
      }
    } else if (tag == "set") {
      if (cur().type == Tok::name && peek().type == Tok::op && peek().text == ".") {
        s->kind = StmtKind::set;
        s->targets = {next().text};
        ++pos_;
        s->text = expect_name();
        expect_op("=");
        s->expr = parse_tuple(true);
      } else {
        s->targets = parse_targets();
        if (skip_op("=")) {
          s->kind = StmtKind::set;
          s->expr = parse_tuple(true);
        } else {
          s->kind = StmtKind::block_set;
          if (s->targets.size() != 1) fail("a block set assigns one name");
          while (skip_op("|")) s->filters.push_back(parse_filter(nullptr));
          expect_block_end();
          s->body = parse_body({"endset"}, end);
        }
      }
    } else if (tag == "macro") {
      s->kind = StmtKind::macro;
      s->text = expect_name();
      s->params = parse_params();
      expect_block_end();
      const int saved = loops_;
      loops_ = 0;  // break/continue do not reach through a macro into a caller's loop
      s->body = parse_body({"endmacro"}, end);
      loops_ = saved;
    } else if (tag == "call") {
      s->kind = StmtKind::call_block;
      if (is_op("(")) s->params = parse_params();
      s->expr = parse_expression(true);
      if (s->expr->kind != ExprKind::call) fail("expected a call after 'call'");
      expect_block_end();
      s->body = parse_body({"endcall"}, end);
    } else if (tag == "filter") {
      s->kind = StmtKind::filter;
      do {
        s->filters.push_back(parse_filter(nullptr));
      } while (skip_op("|"));
      expect_block_end();
      s->body = parse_body({"endfilter"}, end);
    } else if (tag == "generation") {
      s->kind = StmtKind::scope;
      expect_block_end();
      s->body = parse_body({"endgeneration"}, end);
    } else if (tag == "break" || tag == "continue") {
      if (loops_ == 0) fail("'" + tag + "' outside a loop");
      s->kind = tag == "break" ? StmtKind::break_ : StmtKind::continue_;
    } else {
      --pos_;
      fail("encountered unknown tag '" + tag + "'");
    }
    expect_block_end();
    return s;
  }

  /// `a` or `a, b` (optionally parenthesised): the names a for loop or a set assigns.
  std::vector<std::string> parse_targets() {
    std::vector<std::string> names;
    const bool paren = skip_op("(");
    do {
      if (paren && is_op(")")) break;
      names.push_back(expect_name());
    } while (skip_op(","));
    if (paren) expect_op(")");
    for (const auto& n : names)
      if (n == "true" || n == "false" || n == "none" || n == "True" || n == "False" || n == "None")
        fail("cannot assign to '" + n + "'");
    return names;
  }

  std::vector<Param> parse_params() {
    std::vector<Param> params;
    expect_op("(");
    while (!is_op(")")) {
      if (!params.empty()) expect_op(",");
      if (is_op(")")) break;
      Param p;
      p.name = expect_name();
      if (skip_op("=")) p.default_value = parse_expression(true);
      params.push_back(std::move(p));
    }
    expect_op(")");
    return params;
  }

  // --- expressions ------------------------------------------------------------------------

  /// An expression, or several separated by commas (a tuple). `for_iter` stops before
  /// `recursive`.
  ExprPtr parse_tuple(bool with_condexpr, bool for_iter = false) {
    const int line = cur().line;
    std::vector<ExprPtr> items;
    bool comma = false;
    for (;;) {
      if (!items.empty()) {
        if (!skip_op(",")) break;
        comma = true;
      }
      if (cur().type == Tok::var_end || cur().type == Tok::block_end || is_op(")") ||
          (for_iter && (is_name("recursive") || is_name("if"))))
        break;
      items.push_back(parse_expression(with_condexpr));
    }
    if (!comma && items.size() == 1) return std::move(items[0]);
    if (items.empty()) fail("expected an expression, got " + describe(cur()));
    auto t = node(ExprKind::tuple, line);
    t->args = std::move(items);
    return t;
  }

  ExprPtr parse_expression(bool with_condexpr) {
    Depth depth(*this);
    return with_condexpr ? parse_condexpr() : parse_or();
  }

  ExprPtr parse_condexpr() {
    const int line = cur().line;
    ExprPtr e = parse_or();
    while (skip_name("if")) {
      auto c = node(ExprKind::cond, line);
      c->args.push_back(parse_or());
      c->args.push_back(std::move(e));
      c->args.push_back(skip_name("else") ? parse_condexpr() : nullptr);
      e = std::move(c);
    }
    return e;
  }

  ExprPtr binary(ExprKind k, ExprPtr a, ExprPtr b, std::string op = {}) {
    auto e = node(k, a->line);
    e->name = std::move(op);
    e->args.push_back(std::move(a));
    e->args.push_back(std::move(b));
    return e;
  }

  ExprPtr parse_or() {
    ExprPtr e = parse_and();
    while (skip_name("or")) e = binary(ExprKind::or_, std::move(e), parse_and());
    return e;
  }
  ExprPtr parse_and() {
    ExprPtr e = parse_not();
    while (skip_name("and")) e = binary(ExprKind::and_, std::move(e), parse_not());
    return e;
  }
  ExprPtr parse_not() {
    if (is_name("not")) {
      const int line = next().line;
      Depth depth(*this);
      auto e = node(ExprKind::not_, line);
      e->args.push_back(parse_not());
      return e;
    }
    return parse_compare();
  }
  ExprPtr parse_compare() {
    ExprPtr first = parse_math1();
    ExprPtr cmp;
    for (;;) {
      std::string op;
      if (cur().type == Tok::op &&
          (cur().text == "==" || cur().text == "!=" || cur().text == "<" || cur().text == ">" ||
           cur().text == "<=" || cur().text == ">=")) {
        op = next().text;
      } else if (skip_name("in")) {
        op = "in";
      } else if (is_name("not") && peek().type == Tok::name && peek().text == "in") {
        pos_ += 2;
        op = "notin";
      } else {
        break;
      }
      if (!cmp) {
        cmp = node(ExprKind::compare, first->line);
        cmp->args.push_back(std::move(first));
      }
      cmp->ops.push_back(op);
      cmp->args.push_back(parse_math1());
    }
    return cmp ? std::move(cmp) : std::move(first);
  }
  ExprPtr parse_math1() {
    ExprPtr e = parse_concat();
    while (is_op("+") || is_op("-")) {
      std::string op = next().text;
      e = binary(ExprKind::binary, std::move(e), parse_concat(), op);
    }
    return e;
  }
  ExprPtr parse_concat() {
    ExprPtr e = parse_math2();
    while (skip_op("~")) e = binary(ExprKind::binary, std::move(e), parse_math2(), "~");
    return e;
  }
  ExprPtr parse_math2() {
    ExprPtr e = parse_pow();
    while (is_op("*") || is_op("/") || is_op("//") || is_op("%")) {
      std::string op = next().text;
      e = binary(ExprKind::binary, std::move(e), parse_pow(), op);
    }
    return e;
  }
  ExprPtr parse_pow() {
    ExprPtr e = parse_unary(true);
    while (skip_op("**")) e = binary(ExprKind::binary, std::move(e), parse_unary(true), "**");
    return e;
  }
  ExprPtr parse_unary(bool with_filter) {
    Depth depth(*this);
    ExprPtr e;
    if (is_op("-") || is_op("+")) {
      const Token t = next();
      e = node(t.text == "-" ? ExprKind::neg : ExprKind::pos, t.line);
      e->args.push_back(parse_unary(false));
    } else {
      e = parse_primary();
    }
    e = parse_postfix(std::move(e));
    if (with_filter) e = parse_filter_expr(std::move(e));
    return e;
  }

  ExprPtr parse_primary() {
    const Token& t = cur();
    const int line = t.line;
    if (t.type == Tok::name) {
      const std::string n = next().text;
      auto e = node(ExprKind::constant, line);
      if (n == "true" || n == "True") {
        e->value = Value(true);
      } else if (n == "false" || n == "False") {
        e->value = Value(false);
      } else if (n == "none" || n == "None") {
        e->value = Value(None{});
      } else {
        e->kind = ExprKind::name;
        e->name = n;
      }
      return e;
    }
    if (t.type == Tok::string) {
      std::string s;
      while (cur().type == Tok::string) s += next().text;  // adjacent literals concatenate
      auto e = node(ExprKind::constant, line);
      e->value = Value(std::move(s));
      return e;
    }
    if (t.type == Tok::integer || t.type == Tok::real) {
      const Token n = next();
      auto e = node(ExprKind::constant, line);
      e->value = n.type == Tok::integer ? Value(n.integer) : Value(n.real);
      return e;
    }
    if (skip_op("(")) {
      if (skip_op(")")) {
        auto e = node(ExprKind::tuple, line);
        return e;
      }
      ExprPtr first = parse_expression(true);
      if (skip_op(")")) return first;
      auto e = node(ExprKind::tuple, line);
      e->args.push_back(std::move(first));
      while (skip_op(",")) {
        if (is_op(")")) break;
        e->args.push_back(parse_expression(true));
      }
      expect_op(")");
      return e;
    }
    if (skip_op("[")) {
      auto e = node(ExprKind::list, line);
      while (!is_op("]")) {
        if (!e->args.empty()) expect_op(",");
        if (is_op("]")) break;
        e->args.push_back(parse_expression(true));
      }
      expect_op("]");
      return e;
    }
    if (skip_op("{")) {
      auto e = node(ExprKind::dict, line);
      while (!is_op("}")) {
        if (!e->args.empty()) expect_op(",");
        if (is_op("}")) break;
        e->args.push_back(parse_expression(true));
        expect_op(":");
        e->args.push_back(parse_expression(true));
      }
      expect_op("}");
      return e;
    }
    fail("unexpected " + describe(t));
  }

  ExprPtr parse_postfix(ExprPtr e) {
    for (;;) {
      const int line = cur().line;
      if (skip_op(".")) {
        if (cur().type == Tok::integer) {
          auto g = node(ExprKind::getitem, line);
          auto k = node(ExprKind::constant, line);
          k->value = Value(next().integer);
          g->args.push_back(std::move(e));
          g->args.push_back(std::move(k));
          e = std::move(g);
        } else {
          auto g = node(ExprKind::getattr, line);
          g->name = expect_name();
          g->args.push_back(std::move(e));
          e = std::move(g);
        }
      } else if (skip_op("[")) {
        e = parse_subscript(std::move(e), line);
      } else if (is_op("(")) {
        e = parse_call(std::move(e));
      } else {
        return e;
      }
    }
  }

  ExprPtr parse_subscript(ExprPtr obj, int line) {
    // [key] or [start:stop:step], any part of a slice may be left out.
    ExprPtr parts[3];
    bool is_slice = false;
    if (!is_op(":")) parts[0] = parse_expression(true);
    if (skip_op(":")) {
      is_slice = true;
      if (!is_op("]") && !is_op(":")) parts[1] = parse_expression(true);
      if (skip_op(":") && !is_op("]")) parts[2] = parse_expression(true);
    }
    expect_op("]");
    auto g = node(is_slice ? ExprKind::slice : ExprKind::getitem, line);
    g->args.push_back(std::move(obj));
    for (int k = 0; k < (is_slice ? 3 : 1); ++k) g->args.push_back(std::move(parts[k]));
    return g;
  }

  void parse_call_args(Expr& e) {
    expect_op("(");
    bool first = true;
    while (!is_op(")")) {
      if (!first) expect_op(",");
      first = false;
      if (is_op(")")) break;
      if (is_op("*") || is_op("**")) fail("*args and **kwargs in calls are not supported");
      if (cur().type == Tok::name && peek().type == Tok::op && peek().text == "=") {
        std::string key = next().text;
        ++pos_;
        e.kwargs.emplace_back(std::move(key), parse_expression(true));
      } else {
        if (!e.kwargs.empty()) fail("a positional argument follows a keyword argument");
        e.args.push_back(parse_expression(true));
      }
    }
    expect_op(")");
  }

  ExprPtr parse_call(ExprPtr callee) {
    auto e = node(ExprKind::call, cur().line);
    e->args.push_back(std::move(callee));
    parse_call_args(*e);
    return e;
  }

  ExprPtr parse_filter_expr(ExprPtr e) {
    for (;;) {
      if (skip_op("|")) {
        e = parse_filter(std::move(e));
      } else if (is_name("is")) {
        e = parse_test(std::move(e));
      } else if (is_op("(")) {
        e = parse_call(std::move(e));
      } else {
        return e;
      }
    }
  }

  std::string dotted_name() {
    std::string n = expect_name();
    while (skip_op(".")) n += "." + expect_name();
    return n;
  }

  /// A filter applied to `input` (null in a block set or filter block: the body is the input).
  ExprPtr parse_filter(ExprPtr input) {
    auto e = node(ExprKind::filter, cur().line);
    e->name = dotted_name();
    e->unknown = !is_filter_(e->name);
    e->args.push_back(std::move(input));
    if (is_op("(")) parse_call_args(*e);
    return e;
  }

  ExprPtr parse_test(ExprPtr input) {
    auto e = node(ExprKind::test, next().line);
    e->negated = skip_name("not");
    e->name = dotted_name();
    e->unknown = !is_test_(e->name);
    e->args.push_back(std::move(input));
    if (is_op("(")) {
      parse_call_args(*e);
    } else if ((cur().type == Tok::name || cur().type == Tok::string ||
                cur().type == Tok::integer || cur().type == Tok::real || is_op("[") ||
                is_op("{")) &&
               !is_name("else") && !is_name("or") && !is_name("and")) {
      if (is_name("is")) fail("tests cannot be chained with 'is'");
      e->args.push_back(parse_postfix(parse_primary()));
    }
    return e;
  }

  // --- names jinja2 checks when compiling ---------------------------------------------------
  // jinja2's compiler refuses an unknown filter or test unless it sits in a "soft" frame: an
  // if statement's test and bodies or an inline if; a for loop, macro, call block, filter
  // block or block set inside those starts a fresh frame that is not soft.

  void check_names(const Expr* e, bool soft) const {
    if (!e) return;
    if (e->kind == ExprKind::cond) soft = true;
    if (e->unknown && !soft)
      throw template_error(template_error::Kind::syntax, name_,
                           "line " + std::to_string(e->line) + ": no " +
                               (e->kind == ExprKind::filter ? "filter" : "test") + " named '" +
                               e->name + "'");
    for (const ExprPtr& a : e->args) check_names(a.get(), soft);
    for (const auto& kv : e->kwargs) check_names(kv.second.get(), soft);
  }

  void check_names(const Body& body, bool soft) const {
    for (const StmtPtr& s : body) {
      switch (s->kind) {
        case StmtKind::if_:
          for (const auto& [c, b] : s->branches) {
            check_names(c.get(), true);
            check_names(b, true);
          }
          check_names(s->else_body, true);
          break;
        case StmtKind::for_:
          check_names(s->expr.get(), soft);
          check_names(s->cond.get(), false);
          check_names(s->body, false);
          check_names(s->else_body, false);
          break;
        default:
          check_names(s->expr.get(), soft);
          for (const Param& p : s->params) check_names(p.default_value.get(), false);
          for (const ExprPtr& f : s->filters) check_names(f.get(), false);
          check_names(s->body, false);
      }
    }
  }

  std::vector<Token> toks_;
  std::size_t pos_ = 0;
  std::string name_;
  NameCheck is_filter_, is_test_;
  ParseLimits limits_;
  int depth_ = 0;
  int loops_ = 0;
};

}  // namespace baton::jinja
