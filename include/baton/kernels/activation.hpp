// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief SwiGLU: silu(gate) * up, elementwise.
#pragma once

#include <cmath>

#include "baton/core/macros.hpp"

namespace baton::kernels {

BATON_HD inline float silu(float x) { return x / (1.0f + expf(-x)); }

BATON_HD inline float swiglu(float gate, float up) { return silu(gate) * up; }

}  // namespace baton::kernels
