// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// Control: a correct wiring compiles (so the failures below fail for their stated reason).
#include "wiring_common.hpp"
using namespace cf;
static_assert(instantiate<Relay<S<wire::Request>, S<wire::Request, wire::Out<0>>,
                                S<wire::Out<1>, wire::Feedback<2>, wire::Literal>>> > 0);
