// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// The control for the interceptor compile-fail tests: an exact stage with a trace, a
// graph-captured one with device interceptors, and a free one with every built-in compile.
#include "baton/intercept/builtins.hpp"
#include "wiring_common.hpp"
using namespace cf;
using In = wire::DynamicInput;
static_assert(instantiate<Stage<Model, Slice, Cache, In, Chain<TraceRecorder, StopSequences<host>>,
                                StageCard{.exact = true}>> > 0);
static_assert(instantiate<Stage<Model, Slice, Cache, In, Chain<TokenSet<host>, StopSequences<host>>,
                                StageCard{.graph_captured = true}>> > 0);
static_assert(
    instantiate<Stage<Model, Slice, Cache, In,
                      Chain<TokenSet<host>, StopSequences<host>, TraceRecorder, StepSkip>>> > 0);
