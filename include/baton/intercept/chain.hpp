// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief Chain<Is...>: several interceptors composed into the one chain a decode loop calls,
///        with capabilities derived from its members, and the InterceptorChain concept.
///
/// Order (stated, the same for every chain). One decode step runs
///   1. host members' before_step, in chain order (the first supplied token wins; a second,
///      different one is a usage_error naming both);
///   2. the model forward (skipped when a token was supplied);
///   3. device members' transform_logit, in chain order (each sees the previous one's output);
///   4. host members' transform_logits, in chain order;
///   5. the choice (argmax over the transformed logits), unless a token was supplied;
///   6. device members' advance, in chain order (all of them, even after one asked to stop);
///   7. host members' after_step, in chain order (all of them);
///   8. accept: a stop asked in 6 or 7 ends the generation after this token.
/// Device steps 3 and 6 are the chain's static BATON_HD functions over (params, state), which a
/// device backend's sampling kernel calls as the host backend's loop does.
///
/// Composition is a contract, not an order of precedence:
///   - a forced token (StepPlan::forced_token: a member whose constraint leaves one token) is
///     offered only when every distribution-altering device member allows it too, and only
///     when no host member transforms logits (which the loop cannot ask about one id); else
///     the step runs the model with every mask applied;
///   - a stop (step 6 or 7) is honoured only where every member that has `may_end` says the
///     output may end there: a stop string inside a grammar's match does not cut it off;
///   - a member whose constraint is complete before the first step (a grammar matching only
///     the empty string: `complete_at_start()`) ends the generation with no token;
///   - when the members leave no token in common, the loop's error names them
///     (explain_no_token).
///
/// Capabilities: the chain is distribution_altering if any member is, graph_safe only if every
/// member is (so a chain with one host member is a host chain).
#pragma once

#include <array>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

#include "baton/core/error.hpp"
#include "baton/intercept/interceptor.hpp"
#include "baton/intercept/state_pack.hpp"

namespace baton {

namespace detail {
template <class I, bool = bool(I::graph_safe)>
struct DeviceParamsOf {
  using type = NoState;
};
template <class I>
struct DeviceParamsOf<I, true> {
  using type = typename I::params_type;
};
template <class I>
using device_state_of = std::conditional_t<bool(I::graph_safe), typename I::state_type, NoState>;
template <class I>
using host_state_of = std::conditional_t<bool(I::graph_safe), NoState, typename I::state_type>;
}  // namespace detail

/// Interceptors composed in order. `Chain<>` (NoInterceptors) is exact greedy decoding.
/// @tparam Is  each a HostInterceptor or a DeviceInterceptor (checked with its rule's message)
template <class... Is>
class Chain {
  static_assert((InterceptorRules<Is>::value && ...));
  template <std::size_t K>
  using member_t = std::tuple_element_t<K, std::tuple<Is...>>;

 public:
  static constexpr std::size_t size = sizeof...(Is);
  static constexpr bool distribution_altering = (false || ... || bool(Is::distribution_altering));
  static constexpr bool graph_safe = (true && ... && bool(Is::graph_safe));
  static constexpr bool has_host_members = (false || ... || !bool(Is::graph_safe));
  static constexpr bool has_device_members = (false || ... || bool(Is::graph_safe));
  /// Whether step 3 (device transforms) / step 4 (host transforms) do anything.
  static constexpr bool alters_on_device =
      (false || ... || (bool(Is::graph_safe) && bool(Is::distribution_altering)));
  static constexpr bool alters_on_host =
      (false || ... || (!bool(Is::graph_safe) && HasHostTransform<Is>));
  /// Whether some device member can name a forced token (StepPlan::forced_token).
  static constexpr bool reports_forced_token = (false || ... || ReportsForcedToken<Is>);
  /// Each member's plugin_id, in chain order.
  static constexpr std::array<std::string_view, size> plugin_ids{Is::plugin_id...};

  /// The plugin ids, quoted and joined (messages).
  static std::string member_names() {
    std::string out;
    for (const std::string_view id : plugin_ids)
      out += (out.empty() ? "'" : ", '") + std::string(id) + "'";
    return out;
  }

  /// Member K's params/state sit at index K of these (NoState for the other kind).
  using device_params = StatePack<typename detail::DeviceParamsOf<Is>::type...>;
  using device_state = StatePack<detail::device_state_of<Is>...>;
  using host_state = std::tuple<detail::host_state_of<Is>...>;

  Chain() = default;
  template <class... Args>
  requires(sizeof...(Args) > 0 && sizeof...(Args) == sizeof...(Is) &&
           (std::same_as<std::remove_cvref_t<Args>, Is> && ...)) Chain(Args&&... members)
      : members_(std::forward<Args>(members)...) {}

  template <std::size_t K>
  const member_t<K>& member() const {
    return std::get<K>(members_);
  }

  // ---- which members are present (run-time chains: MaybeInterceptor) -------------------
  /// Whether member K takes part: always, unless it is optional (has `present()`) and absent.
  template <std::size_t K>
  bool present() const {
    if constexpr (requires { std::get<K>(members_).present(); }) {
      return std::get<K>(members_).present();
    } else {
      return true;
    }
  }
  /// Whether any host member is present (else the loop skips the host hooks: no host waits).
  bool host_members_present() const {
    return any_present([](auto tag) { return !bool(member_t<decltype(tag)::value>::graph_safe); });
  }
  /// Whether any device member is present.
  bool device_members_present() const {
    return any_present([](auto tag) { return bool(member_t<decltype(tag)::value>::graph_safe); });
  }
  /// Whether any step-3 / step-4 transform is present (else the loop leaves the logits alone).
  bool device_transforms_present() const {
    return any_present([](auto tag) {
      using I = member_t<decltype(tag)::value>;
      return bool(I::graph_safe) && bool(I::distribution_altering);
    });
  }
  bool host_transforms_present() const {
    return any_present([](auto tag) {
      using I = member_t<decltype(tag)::value>;
      return !bool(I::graph_safe) && HasHostTransform<I>;
    });
  }

  // ---- branch start (host) ------------------------------------------------------------
  /// The device members' params, taken once per request and passed by value to the step.
  device_params params() const {
    device_params p{};
    fill_params<0>(p);
    return p;
  }
  device_state initial_device_state(const BranchInfo& info) const {
    device_state s{};
    fill_device_state<0>(s, info);
    return s;
  }
  host_state initial_host_state(const BranchInfo& info) const {
    return make_host_state(info, std::index_sequence_for<Is...>{});
  }

  // ---- device steps (3 and 6): the same calls on either backend -------------------------
  /// Step 3 for one logit: every distribution-altering device member, in order.
  BATON_HD static float transform_logit(const device_params& p, const device_state& s,
                                        std::int32_t id, float logit) {
    return transform_from<0>(p, s, id, logit);
  }
  /// Step 6: advances every device member with `token`; the index of the first member that
  /// asked to stop, or -1.
  /// A stop is dropped where a member's may_end says the output may not end yet.
  BATON_HD static int advance(const device_params& p, device_state& s, std::int32_t token) {
    const int stopper = advance_from<0>(p, s, token, -1);
    return stopper >= 0 && may_end(p, s) ? stopper : -1;
  }
  /// The token a member forces (the only one its constraint allows; the first member that
  /// reports one), if every distribution-altering device member allows it too; else -1.
  BATON_HD static std::int32_t forced_token(const device_params& p, const device_state& s) {
    const std::int32_t t = forced_from<0>(p, s);
    return t >= 0 && allows(p, s, t) ? t : -1;
  }
  /// Whether no distribution-altering device member masks `id` (its transform leaves it above
  /// -Inf): the consent a forced token needs.
  BATON_HD static bool allows(const device_params& p, const device_state& s, std::int32_t id) {
    return transform_from<0>(p, s, id, 0.0f) > -kInfinity;
  }
  /// Whether every device member with a `may_end(params, state)` hook lets the output end here
  /// (a grammar: only where the output so far is a complete match).
  BATON_HD static bool may_end(const device_params& p, const device_state& s) {
    return may_end_from<0>(p, s);
  }

  /// The index of the first present device member whose constraint is complete before the
  /// first step (`complete_at_start()`, host side), or -1: the generation ends with no token.
  int complete_at_start() const { return complete_from<0>(); }

  /// Host backends, after a step whose every logit was -Inf: which present device members
  /// leave no token alone, or that together they leave none (by name), or "" when they do
  /// leave a token in common (the logits themselves were not finite). Tests one id at a time:
  /// an error path only.
  std::string explain_no_token(const device_params& p, const device_state& s, int vocab) const {
    std::string alone, members;
    int altering = 0, empty = 0;
    explain_from<0>(p, s, vocab, alone, members, altering, empty);
    if (empty > 0)
      return alone + (empty == 1 ? " allows" : " each allow") + " no token at this step";
    for (std::int32_t id = 0; id < vocab; ++id)
      if (allows(p, s, id)) return {};
    if (altering < 2) return {};
    return "the constraints " + members + " leave no token in common at this step";
  }

  // ---- host steps (1, 4 and 7) ---------------------------------------------------------
  /// Step 1: the token the host members supply for this step, if any.
  std::optional<std::int32_t> before_step(host_state& s, const StepPlan& plan) const {
    std::optional<std::int32_t> supplied;
    int by = -1;
    before_from<0>(s, plan, supplied, by);
    return supplied;
  }
  /// Step 4.
  void transform_logits(host_state& s, const StepPlan& plan, std::span<float> row) const {
    host_transform_from<0>(s, plan, row);
  }
  /// Step 7: the index of the first member that asked to stop, or -1.
  int after_step(host_state& s, const StepOutcome& outcome) const {
    return after_from<0>(s, outcome, -1);
  }

 private:
  template <class Pred>
  bool any_present(Pred pred) const {
    return [&]<std::size_t... K>(std::index_sequence<K...>) {
      return (false || ... || (pred(std::integral_constant<std::size_t, K>{}) && present<K>()));
    }
    (std::index_sequence_for<Is...>{});
  }

  template <std::size_t K>
  void fill_params(device_params& p) const {
    if constexpr (K < size) {
      if constexpr (bool(member_t<K>::graph_safe)) pack_get<K>(p) = std::get<K>(members_).params();
      fill_params<K + 1>(p);
    }
  }
  template <std::size_t K>
  void fill_device_state(device_state& s, const BranchInfo& info) const {
    if constexpr (K < size) {
      if constexpr (bool(member_t<K>::graph_safe))
        pack_get<K>(s) = std::get<K>(members_).initial_state(info);
      fill_device_state<K + 1>(s, info);
    }
  }
  template <std::size_t... K>
  host_state make_host_state(const BranchInfo& info, std::index_sequence<K...>) const {
    return host_state{host_initial<K>(info)...};
  }
  template <std::size_t K>
  detail::host_state_of<member_t<K>> host_initial(const BranchInfo& info) const {
    if constexpr (bool(member_t<K>::graph_safe)) {
      return NoState{};
    } else {
      return std::get<K>(members_).initial_state(info);
    }
  }

  template <std::size_t K>
  BATON_HD static float transform_from(const device_params& p, const device_state& s,
                                       std::int32_t id, float logit) {
    if constexpr (K == size) {
      return logit;
    } else {
      using I = member_t<K>;
      if constexpr (bool(I::graph_safe) && bool(I::distribution_altering))
        logit = I::transform_logit(pack_get<K>(p), pack_get<K>(s), id, logit);
      return transform_from<K + 1>(p, s, id, logit);
    }
  }
  template <std::size_t K>
  BATON_HD static int advance_from(const device_params& p, device_state& s, std::int32_t token,
                                   int stopper) {
    if constexpr (K == size) {
      return stopper;
    } else {
      using I = member_t<K>;
      if constexpr (bool(I::graph_safe)) {
        const StepAction a = I::advance(pack_get<K>(p), pack_get<K>(s), token);
        if (a == StepAction::stop && stopper < 0) stopper = static_cast<int>(K);
      }
      return advance_from<K + 1>(p, s, token, stopper);
    }
  }
  template <std::size_t K>
  BATON_HD static std::int32_t forced_from(const device_params& p, const device_state& s) {
    if constexpr (K == size) {
      return -1;
    } else {
      using I = member_t<K>;
      if constexpr (ReportsForcedToken<I>) {
        const std::int32_t t = I::forced_token(pack_get<K>(p), pack_get<K>(s));
        if (t >= 0) return t;
      }
      return forced_from<K + 1>(p, s);
    }
  }

  template <std::size_t K>
  BATON_HD static bool may_end_from(const device_params& p, const device_state& s) {
    if constexpr (K == size) {
      return true;
    } else {
      using I = member_t<K>;
      if constexpr (requires { I::may_end(pack_get<K>(p), pack_get<K>(s)); }) {
        if (!I::may_end(pack_get<K>(p), pack_get<K>(s))) return false;
      }
      return may_end_from<K + 1>(p, s);
    }
  }
  template <std::size_t K>
  int complete_from() const {
    if constexpr (K == size) {
      return -1;
    } else {
      if constexpr (requires { std::get<K>(members_).complete_at_start(); }) {
        if (present<K>() && std::get<K>(members_).complete_at_start()) return static_cast<int>(K);
      }
      return complete_from<K + 1>();
    }
  }
  template <std::size_t K>
  void explain_from(const device_params& p, const device_state& s, int vocab, std::string& alone,
                    std::string& members, int& altering, int& empty) const {
    if constexpr (K < size) {
      using I = member_t<K>;
      if constexpr (bool(I::graph_safe) && bool(I::distribution_altering)) {
        if (present<K>()) {
          ++altering;
          const std::string name = "'" + std::string(I::plugin_id) + "'";
          members += (members.empty() ? "" : " and ") + name;
          bool any = false;
          for (std::int32_t id = 0; id < vocab && !any; ++id)
            any = I::transform_logit(pack_get<K>(p), pack_get<K>(s), id, 0.0f) > -kInfinity;
          if (!any) {
            alone += (alone.empty() ? "" : " and ") + name;
            ++empty;
          }
        }
      }
      explain_from<K + 1>(p, s, vocab, alone, members, altering, empty);
    }
  }

  template <std::size_t K>
  void before_from(host_state& s, const StepPlan& plan, std::optional<std::int32_t>& supplied,
                   int& by) const {
    if constexpr (K < size) {
      using I = member_t<K>;
      if constexpr (!bool(I::graph_safe)) {
        const std::optional<std::int32_t> t =
            std::get<K>(members_).before_step(std::get<K>(s), plan);
        if (t) {
          BATON_CHECK(bool(I::distribution_altering), usage_error, "interceptor '", I::plugin_id,
                      "' supplied token ", *t, " at step ", plan.step,
                      " but declares distribution_altering = false (a supplied token changes the "
                      "output; declare it)");
          if (!supplied) {
            supplied = t;
            by = static_cast<int>(K);
          } else {
            BATON_CHECK(*supplied == *t, usage_error, "interceptors '", plugin_ids[by], "' and '",
                        I::plugin_id, "' supplied different tokens (", *supplied, " and ", *t,
                        ") at step ", plan.step);
          }
        }
      }
      before_from<K + 1>(s, plan, supplied, by);
    }
  }
  template <std::size_t K>
  void host_transform_from(host_state& s, const StepPlan& plan, std::span<float> row) const {
    if constexpr (K < size) {
      using I = member_t<K>;
      if constexpr (!bool(I::graph_safe) && HasHostTransform<I>)
        std::get<K>(members_).transform_logits(std::get<K>(s), plan, row);
      host_transform_from<K + 1>(s, plan, row);
    }
  }
  template <std::size_t K>
  int after_from(host_state& s, const StepOutcome& outcome, int stopper) const {
    if constexpr (K == size) {
      return stopper;
    } else {
      using I = member_t<K>;
      if constexpr (!bool(I::graph_safe)) {
        const StepAction a = std::get<K>(members_).after_step(std::get<K>(s), outcome);
        if (a == StepAction::stop && stopper < 0) stopper = static_cast<int>(K);
      }
      return after_from<K + 1>(s, outcome, stopper);
    }
  }

  std::tuple<Is...> members_;
};

template <class... Is>
Chain(Is...) -> Chain<Is...>;

/// The empty chain: exact greedy decoding.
using NoInterceptors = Chain<>;

/// What the decode loop needs of a chain (Chain<Is...> is the one implementation; the concept
/// keeps the Decoder's and Stage's requirements readable).
template <class C>
concept InterceptorChain = requires(const C& c, typename C::host_state& hs,
                                    const typename C::device_params& p,
                                    typename C::device_state& ds, const BranchInfo& info,
                                    const StepPlan& plan, const StepOutcome& outcome,
                                    std::span<float> row, std::int32_t token) {
  { C::distribution_altering } -> std::convertible_to<bool>;
  { C::graph_safe } -> std::convertible_to<bool>;
  { C::has_host_members } -> std::convertible_to<bool>;
  { C::has_device_members } -> std::convertible_to<bool>;
  { C::plugin_ids.size() } -> std::convertible_to<std::size_t>;
  { c.params() } -> std::same_as<typename C::device_params>;
  { c.initial_device_state(info) } -> std::same_as<typename C::device_state>;
  { c.initial_host_state(info) } -> std::same_as<typename C::host_state>;
  { C::transform_logit(p, ds, token, 0.0f) } -> std::same_as<float>;
  { C::advance(p, ds, token) } -> std::same_as<int>;
  { C::forced_token(p, ds) } -> std::same_as<std::int32_t>;
  { c.before_step(hs, plan) } -> std::same_as<std::optional<std::int32_t>>;
  c.transform_logits(hs, plan, row);
  { c.after_step(hs, outcome) } -> std::same_as<int>;
};

static_assert(InterceptorChain<NoInterceptors>);

}  // namespace baton
