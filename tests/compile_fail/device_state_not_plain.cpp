// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// A device interceptor whose state is not plain data (a std::vector cannot live in backend
// memory or be copied into a kernel): must not compile.
#include <vector>

#include "baton/intercept/builtins.hpp"
#include "wiring_common.hpp"
using namespace cf;
struct HeapState {
  static constexpr std::string_view plugin_id = "test.heap_state";
  static constexpr bool distribution_altering = false;
  static constexpr bool graph_safe = true;
  struct params_type {};
  struct state_type {
    std::vector<int> seen;
  };
  params_type params() const { return {}; }
  state_type initial_state(const BranchInfo&) const { return {}; }
  static StepAction advance(const params_type&, state_type&, std::int32_t) {
    return StepAction::go_on;
  }
};
static_assert(instantiate<Chain<HeapState>> > 0);
