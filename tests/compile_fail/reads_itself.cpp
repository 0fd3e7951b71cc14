// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// Stage 0 reads its own output: must not compile.
#include "wiring_common.hpp"
using namespace cf;
static_assert(instantiate<Relay<S<wire::Request, wire::Out<0>>>> > 0);
