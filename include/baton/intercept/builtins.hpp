// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief The built-in interceptors, with the contract and the chain.
///
/// | built-in            | kind   | distribution_altering | graph_safe |
/// | ------------------- | ------ | --------------------- | ---------- |
/// | StopSequences<B>    | device | no                    | yes        |
/// | TokenSet<B>         | device | yes                   | yes        |
/// | TraceRecorder       | host   | no                    | no         |
/// | StepSkip            | host   | yes                   | no         |
#pragma once

#include "baton/intercept/branch_state.hpp"
#include "baton/intercept/chain.hpp"
#include "baton/intercept/interceptor.hpp"
#include "baton/intercept/negotiate.hpp"
#include "baton/intercept/step_skip.hpp"
#include "baton/intercept/stop_sequences.hpp"
#include "baton/intercept/token_set.hpp"
#include "baton/intercept/trace.hpp"
