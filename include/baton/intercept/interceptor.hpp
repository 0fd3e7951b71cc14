// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief The step-interceptor contract: what an interceptor type declares and the hooks the
///        decode loop calls, in two kinds — host interceptors and device interceptors.
///
/// Every interceptor declares
///   - `static constexpr std::string_view plugin_id`: a stable name (messages, relay files);
///   - `static constexpr bool distribution_altering`: it changes what the model would have
///     produced (masks, penalties, supplied tokens);
///   - `static constexpr bool graph_safe`: it can run inside a captured CUDA graph. This is
///     also its kind: `true` = a device interceptor, `false` = a host interceptor;
///   - `using state_type`: its per-request, per-branch state, and
///     `state_type initial_state(const BranchInfo&) const`, called when a branch starts.
/// The state never lives in the interceptor object, a global or a static: the decode loop
/// keeps one per request and branch (intercept/branch_state.hpp) and hands it to every hook,
/// so two requests interleaved step by step never see each other's state.
///
/// ## Writing a device interceptor (graph_safe = true)
/// A device interceptor is declarative: plain data plus `BATON_HD` functions that the sampling
/// step calls — on the host backend from the Decoder's loop, on a device backend from its
/// sampling kernel, inside a captured graph. Nothing in it may touch host state per step.
/// ```cpp
/// struct BanToken {                          // forbids one token id
///   static constexpr std::string_view plugin_id = "example.ban_token";
///   static constexpr bool distribution_altering = true;
///   static constexpr bool graph_safe = true;
///   struct params_type { std::int32_t id; };  // trivially copyable; pointers into backend
///                                             // memory allowed (tables the object owns)
///   struct state_type {};                     // trivially copyable; lives in backend memory
///   std::int32_t banned = 0;
///   params_type params() const { return {banned}; }        // host, once per request
///   state_type initial_state(const BranchInfo&) const { return {}; }   // host, per branch
///   // Per logit (a kernel maps one thread per id; the host loops): required iff altering.
///   BATON_HD static float transform_logit(const params_type& p, const state_type&,
///                                         std::int32_t id, float logit) {
///     return id == p.id ? -kInfinity : logit;
///   }
///   // After the choice, with the chosen token: advance the state; StepAction::stop ends the
///   // generation after this token (the token is kept).
///   BATON_HD static StepAction advance(const params_type&, state_type&, std::int32_t) {
///     return StepAction::go_on;
///   }
///   // Optional: the only token the constraint allows in `state` (or -1), which a step-skip
///   // host interceptor reads from StepPlan::forced_token to skip the model forward.
///   BATON_HD static std::int32_t forced_token(const params_type&, const state_type&);
///   // Optional: whether the output may end in `state` (a grammar: a complete match so far).
///   // Where it says no, a stop asked by any member is not honoured.
///   BATON_HD static bool may_end(const params_type&, const state_type&);
///   // Optional, host side: the constraint is complete before the first step (a grammar
///   // matching only the empty string), so the generation ends with no token.
///   bool complete_at_start() const;
/// };
/// ```
/// The functions are static and take everything as arguments (never read `threadIdx`), so the
/// same arithmetic runs on both backends. `params()` is taken once per request and copied by
/// value (a kernel argument); the state is copied into backend memory at branch start.
///
/// ## Writing a host interceptor (graph_safe = false)
/// Host hooks run on the host at every step (on a device backend each such step costs one
/// host wait, counted in DecodeResult::host_waits; only stages that are not graph-captured
/// accept them). `state_type` may be any movable type (it stays in host memory).
/// ```cpp
///   std::optional<std::int32_t> before_step(state_type&, const StepPlan&) const;
///       // a token here is this step's output: the model forward is skipped for the step and
///       // the token's K/V is written by the next forward, batched with any other skipped
///       // ones. Only distribution-altering interceptors may return one.
///   void transform_logits(state_type&, const StepPlan&, std::span<float> logits) const;
///       // optional, distribution-altering interceptors only: mask or modify the logits
///   StepAction after_step(state_type&, const StepOutcome&) const;
///       // sees the chosen token; StepAction::stop ends the generation after it
/// ```
/// docs/interceptors.md walks through a complete example of each kind.
#pragma once

#include <concepts>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string_view>
#include <type_traits>

#include "baton/core/macros.hpp"

namespace baton {

/// What a hook asks of the loop after a step.
enum class StepAction : std::int32_t {
  go_on = 0,  ///< continue generating
  stop = 1    ///< end the generation after this step's token (which is kept)
};

/// -Inf as a float, for masks (usable in device code: no <cmath>).
inline constexpr float kInfinity = std::numeric_limits<float>::infinity();

/// The branch a state belongs to, as `initial_state` sees it when the branch starts.
struct BranchInfo {
  std::string_view stage;   ///< the stage's name ("" outside a stage)
  std::string_view branch;  ///< the branch's name within the request
  int branch_index = 0;     ///< its index within the request
  int max_new = 0;          ///< tokens the branch may generate at most (to reserve for)
};

/// One decode step as host interceptors see it before the step runs.
struct StepPlan {
  std::string_view stage;        ///< the stage's name ("" outside a stage)
  int branch = 0;                ///< the branch (decode stream) within the request
  int step = 0;                  ///< tokens generated so far in this branch
  int position = 0;              ///< KV position of the token this step chooses
  std::int32_t last_token = -1;  ///< the last accepted token (the prompt's last at step 0)
  /// The only token the chain's constraints allow at this step, or -1: what a step-skip
  /// interceptor supplies. Set only with every altering member's consent (Chain::forced_token).
  std::int32_t forced_token = -1;
};

/// A decode step after its choice, as after_step sees it.
struct StepOutcome {
  StepPlan plan;
  std::int32_t token = -1;        ///< the step's token (chosen, or supplied by before_step)
  bool skipped = false;           ///< supplied by before_step: no model forward ran for it
  std::span<const float> logits;  ///< the step's logits after all transforms (host memory;
                                  ///< empty when skipped)
};

namespace detail {
template <class T>
concept HasInterceptorDeclarations = requires(const T& t, const BranchInfo& info) {
  { T::plugin_id } -> std::convertible_to<std::string_view>;
  { T::distribution_altering } -> std::convertible_to<bool>;
  { T::graph_safe } -> std::convertible_to<bool>;
  typename T::state_type;
  { t.initial_state(info) } -> std::same_as<typename T::state_type>;
};
}  // namespace detail

/// A device interceptor: graph-safe, plain-data params and state, BATON_HD static hooks.
template <class T>
concept DeviceInterceptor =
    detail::HasInterceptorDeclarations<T> && bool(T::graph_safe) &&
    std::is_trivially_copyable_v<typename T::state_type>&& std::is_trivially_copyable_v<
        typename T::params_type>&& requires(const T& t, const typename T::params_type& p,
                                            typename T::state_type& s, std::int32_t token) {
  { t.params() } -> std::same_as<typename T::params_type>;
  { T::advance(p, s, token) } -> std::same_as<StepAction>;
}
&&(!bool(T::distribution_altering) ||
   requires(const typename T::params_type& p, const typename T::state_type& s, std::int32_t id,
            float logit) {
     { T::transform_logit(p, s, id, logit) } -> std::same_as<float>;
   });

/// Whether a host interceptor rewrites logits (the optional transform_logits hook).
template <class T>
concept HasHostTransform = requires(const T& t, typename T::state_type& s, const StepPlan& plan,
                                    std::span<float> row) {
  t.transform_logits(s, plan, row);
};

/// A host interceptor: not graph-safe, hooks called on the host at every step. transform_logits
/// is optional, and only a distribution-altering interceptor may have it (a host interceptor
/// may alter the distribution by supplying tokens alone, as step-skip does).
template <class T>
concept HostInterceptor = detail::HasInterceptorDeclarations<T> && !bool(T::graph_safe) &&
                          std::movable<typename T::state_type> &&
                          requires(const T& t, typename T::state_type& s, const StepPlan& plan,
                                   const StepOutcome& outcome) {
  { t.before_step(s, plan) } -> std::same_as<std::optional<std::int32_t>>;
  { t.after_step(s, outcome) } -> std::same_as<StepAction>;
};

/// Either kind.
template <class T>
concept Interceptor = DeviceInterceptor<T> || HostInterceptor<T>;

/// Whether a device interceptor can name the single token its constraint allows.
template <class T>
concept ReportsForcedToken = DeviceInterceptor<T> &&
    requires(const typename T::params_type& p, const typename T::state_type& s) {
  { T::forced_token(p, s) } -> std::same_as<std::int32_t>;
};

/// The rules the concepts cannot say, each with its own message (the instantiation shows the
/// interceptor type). Checked by Chain for every member.
template <class T>
struct InterceptorRules {
  static_assert(detail::HasInterceptorDeclarations<T>,
                "an interceptor declares plugin_id, distribution_altering, graph_safe, "
                "state_type and `state_type initial_state(const BranchInfo&) const`");
  static_assert(bool(T::graph_safe) || HostInterceptor<T>,
                "a host interceptor (graph_safe = false) provides before_step(state&, "
                "const StepPlan&) -> std::optional<int32_t> and after_step(state&, const "
                "StepOutcome&) -> StepAction (and, if distribution_altering, optionally "
                "transform_logits(state&, const StepPlan&, std::span<float>))");
  static_assert(!bool(T::graph_safe) || DeviceInterceptor<T>,
                "a device interceptor (graph_safe = true) has trivially copyable params_type "
                "and state_type, params() -> params_type, static advance(params, state&, "
                "token) -> StepAction, plus static transform_logit(params, state, id, logit) -> "
                "float when distribution_altering");
  static_assert(
      bool(T::distribution_altering) ||
          !requires(const T& t, typename T::state_type& s, const StepPlan& plan,
                    std::span<float> row) { t.transform_logits(s, plan, row); },
      "an interceptor with transform_logits must declare distribution_altering = true");
  static constexpr bool value = true;
};

}  // namespace baton
