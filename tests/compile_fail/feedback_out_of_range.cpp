// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// feedback<3> in a two-stage relay: must not compile.
#include "wiring_common.hpp"
using namespace cf;
static_assert(instantiate<Relay<S<wire::Request>, S<wire::Out<0>, wire::Feedback<3>>>> > 0);
