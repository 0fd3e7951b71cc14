// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// A stateful device constraint for tests over vocabularies of at most 64 ids: a schedule of
// per-step allowed sets (one 64-bit mask per step; past its end every id is allowed). Its
// state is the step counter; a step whose mask has one bit reports that id as forced, which
// is what step-skip needs. Also the reference rule for constrained_greedy.
#pragma once

#include <bit>
#include <cstdint>
#include <vector>

#include "baton/intercept/interceptor.hpp"

namespace baton::test {

inline constexpr std::uint64_t kAnyId = ~std::uint64_t{0};
inline constexpr std::uint64_t only(int id) { return std::uint64_t{1} << id; }

struct Schedule {
  static constexpr std::string_view plugin_id = "test.schedule";
  static constexpr bool distribution_altering = true;
  static constexpr bool graph_safe = true;
  struct params_type {
    const std::uint64_t* masks = nullptr;
    std::int32_t steps = 0;
  };
  struct state_type {
    std::int32_t step = 0;
  };
  std::vector<std::uint64_t> masks;  // host memory: the host backend's memory

  params_type params() const { return {masks.data(), static_cast<std::int32_t>(masks.size())}; }
  state_type initial_state(const BranchInfo&) const { return {}; }
  BATON_HD static std::uint64_t mask_at(const params_type& p, std::int32_t step) {
    return step < p.steps ? p.masks[step] : kAnyId;
  }
  BATON_HD static float transform_logit(const params_type& p, const state_type& s, std::int32_t id,
                                        float logit) {
    return (mask_at(p, s.step) >> id) & 1u ? logit : -kInfinity;
  }
  BATON_HD static StepAction advance(const params_type&, state_type& s, std::int32_t) {
    ++s.step;
    return StepAction::go_on;
  }
  BATON_HD static std::int32_t forced_token(const params_type& p, const state_type& s) {
    const std::uint64_t m = mask_at(p, s.step);
    return std::popcount(m) == 1 ? std::countr_zero(m) : -1;
  }

  /// The same rule for the reference decoder.
  bool allows(std::size_t step, int id) const {
    const std::uint64_t m = step < masks.size() ? masks[step] : kAnyId;
    return ((m >> id) & 1u) != 0;
  }
  bool forced(std::size_t step) const {
    return step < masks.size() && std::popcount(masks[step]) == 1;
  }
};

/// Every second id / the ids below 32.
inline constexpr std::uint64_t kEvenIds = 0x5555555555555555ull;
inline constexpr std::uint64_t kLowIds = 0x00000000ffffffffull;

/// 16 steps: 9 forced (in runs of 1, 2 and 3), 7 with a choice.
inline Schedule mixed_schedule() {
  return Schedule{{kAnyId, only(7), only(19), kAnyId, kEvenIds, only(3), only(40), only(41), kAnyId,
                   only(5), kLowIds, kAnyId, only(60), only(61), kAnyId, only(9)}};
}

}  // namespace baton::test
