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
    // f32 products: the golden data's own arithmetic, within their tolerance
    baton::HostContext ctx({.threads = 2, .isa = isa, .bf16_products = false});
    INFO("kernels: " << baton::host_simd::isa_name(isa));
    baton::test::check_golden_runs<baton::host>(
        BATON_GOLDEN_DIR, BATON_GOLDEN_JSON,
        [&](baton::Workspace<baton::host>& ws) { ws.extras.bind(ctx); });
  }
}

// The default context where the CPU has AVX512-BF16: the bf16 model's products round its
// activations to bf16 (vdpbf16ps, AMX where present). Tokens stay exact; the first logits move
// by the rounding (up to 0.23 measured on these models; the f32 models are not affected).
TEST_CASE("every golden run with the bf16 products, where the CPU has them") {
  for (const bool amx : {false, true}) {
    baton::HostContext ctx({.threads = 2, .amx = amx});
    if (!ctx.bf16_products() || ctx.amx() != amx) {
      baton::test::not_run(std::string("test_golden: the golden runs with bf16 products") +
                               (amx ? " on AMX" : " on vdpbf16ps"),
                           "this CPU lacks AVX512-BF16 (or AMX-BF16)");
      continue;
    }
    INFO("bf16 products, amx " << amx);
    baton::test::check_golden_runs<baton::host>(
        BATON_GOLDEN_DIR, BATON_GOLDEN_JSON,
        [&](baton::Workspace<baton::host>& ws) { ws.extras.bind(ctx); }, 0.3);
  }
}
