// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// EXPECT_ERROR(type, expr, "part", ...): `expr` must throw `type` (or a subclass), and the
// message must contain every part. Shared by the loader and parser tests.
#pragma once

#include <doctest/doctest.h>

#include <exception>
#include <functional>
#include <initializer_list>
#include <string>
#include <string_view>

namespace baton::test {

/// Runs `f`, requires it to throw E, and requires every part in the message. Returns the
/// message for further checks.
template <class E>
std::string expect_error(const std::function<void()>& f,
                         std::initializer_list<std::string_view> parts) {
  std::string msg;
  bool caught = false;
  try {
    f();
  } catch (const E& e) {
    caught = true;
    msg = e.what();
  } catch (const std::exception& e) {
    FAIL_CHECK("wrong exception type; message: " << e.what());
    return {};
  }
  if (!caught) {
    FAIL_CHECK("no exception thrown");
    return {};
  }
  for (const std::string_view p : parts) {
    CHECK_MESSAGE(msg.find(p) != std::string::npos, "message lacks '" << p << "': " << msg);
  }
  return msg;
}

}  // namespace baton::test

// INFO names the failing expression (the helper's own line is not the caller's).
#define EXPECT_ERROR(type, expr, ...)                                        \
  do {                                                                       \
    INFO("line " << __LINE__ << ": " #expr);                                 \
    ::baton::test::expect_error<type>([&] { (void)(expr); }, {__VA_ARGS__}); \
  } while (0)

// EXPECT_ERROR as an expression: the message, for further checks (its length, what it lacks).
#define ERROR_MESSAGE(type, expr, ...) \
  ::baton::test::expect_error<type>([&] { (void)(expr); }, {__VA_ARGS__})
