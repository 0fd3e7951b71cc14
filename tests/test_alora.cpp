// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// Activated LoRA's gate (lora/activation.hpp), by hand from PEFT's rule: the activation start is
// where the last whole occurrence of the invocation begins (the invocation adapted, every token
// before it not), none without an occurrence; and which of a forward's tokens that adapts. The
// end-to-end check against PEFT itself is test_grid_hf / hf_compare_models (the alora-all-r8
// cases of tests/reference/hf_models.py).
//
// Mutation checks (2026-12-04), each alone, this program rebuilt:
//   the first occurrence instead of the last      -> "the last occurrence wins" (and 4 more) fail
//   the start one past the invocation's first id  -> "once", "context then tokens" and others fail
//   adapted_from_token one token late              -> the static_assert below stops the build
#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

#include "baton/lora/activation.hpp"

using baton::adapted_from_token;
using baton::alora_start;
using baton::kAdapterFromSlice;
using baton::kAdapterNever;
using Ids = std::vector<std::int32_t>;

TEST_CASE("alora_start: the last whole occurrence of the invocation, or never") {
  const Ids inv{7, 8};
  SUBCASE("once") { CHECK(alora_start(Ids{1, 2, 7, 8, 3}, inv) == 2); }
  SUBCASE("the last occurrence wins") { CHECK(alora_start(Ids{7, 8, 1, 7, 8, 2}, inv) == 3); }
  SUBCASE("at the very start and the very end") {
    CHECK(alora_start(Ids{7, 8, 1, 2}, inv) == 0);
    CHECK(alora_start(Ids{1, 2, 7, 8}, inv) == 2);
    CHECK(alora_start(Ids{7, 8}, inv) == 0);
  }
  SUBCASE("absent, or only in part") {
    CHECK(alora_start(Ids{1, 2, 3}, inv) == kAdapterNever);
    CHECK(alora_start(Ids{1, 7, 2, 8}, inv) == kAdapterNever);
    CHECK(alora_start(Ids{8, 7}, inv) == kAdapterNever);
    CHECK(alora_start(Ids{1, 2, 7}, inv) == kAdapterNever);  // cut off at the end
    CHECK(alora_start(Ids{7}, inv) == kAdapterNever);        // shorter than the invocation
    CHECK(alora_start(Ids{}, inv) == kAdapterNever);
    CHECK(alora_start(Ids{1, 2}, Ids{}) == kAdapterNever);
  }
  SUBCASE("a partial match just before a whole one, and overlapping occurrences") {
    CHECK(alora_start(Ids{7, 7, 8, 1}, inv) == 1);
    CHECK(alora_start(Ids{5, 5, 5, 1}, Ids{5, 5}) == 1);  // the last start of an overlap
  }
  SUBCASE("one-token and longer invocations") {
    CHECK(alora_start(Ids{3, 9, 4, 9}, Ids{9}) == 3);
    CHECK(alora_start(Ids{1, 2, 3, 1, 2, 3, 4}, Ids{1, 2, 3}) == 3);
  }
  SUBCASE("positions are absolute: the stream starts at `base`") {
    CHECK(alora_start(Ids{1, 7, 8}, inv, 100) == 101);
    CHECK(alora_start(Ids{1, 2}, inv, 100) == kAdapterNever);
  }
  SUBCASE("context then tokens: an occurrence in either, or straddling both") {
    CHECK(alora_start(Ids{1, 7}, Ids{8, 2}, inv) == 1);
    CHECK(alora_start(Ids{7, 8, 1}, Ids{2, 3}, inv) == 0);
    CHECK(alora_start(Ids{7, 8, 1}, Ids{7, 8}, inv) == 3);
    CHECK(alora_start(Ids{}, Ids{1, 7, 8}, inv) == 1);
    CHECK(alora_start(Ids{1, 7}, Ids{8}, inv, 10) == 11);
    CHECK(alora_start(Ids{1, 7}, Ids{3}, inv) == kAdapterNever);
  }
}

TEST_CASE("adapted_from_token: a forward's tokens at or after the start are adapted") {
  // Tokens at positions 10..14.
  CHECK(adapted_from_token(10, 5, 0) == 0);
  CHECK(adapted_from_token(10, 5, 10) == 0);
  CHECK(adapted_from_token(10, 5, 11) == 1);
  CHECK(adapted_from_token(10, 5, 14) == 4);
  CHECK(adapted_from_token(10, 5, 15) == 5);
  CHECK(adapted_from_token(10, 5, 1000) == 5);
  CHECK(adapted_from_token(10, 5, kAdapterNever) == 5);
  CHECK(adapted_from_token(0, 1, kAdapterNever) == 1);
  CHECK(adapted_from_token(0, 3, kAdapterFromSlice) == 0);  // a plain slice: every token
  static_assert(adapted_from_token(4, 2, 5) == 1);          // usable in constant expressions
}
