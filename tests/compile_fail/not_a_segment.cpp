// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// wire::input takes only segments: an int is not one. Must not compile.
#include "wiring_common.hpp"
auto bad = baton::wire::input(baton::wire::request, 42);
