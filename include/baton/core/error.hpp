// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief The one exception hierarchy: everything baton throws derives from baton::error.
#pragma once

#include <source_location>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

namespace baton {

/// Base of every exception baton throws. what() ends with the library source location.
class error : public std::runtime_error {
 public:
  explicit error(const std::string& message) : std::runtime_error(message) {}
};

/// A file (safetensors, config.json, adapter, tokenizer.json, relay JSON) is malformed.
class format_error : public error {
  using error::error;
};
/// A well-formed configuration asks for something baton does not support or that is
/// internally inconsistent (unknown architecture, unsupported option, bad sizes).
class config_error : public error {
  using error::error;
};
/// Tensor shapes or dtypes disagree with what the model/adapter requires.
class shape_error : public error {
  using error::error;
};
/// A KV write would not land at the slot's write position (the cache-counter lesson).
class position_error : public error {
  using error::error;
};
/// A prefix, prompt or append does not fit in the KV capacity.
class capacity_error : public error {
  using error::error;
};
/// A token id, argument or call sequence is invalid (id >= vocab, cold stage, ...).
class usage_error : public error {
  using error::error;
};
/// A relay's wiring is invalid (a stage reads a later stage, an unknown name, ...).
class wiring_error : public error {
  using error::error;
};
/// Tokenizer input or tokenizer.json content that baton cannot handle.
class tokenizer_error : public error {
  using error::error;
};
/// A grammar (regex or JSON Schema) outside the supported subset, or one that cannot be
/// compiled against a vocabulary (too large, matches nothing, unspellable by the tokens).
class grammar_error : public error {
  using error::error;
};
/// A computation produced a non-finite value (NaN or infinite logits: non-finite weights,
/// or an overflow), so no token can be chosen from it.
class numeric_error : public error {
  using error::error;
};
/// A CUDA or cuBLAS call failed.
class device_error : public error {
  using error::error;
};
/// An operating-system call failed (open, mmap, read).
class io_error : public error {
  using error::error;
};

namespace detail {
template <class... Parts>
std::string concat(const Parts&... parts) {
  std::ostringstream out;
  (out << ... << parts);
  return out.str();
}
}  // namespace detail

/// Throws E with the message parts streamed together and the baton source location
/// appended, e.g. `fail<shape_error>(loc, "tensor ", name, " has shape ", ...)`.
template <class E, class... Parts>
[[noreturn]] void fail_at(const std::source_location& where, const Parts&... parts) {
  static_assert(std::is_base_of_v<error, E>, "baton throws only baton::error subclasses");
  throw E(detail::concat(parts..., " [", where.file_name(), ":", where.line(), "]"));
}

}  // namespace baton

/// Throws `type` (a baton::error subclass) built from the streamed message parts.
#define BATON_FAIL(type, ...) ::baton::fail_at<type>(std::source_location::current(), __VA_ARGS__)

/// Checks a run-time condition always (not only in debug builds) and throws `type` if false.
#define BATON_CHECK(cond, type, ...) \
  do {                               \
    if (!(cond)) [[unlikely]]        \
      BATON_FAIL(type, __VA_ARGS__); \
  } while (0)
