// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief What a chat template throws: every message starts with the template's name.
#pragma once

#include <string>

#include "baton/core/error.hpp"

namespace baton {

/// A chat template failed: it does not parse, it raised (`raise_exception`, an undefined
/// value used, an operation the sandbox forbids), or it ran past a limit. what() is
/// "<template name>: <message>"; `message()` is the message alone, e.g. the text a template
/// gave raise_exception.
class template_error : public error {
 public:
  enum class Kind {
    syntax,   ///< the template does not parse (jinja2 refuses it before rendering)
    raised,   ///< the template called raise_exception(message)
    runtime,  ///< an operation failed while rendering (undefined value, type, sandbox)
    limit,    ///< a TemplateLimits bound was reached
  };
  template_error(Kind kind, const std::string& name, const std::string& message)
      : error(name + ": " + message), kind_(kind), message_(message) {}
  Kind kind() const { return kind_; }
  const std::string& message() const { return message_; }

 private:
  Kind kind_;
  std::string message_;
};

namespace jinja {

/// What rendering throws internally before the evaluator adds the template's name (and
/// turns it into a template_error): a value-level operation does not know which template
/// runs it. Never escapes ChatTemplate.
struct Failure {
  template_error::Kind kind;
  std::string message;
};

[[noreturn]] inline void fail(std::string message,
                              template_error::Kind kind = template_error::Kind::runtime) {
  throw Failure{kind, std::move(message)};
}

}  // namespace jinja
}  // namespace baton
