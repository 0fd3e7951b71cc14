// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// Stage 1 reads out<2>, the output of a later stage: must not compile.
#include "wiring_common.hpp"
using namespace cf;
static_assert(instantiate<Relay<S<wire::Request>, S<wire::Out<2>>, S<wire::Out<1>>>> > 0);
