// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief Everything a program needs to run forward() and the decode loop on baton::host: the
///        generic forward plus the host backend's operations (its own kernels, thread pool or
///        OpenMP).
///
/// Generic headers (model/decode.hpp, relay/stage.hpp, ...) never include this: a program that
/// runs on the host includes it (or baton/baton.hpp) once, next to them.
#pragma once

#include "baton/model/forward.hpp"
#include "baton/model/host_ops.hpp"
