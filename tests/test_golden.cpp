// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// baton against llama.cpp: every run in ../shared/golden/golden.json (3 models incl. bf16
// storage, 3 adapters incl. q/v-only and rsLoRA, MHA and GQA). Tokens must match exactly;
// first_logits within the stated tolerance (1e-3; the golden README explains the budget).
// The fixture folders are generated into the build tree by the `golden_fixtures` test.
#include <doctest/doctest.h>

#include "baton/model/host_forward.hpp"
#include "support/golden_runs.hpp"
#include "support/not_run.hpp"
#include "support/test_paths.hpp"

TEST_CASE("every golden run: tokens exact, first logits within tolerance") {
  baton::test::check_golden_runs<baton::host>(BATON_GOLDEN_DIR, BATON_GOLDEN_JSON);
}

// The same runs on a HostContext (thread pool instead of OpenMP) with each instruction set of
// decode's kernels that this CPU runs, forced one by one.
TEST_CASE("every golden run on a HostContext, for each kernel ISA the CPU runs") {
  using baton::host_simd::Isa;
  for (Isa isa : {Isa::portable, Isa::avx2, Isa::avx512}) {
    if (!baton::host_simd::cpu_supports(isa)) {
      baton::test::not_run(std::string("test_golden: the golden runs on ") +
                               std::string(baton::host_simd::isa_name(isa)) + " kernels",
                           "this CPU does not run that instruction set");
      continue;
    }
    baton::HostContext ctx({.threads = 2, .isa = isa});
    INFO("kernels: " << baton::host_simd::isa_name(isa));
    baton::test::check_golden_runs<baton::host>(
        BATON_GOLDEN_DIR, BATON_GOLDEN_JSON,
        [&](baton::Workspace<baton::host>& ws) { ws.extras.bind(ctx); });
  }
}
