// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief Command-line helpers shared by the subcommands: integer and id-list parsing.
#pragma once

#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "baton/core/error.hpp"  // detail::excerpt: what a message quotes of an argument

namespace baton::cli {

/// A malformed command line: reported with the usage text, exit status 2. Deliberately not a
/// baton::error, which means the command line was fine and the inputs were not (status 1).
struct ArgError {
  std::string message;
};

/// Each option at most once: a repeated flag is an error, not "the last one wins" (which of
/// two --adapter values did the user mean?).
class SeenOptions {
 public:
  void once(std::string_view option) {
    for (const std::string& s : seen_)
      if (s == option) throw ArgError{detail::excerpt(option) + " is given twice"};
    seen_.emplace_back(option);
  }

 private:
  std::vector<std::string> seen_;
};

/// An option's value; an empty one is an error (`--adapter ""` must not mean "no adapter").
inline std::string_view non_empty(std::string_view option, std::string_view value) {
  if (value.empty())
    throw ArgError{detail::excerpt(option) + " needs a value, got an empty string"};
  return value;
}

template <class Int>
Int parse_int(std::string_view text, std::string_view what) {
  Int v{};
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc{} || end != text.data() + text.size()) {
    throw ArgError{std::string(what) + ": '" + detail::excerpt(text) + "' is not an integer" +
                   (ec == std::errc::result_out_of_range ? " in range" : "")};
  }
  return v;
}

/// "1,2,3" → {1, 2, 3}; `what` names the option in errors.
inline std::vector<std::int32_t> parse_ids(std::string_view list, std::string_view what = "--ids") {
  std::vector<std::int32_t> ids;
  std::size_t start = 0;
  for (;;) {
    const std::size_t comma = list.find(',', start);
    const std::string_view item =
        list.substr(start, comma == std::string_view::npos ? list.npos : comma - start);
    if (item.empty())
      throw ArgError{std::string(what) + ": empty entry in '" + detail::excerpt(list) + "'"};
    ids.push_back(parse_int<std::int32_t>(item, what));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return ids;
}

}  // namespace baton::cli
