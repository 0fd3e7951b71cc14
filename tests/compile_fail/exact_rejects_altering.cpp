// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// An exact stage (a verifier used as the gate) with a distribution-altering interceptor (the
// token-set constraint): must not compile.
#include "baton/intercept/builtins.hpp"
#include "wiring_common.hpp"
using namespace cf;
using Verify = Stage<Model, Slice, Cache, wire::DynamicInput, Chain<TraceRecorder, TokenSet<host>>,
                     StageCard{.exact = true}>;
static_assert(instantiate<Verify> > 0);
