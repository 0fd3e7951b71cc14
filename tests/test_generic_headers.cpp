// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// The generic layers (decode loop, stage, relay) include no backend code: after including
// them, neither the host backend's kernels (whose x86 intrinsics nvcc must not see) nor a BLAS
// header may have been seen. A program picks its backend by including the backend's header
// (model/host_forward.hpp) itself.
#include <doctest/doctest.h>

#include "baton/model/decode.hpp"
#include "baton/model/forward.hpp"
#include "baton/relay/relay.hpp"
#include "baton/relay/stage.hpp"

#if defined(CBLAS_H) || defined(OPENBLAS_CONFIG_H)
#error "a generic baton header included cblas.h"
#endif
#if defined(BATON_HOST_SIMD_X86)
#error "a generic baton header included backend/host_simd.hpp: only model/host_ops.hpp may"
#endif

namespace {
// Without the host operations in this translation unit, BackendOps<host> is incomplete.
static_assert(!baton::HasBackendOps<baton::host>);
}  // namespace

TEST_CASE("generic headers pull in no host kernels and no BLAS header") { CHECK(true); }
