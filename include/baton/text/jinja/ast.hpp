// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief The parsed template: expression and statement nodes, the shapes of jinja2's nodes
/// that chat templates use.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "baton/text/jinja/value.hpp"

namespace baton::jinja {

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

enum class ExprKind : std::uint8_t {
  constant,  ///< value
  name,      ///< name
  getattr,   ///< args[0].name
  getitem,   ///< args[0][args[1]]
  slice,     ///< args[0][args[1]:args[2]:args[3]] (null parts absent)
  call,      ///< args[0](args[1..], kwargs)
  filter,    ///< args[0] | name(args[1..], kwargs)
  test,      ///< args[0] is [not] name(args[1..], kwargs)
  neg,       ///< -args[0]
  pos,       ///< +args[0]
  not_,      ///< not args[0]
  and_,      ///< args[0] and args[1]
  or_,       ///< args[0] or args[1]
  binary,    ///< args[0] <name> args[1]: + - * / // % ** ~
  compare,   ///< args[0] ops[0] args[1] ops[1] args[2] ...
  cond,      ///< args[1] if args[0] else args[2] (args[2] may be null)
  list,      ///< [args...]
  tuple,     ///< (args...)
  dict,      ///< {args[0]: args[1], ...}
};

struct Expr {
  ExprKind kind;
  int line = 0;
  Value value;                ///< constant
  std::string name;           ///< name, attribute, filter, test or operator
  std::vector<ExprPtr> args;  ///< operands (see ExprKind)
  std::vector<std::pair<std::string, ExprPtr>> kwargs;
  std::vector<std::string> ops;  ///< compare: the operators between operands
  bool negated = false;          ///< test: `is not`
  /// filter/test: jinja2 has no such name. Inside an `if` or an inline if, jinja2 defers the
  /// error to when it runs; elsewhere the template is refused (see check_names).
  bool unknown = false;
};

struct Stmt;
using StmtPtr = std::unique_ptr<Stmt>;
using Body = std::vector<StmtPtr>;

enum class StmtKind : std::uint8_t {
  text,        ///< text
  output,      ///< {{ expr }}
  if_,         ///< branches; else_body
  for_,        ///< targets in expr [if cond]: body, else_body
  set,         ///< targets = expr, or ns.attr = expr (attr set)
  block_set,   ///< {% set targets[0] %}body{% endset %}, then filters
  macro,       ///< name(params) body
  call_block,  ///< {% call expr %}body{% endcall %}: body is the macro `caller`
  filter,      ///< {% filter f %}body{% endfilter %}
  scope,       ///< {% generation %}body: rendered in its own scope, as a call block is
  break_,
  continue_,
};

struct Param {
  std::string name;
  ExprPtr default_value;  ///< null when required
};

struct Stmt {
  StmtKind kind;
  int line = 0;
  std::string text;                                ///< text; macro name; set: attr
  ExprPtr expr;                                    ///< output, for's iterable, set's value
  ExprPtr cond;                                    ///< for's filter
  std::vector<std::string> targets;                ///< for/set names (set: ns when attr)
  std::vector<std::pair<ExprPtr, Body>> branches;  ///< if/elif
  Body body, else_body;
  std::vector<Param> params;     ///< macro, call block
  std::vector<ExprPtr> filters;  ///< block set / filter block: filter nodes
  bool recursive = false;        ///< for ... recursive
};

}  // namespace baton::jinja
