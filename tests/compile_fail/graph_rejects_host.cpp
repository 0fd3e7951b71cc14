// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// A graph-captured decode loop with a host interceptor (the trace recorder): must not compile.
#include "baton/intercept/builtins.hpp"
#include "wiring_common.hpp"
using namespace cf;
using Captured =
    Stage<Model, Slice, Cache, wire::DynamicInput, Chain<StopSequences<host>, TraceRecorder>,
          StageCard{.graph_captured = true}>;
static_assert(instantiate<Captured> > 0);
