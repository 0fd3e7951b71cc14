// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief The one exception hierarchy: everything baton throws derives from baton::error.
#pragma once

#include <source_location>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

namespace baton {

/// Base of every exception baton throws. what() is the message alone: the library's source
/// location is appended only in builds defining BATON_ERROR_SOURCE_LOCATION (a debugging aid:
/// a user's message must not carry the build machine's paths).
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

/// How many bytes of a user's string a message quotes at most (kExcerptBytes).
inline constexpr std::size_t kExcerptBytes = 64;

/// `text` as a message quotes it: whole when it has at most `max` bytes, else its first `max`
/// bytes (cut back to a UTF-8 character boundary) and "…(N bytes)" with its full size, so a
/// 1 MB string in a file costs a message 80 bytes, not 1 MB, and still says how long it was.
inline std::string excerpt(std::string_view text, std::size_t max = kExcerptBytes) {
  if (text.size() <= max) return std::string(text);
  std::size_t cut = max;
  // Back off continuation bytes (10xxxxxx) so no character is split.
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xc0) == 0x80) --cut;
  return concat(text.substr(0, cut), "\xE2\x80\xA6(", text.size(), " bytes)");
}
}  // namespace detail

/// Throws E with the message parts streamed together (and, in builds defining
/// BATON_ERROR_SOURCE_LOCATION, the baton source location appended), e.g.
/// `fail_at<shape_error>(loc, "tensor ", name, " has shape ", ...)`. Parts that quote input
/// go through detail::excerpt.
template <class E, class... Parts>
[[noreturn]] void fail_at([[maybe_unused]] const std::source_location& where,
                          const Parts&... parts) {
  static_assert(std::is_base_of_v<error, E>, "baton throws only baton::error subclasses");
#if defined(BATON_ERROR_SOURCE_LOCATION)
  throw E(detail::concat(parts..., " [", where.file_name(), ":", where.line(), "]"));
#else
  throw E(detail::concat(parts...));
#endif
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
