// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// Stages over an f32 and a bf16 model cannot share one relay: must not compile.
#include "wiring_common.hpp"
using namespace cf;
using Bf16Stage = Stage<BaseModel<host, bf16>, Slice, Cache, wire::Input<wire::Out<0>>>;
static_assert(instantiate<Relay<S<wire::Request>, Bf16Stage>> > 0);
