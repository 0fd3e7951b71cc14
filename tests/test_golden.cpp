// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// baton against llama.cpp: every run in ../shared/golden/golden.json (3 models incl. bf16
// storage, 3 adapters incl. q/v-only and rsLoRA, MHA and GQA). Tokens must match exactly;
// first_logits within the stated tolerance (1e-3; the golden README explains the budget).
// The fixture folders are generated into the build tree by the `golden_fixtures` test.
#include <doctest/doctest.h>

#include "baton/model/host_forward.hpp"
#include "support/golden_runs.hpp"

TEST_CASE("every golden run: tokens exact, first logits within tolerance") {
  baton::test::check_golden_runs<baton::host>(BATON_GOLDEN_DIR, BATON_GOLDEN_JSON);
}
