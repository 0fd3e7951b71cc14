// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief The decode loop: prefill a prompt, then one step per generated token —
///        before-step → forward → logits transform → choose → after-step → accept.
///
/// `Decoder` owns the loop's state (DecodeState: plain data that a device-resident loop can
/// keep in backend memory) and drives the step's phases (kernels::StepPolicy,
/// kernels/step_policy.hpp: mask, sample, advance, accept, the device loop's too) with the
/// host's hooks between them; `run()` drives the steps with an interceptor chain
/// (intercept/chain.hpp). `greedy_decode`, a relay Stage and
/// `baton generate` all run this one loop: they differ only in the chain and hooks they pass.
#pragma once

#include <algorithm>
#include <concepts>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "baton/intercept/branch_state.hpp"
#include "baton/intercept/chain.hpp"
#include "baton/intercept/trace.hpp"
#include "baton/kernels/accept.hpp"
#include "baton/kernels/step_policy.hpp"
#include "baton/model/backend_ops.hpp"
#include "baton/model/device_choice.hpp"
#include "baton/model/device_loop.hpp"
#include "baton/model/device_prefill.hpp"
#include "baton/model/forward.hpp"
#include "baton/model/sampling.hpp"
#include "baton/model/step_logits.hpp"

namespace baton {

/// Limits of one generation, and how it chooses its tokens.
struct DecodeOptions {
  int max_new = 16;                    ///< tokens to generate at most
  std::vector<std::int32_t> stop_ids;  ///< generation ends when one of these is chosen
  SamplingOptions sampling;            ///< greedy unless set (docs/sampling.md)
};

/// What a generation produced. A stop id ends the generation and is not part of `ids`; a stop
/// an interceptor asks for ends it after the token it saw, which is kept.
struct DecodeResult {
  std::vector<std::int32_t> ids;
  bool stopped = false;         ///< ended on a stop id or an interceptor's stop (else max_new)
  std::int32_t stop_id = -1;    ///< the stop id chosen, when a stop id ended it
  std::string_view stopped_by;  ///< plugin_id of the interceptor that asked to stop, if one did
  int forwards = 0;             ///< model forwards run (the prefill included)
  int skipped = 0;              ///< steps whose token was supplied, so no forward ran for them
  /// Times the loop waited for the step's outcome: one per step at which host interceptors
  /// ran, plus one for each device-resident run (its single read of count, done, stop id
  /// and error flag). On a device backend each is one wait of the host for the device; on the
  /// host backends it costs nothing extra and is counted the same.
  int host_waits = 0;
  /// The word the caller's launches after a device-resident run wrote before its one read
  /// (kernels::DeviceLoopState::verdict: a relay's device gate, 1 pass, 0 fail), -1 when none.
  int loop_verdict = -1;
  /// The trace recorder's rows, when the chain has one (a Stage fills this at finish).
  std::vector<TraceRow> trace;
  /// One entry per id in `ids` when the options asked for log-probabilities.
  std::vector<TokenLogprobs> logprobs;
};

/// Former names, from when the loop was only greedy.
using GreedyOptions [[deprecated("use DecodeOptions")]] = DecodeOptions;
using GreedyResult [[deprecated("use DecodeResult")]] = DecodeResult;

/// The loop's state between steps: the one step state every loop keeps (kernels/accept.hpp),
/// plain integers, so a device-resident loop starts from it and hands it back.
using DecodeState = kernels::StepState;

/// Observer hooks a run of the loop calls at every step that runs a forward; all optional
/// (see NoDecodeHooks). Interceptors are the extension point (intercept/chain.hpp); these
/// serve tools that only watch:
///   before(view) -> std::optional<int32>: may supply the step's token (skipping choose_step());
///   after(view, token): sees the logits (empty when the step was skipped) and the token.
/// `view` is a DecodeStepView {step, position, logits}.
struct NoDecodeHooks {
  template <class View>
  std::optional<std::int32_t> before(const View&) {
    return std::nullopt;
  }
  template <class View>
  void after(const View&, std::int32_t) {}
};

/// One step as the hooks see it.
template <class LogitsView>
struct DecodeStepView {
  int step = 0;       ///< tokens generated so far in this request
  int position = 0;   ///< KV position of the token this step chooses
  LogitsView logits;  ///< this step's logits (backend memory)
};

/// One generation in progress on one KV target, with an interceptor chain and the state of
/// the branch it decodes (intercept/branch_state.hpp).
///
/// A step (intercept/chain.hpp states the order): host before_step (may supply the token:
/// then no forward runs for this step) → forward → device transforms → host transforms →
/// choose → device advance → host after_step → accept.
///
/// Positions: the prompt goes to [start, start + n); each accepted token is fed back at the
/// next position by a later forward, except the last (nothing reads its K/V). Tokens supplied
/// by before_step wait (`pending`) and the next forward appends them all at once, so the
/// target ends at most at start + n + ids - 1. Every forward states the position it expects
/// to write at, and the cache checks it before writing.
template <class Model, class Slice, class Cache, InterceptorChain Chain = NoInterceptors>
class Decoder {
 public:
  using backend = typename Model::backend;
  using ops = BackendOps<backend>;
  using logits_view = typename ops::logits_view;
  using step_view = DecodeStepView<logits_view>;
  using chain_type = Chain;
  using branch_type = BranchState<Chain, backend>;
  /// The step's phases (kernels/step_policy.hpp), which the device loop's kernels run too.
  using policy = kernels::StepPolicy<Chain>;
  /// Whether run() can keep the whole loop on the device (model/device_loop.hpp).
  static constexpr bool has_device_loop = HasDeviceLoop<backend>;

  /// Without interceptors.
  Decoder(const Model& model, const Slice& slice, Cache& cache, Workspace<backend>& ws,
          KvTarget target, const DecodeOptions& opt) requires(Chain::size == 0)
      : Decoder(model, slice, cache, ws, target, opt, nullptr, nullptr, {}) {}

  /// With `chain`, decoding the branch whose states are `branch` (of stage `stage`).
  Decoder(const Model& model, const Slice& slice, Cache& cache, Workspace<backend>& ws,
          KvTarget target, const DecodeOptions& opt, const Chain& chain, branch_type& branch,
          std::string_view stage = {})
      : Decoder(model, slice, cache, ws, target, opt, &chain, &branch, stage) {}

  /// Appends the prompt at `start_pos`; its last row of logits is the first step's.
  ///
  /// `context`: the tokens already at positions [0, start_pos) of the target (a stage's
  /// prefix). An activated slice (aLoRA) needs them whenever start_pos > 0: its activation
  /// start is the last occurrence of its invocation in context + prompt, found here once and
  /// kept for every generated token, as PEFT's generate() does (lora/activation.hpp).
  void prefill(std::span<const std::int32_t> prompt, int start_pos,
               std::span<const std::int32_t> context = {}) {
    adapter_from_ = activation_start(context, prompt, start_pos);
    logits_.set(baton::forward(*model_, *ws_, *slice_, *cache_, target_, start_pos, prompt,
                               Logits::last, adapter_from_));
    after_prompt(start_pos, static_cast<int>(prompt.size()), prompt.empty() ? -1 : prompt.back());
  }

  /// The caller ran the prompt's forward itself (the batch scheduler, possibly in chunks
  /// across several batched steps): `tokens` ids ending in `last` were appended at
  /// `start_pos`, and `row` is the last one's logits, the first step's. `adapter_from`: the
  /// activation start the prompt's forward used (activation_start()), which the generated
  /// tokens' forwards keep.
  void prefilled(int start_pos, int tokens, std::int32_t last, logits_view row,
                 int adapter_from = kAdapterFromSlice) {
    logits_.set(row);
    adapter_from_ = adapter_from;
    after_prompt(start_pos, tokens, last);
  }

  /// The activation start of this decoder's slice for a prompt `prompt` at `start_pos` after
  /// `context` (the tokens at [0, start_pos)): kAdapterFromSlice for a plain slice; for an
  /// activated one, where its invocation last occurs (LoraSlice::activation_start), which
  /// needs the whole context (a usage_error naming the gap otherwise).
  int activation_start(std::span<const std::int32_t> context, std::span<const std::int32_t> prompt,
                       int start_pos) const {
    if (!slice_->activated()) return kAdapterFromSlice;
    BATON_CHECK(static_cast<long long>(context.size()) == start_pos, usage_error,
                stage_.empty() ? "" : "stage '", stage_,
                stage_.empty() ? "" : "': ", "the activated LoRA '", slice_->name(), "' needs the ",
                start_pos, " tokens before the prompt (its invocation may lie among them), but ",
                context.size(), " were given");
    return slice_->activation_start(context, prompt, 0);
  }
  /// The activation start the forwards of this generation use (kAdapterFromSlice: a plain
  /// slice's every token).
  int adapter_from() const { return adapter_from_; }

  /// Like prefill(), for `tokens` ids that `fill(exec, ids, desc)` writes into the workspace's
  /// scratch on the device (forward_in_scratch; the relay's hand-off). The host does not
  /// know the prompt's last id: the plan's last_token stays -1 until a token is accepted.
  template <class Fill>
  void prefill_in_scratch(int tokens, int start_pos, Fill&& fill) requires(has_device_loop) {
    // The ids never reach the host, so an activated slice's invocation cannot be looked for.
    BATON_CHECK(!slice_->activated(), usage_error, "the activated LoRA '", slice_->name(),
                "' needs its prompt on the host to find its invocation; prefill() it");
    adapter_from_ = kAdapterFromSlice;
    logits_.set(forward_in_scratch(*model_, *ws_, *slice_, *cache_, target_, start_pos, tokens,
                                   std::forward<Fill>(fill)));
    after_prompt(start_pos, tokens, -1);
  }

  // ---- the step, as separate operations --------------------------------------------------
  /// The plan of the next step, as host interceptors see it.
  StepPlan plan() const {
    StepPlan p{stage_,
               branch_ ? branch_->index() : 0,
               state_.steps,
               state_.origin + state_.steps,
               state_.last_token,
               -1};
    // A host transform's consent to a forced token cannot be asked one id at a time: with
    // one present, no token is forced (the step runs the model with every mask).
    if constexpr (Chain::reports_forced_token && Chain::has_host_members && !backend::is_device)
      if (host_hooks_ && !host_transforms_)
        p.forced_token = Chain::forced_token(branch_->params(), branch_->device_on_host());
    return p;
  }
  /// Feeds the accepted tokens that have not been through the model yet (one after a chosen
  /// token; several after supplied ones, in one batched forward). Nothing to do right after
  /// prefill.
  void forward() {
    if (state_.pending == 0) return;
    const int n = state_.pending;
    const std::span<const std::int32_t> fresh(result_.ids.data() + result_.ids.size() - n,
                                              static_cast<std::size_t>(n));
    logits_.set(baton::forward(*model_, *ws_, *slice_, *cache_, target_, state_.position, fresh,
                               Logits::last, adapter_from_));
    ++result_.forwards;
    kernels::fed(state_);
  }
  /// Rewrites this step's logits before the choice: the chain's device members'
  /// transform_logit over the row, then its host members' transform_logits. Nothing to do
  /// for a chain that does not alter the distribution.
  void transform_logits() { transform_logits(plan()); }
  void transform_logits(const StepPlan& p) {
    if constexpr (Chain::alters_on_device || Chain::alters_on_host) {
      if (!device_transforms_ && !host_transforms_) return;
      const std::span<float> row = logits_.on_host();
      if constexpr (Chain::alters_on_device && !backend::is_device) {
        policy::mask_row(branch_->params(), &branch_->device_on_host(), row.data(), 0,
                         static_cast<int>(row.size()));
      }
      if constexpr (Chain::alters_on_host) {
        if (host_transforms_) chain_->transform_logits(branch_->host(), p, row);
      }
    } else {
      (void)p;
    }
  }
  /// Whether this generation's every step chooses by the plain argmax of its row (no sampler,
  /// no interceptor that reads or rewrites the row), so a caller may choose it beforehand.
  bool chooses_by_argmax() const { return opt_->sampling.plain_greedy() && chooses_from_row(); }
  /// Whether every step chooses from its row as the forward left it, by the argmax or by the
  /// sampler without logit_bias or penalties (which rewrite the row) and without an
  /// interceptor that reads or rewrites it, so a caller may choose it beforehand, on a device
  /// with the sampled rows of a batch (row_sampling(), model/device_choice.hpp).
  bool chooses_from_row() const {
    return opt_->sampling.logit_bias.empty() && !opt_->sampling.penalized() && chooses_by_sampler();
  }
  /// Whether every step's choice is the sampler's alone (no interceptor reads or rewrites the
  /// row): it depends on the row, the options and the penalty counts (row_rewrites()), so a
  /// caller may make it beforehand from a copy of the row (a batch's rows on a device,
  /// model/device_choice.hpp).
  bool chooses_by_sampler() const {
    return !host_hooks_ && !device_transforms_ && !host_transforms_;
  }
  /// This step's draw from row `row` of a batched forward, as the host Sampler would make it
  /// (the same uniform: seed, stream, step, run); its rewrites are row_rewrites(). Requires
  /// chooses_by_sampler().
  kernels::RowSampling row_sampling(int row) const {
    return {row, opt_->sampling.draw(state_.steps)};
  }
  /// What rewrites this step's row before the draw: the options' logit_bias and the penalty
  /// counts so far (empty when the options have none). Valid until the step's token is accepted.
  RowRewrites row_rewrites() const { return {opt_->sampling.logit_bias, sampler_.seen()}; }
  /// How the sampler draws on this backend: with its row passes when it has them
  /// (BackendOps<host>::draw_token), else kernels::draw_token.
  static Sampler::TokenDrawer drawer() {
    if constexpr (requires { &ops::draw_token; })
      return &ops::draw_token;
    else
      return &kernels::draw_token<kernels::RowPasses>;
  }
  /// This step's choice from `row` (the step's logits on the host, as the forward left them),
  /// with its log-probabilities when the options ask for them: what choose_step() would
  /// choose, the row untouched. Requires chooses_from_row(). Generations choose this way on
  /// different threads at once (each with its own sampler: the batch scheduler's host rows);
  /// the result goes back through chosen_for_step().
  /// `work`: a scratch lent for the draw (a pool's), else the generation's own.
  StepChoice choice_from_row(std::span<const float> row,
                             const kernels::SampleScratch* work = nullptr) {
    BATON_CHECK(chooses_from_row(), usage_error,
                "Decoder: choice_from_row() on a generation that does not choose from its row "
                "as it is");
    return sampler_.choose_as_is(row, state_.steps, drawer(), work);
  }
  /// choice_from_row() for a generation whose options rewrite its row (logit_bias, penalties):
  /// the choice its step would make, rewriting `row` in place as its step would, so `row` must
  /// be this generation's own (no other choice reads it afterwards). Requires
  /// chooses_by_sampler().
  StepChoice choice_rewriting_row(std::span<float> row,
                                  const kernels::SampleScratch* work = nullptr) {
    BATON_CHECK(chooses_by_sampler(), usage_error,
                "Decoder: choice_rewriting_row() on a generation whose interceptors read or "
                "rewrite its row");
    return sampler_.choose(row, state_.steps, drawer(), work);
  }
  /// The caller chose this step's token already, from the step's row by this generation's
  /// sampler (the batch scheduler chooses its rows together on a device:
  /// model/device_choice.hpp; or on host threads, choice_from_row() / choice_rewriting_row()),
  /// with its log-probabilities when the options ask for them; choose_step() takes it instead
  /// of choosing again. Requires chooses_by_sampler().
  void chosen_for_step(const StepChoice& c) {
    BATON_CHECK(chooses_by_sampler(), usage_error,
                "Decoder: chosen_for_step() on a generation whose interceptors read or rewrite "
                "its row");
    chosen_ = c.id;
    if (opt_->sampling.logprobs) step_logprobs_ = c.logprobs;
  }
  /// The choice for this step, after the chain's transforms (transform_logits), by the
  /// options' sampler (model/sampling.hpp; greedy: the exact argmax, the largest logit and the
  /// lowest id on a tie), which rewrites the row in place (logit_bias, penalties) and notes the
  /// token's log-probabilities when asked. The row is chosen from where it is: on the host, with
  /// the backend's row passes when it has them (BackendOps<host>::draw_token); on a backend with
  /// a device loop, a greedy row whose host copy is not needed by the split argmax kernels
  /// (model/device_choice.hpp: one wait for the id), any other row copied to the host first.
  /// Non-finite logits (NaN/Inf weights, an overflow) are a numeric_error: an id chosen from
  /// them would be nonsense printed as if it were output (baton's NaN policy,
  /// docs/security.md). A row the chain masked entirely (every logit -Inf) is the same error.
  std::int32_t choose_step() {
    std::int32_t id = -1;
    if (chosen_) {  // chosen with the rest of a batch (chosen_for_step)
      id = *std::exchange(chosen_, std::nullopt);
    } else if (!argmax_on_device(id)) {
      const StepChoice c = sampler_.choose(logits_.on_host(), state_.steps, drawer());
      id = c.id;
      if (opt_->sampling.logprobs) step_logprobs_ = c.logprobs;
    }
    if (id < 0) [[unlikely]]
      fail_no_choice();
    return id;
  }
  /// Takes `token` as this step's output, by the one accept step (kernels/accept.hpp, the
  /// device loop's too): a stop id ends the generation (not kept); a stop asked by chain member
  /// `stopper` (>= 0) ends it after the token; reaching max_new ends it; otherwise a later
  /// forward() feeds the token back.
  void accept(std::int32_t token, int stopper = -1) {
    if (state_.done) return;
    const kernels::Accepted verdict = policy::accept(state_, token, stopper, opt_->stop_ids.data(),
                                                     static_cast<int>(opt_->stop_ids.size()));
    switch (verdict) {
      case kernels::Accepted::invalid:  // choose_step() never returns one: a supplied token
        BATON_FAIL(usage_error, stage_.empty() ? "" : "stage '", stage_,
                   stage_.empty() ? "" : "': ", "decode step ", state_.steps,
                   ": the supplied token ", token, " is not an id");
      case kernels::Accepted::stop_id:
        result_.stopped = true;
        result_.stop_id = token;
        return;
      case kernels::Accepted::keep:
      case kernels::Accepted::keep_last:
        break;
    }
    result_.ids.push_back(token);
    sampler_.accepted(token);
    if (opt_->sampling.logprobs)  // a supplied token: probability 1, no alternatives
      result_.logprobs.push_back(step_logprobs_.id == token ? step_logprobs_
                                                            : TokenLogprobs{token});
    step_logprobs_.id = -1;
    if (stopper >= 0) note_stopped_by(stopper);
  }

  /// One whole step (the order above); `hooks` observe steps that ran a forward. Returns
  /// whether the generation goes on.
  template <class Hooks = NoDecodeHooks>
  bool step(Hooks&& hooks = {}) {
    if (state_.done) return false;
    if (begin_step()) forward();
    return finish_step(std::forward<Hooks>(hooks));
  }

  /// A step in two halves, for a caller that runs the forward itself (the batch scheduler
  /// runs one forward over the pending tokens of many generations): begin_step() runs the host
  /// members' before_step, which may supply the token; when it returns true the step needs a
  /// forward of pending_tokens() at position(), and the caller runs forward() or its own and
  /// hands the row to forwarded(); then finish_step() chooses and accepts. step() is exactly
  /// begin_step(), forward(), finish_step().
  bool begin_step() {
    BATON_CHECK(!state_.done, usage_error, "Decoder: begin_step() on a finished generation");
    if constexpr (backend::is_device && Chain::has_device_members) {
      // The host cannot run device members on a device backend (their params and states are
      // device memory): they run only inside the device loop.
      // A branch with params of its own (a request's stop strings) has a device member too.
      BATON_CHECK(!chain_ || !(chain_->device_members_present() || branch_->has_own_params()),
                  usage_error, "Decoder: on ", backend::name,
                  ", device interceptors run only in the device-resident loop "
                  "(run() without hooks, at most ",
                  kernels::kMaxDeviceStopIds, " stop ids)");
    }
    plan_ = plan();
    supplied_.reset();
    if constexpr (Chain::has_host_members) {
      if (host_hooks_) {
        ++result_.host_waits;
        supplied_ = chain_->before_step(branch_->host(), plan_);
      }
    }
    skipped_ = supplied_.has_value();
    logits_.new_step();
    return !skipped_ && state_.pending > 0;
  }

  /// The accepted ids a forward must feed before this step can choose (see begin_step()).
  std::span<const std::int32_t> pending_tokens() const {
    const auto n = static_cast<std::size_t>(state_.pending);
    return {result_.ids.data() + result_.ids.size() - n, n};
  }

  /// The caller ran the forward of pending_tokens() at position() itself (the batch
  /// scheduler): `row` is its last row of logits, which this step chooses from.
  void forwarded(logits_view row) {
    BATON_CHECK(state_.pending > 0, usage_error, "Decoder: forwarded() with no pending tokens");
    logits_.set(row);
    ++result_.forwards;
    kernels::fed(state_);
  }

  /// The second half of a step (see begin_step()): hooks, transforms, the choice, the host
  /// members' after_step and accept. Returns whether the generation goes on.
  template <class Hooks = NoDecodeHooks>
  bool finish_step(Hooks&& hooks = {}) {
    const StepPlan& p = plan_;
    std::optional<std::int32_t> supplied = supplied_;
    const bool skipped = skipped_;
    int stopper = -1;  // the chain member that asks to stop after this step's token
    if (!skipped) {
      BATON_CHECK(state_.pending == 0, usage_error,
                  "Decoder: finish_step() before the step's forward (", state_.pending,
                  " pending tokens)");
      supplied = hooks.before(step_view{p.step, p.position, logits_.view()});
      if constexpr (backend::is_device) {
        if (host_hooks_) logits_.on_host();      // host members see the logits on the host
        if (!host_hooks_) ++result_.host_waits;  // the choice waits for the id or the row
      }
    }
    if (!supplied) transform_logits(p);
    const std::int32_t token = supplied ? *supplied : choose_step();
    if (skipped) ++result_.skipped;

    if constexpr (Chain::has_device_members && !backend::is_device)
      stopper = policy::advance(branch_->params(), &branch_->device_on_host(), token);
    if constexpr (Chain::has_host_members) {
      if (host_hooks_) {
        const StepOutcome outcome{p, token, skipped,
                                  skipped ? std::span<const float>{} : logits_.on_host()};
        const int k = chain_->after_step(branch_->host(), outcome);
        if (k >= 0 && stopper < 0 && may_end()) stopper = k;
      }
    }
    hooks.after(step_view{p.step, p.position, skipped ? logits_view{} : logits_.view()}, token);
    accept(token, stopper);
    return !state_.done;
  }
  /// Steps until done. Without observer hooks, on a backend with a device loop, and with no
  /// host interceptor present, the remaining steps run device-resident (run_on_device());
  /// otherwise one step() at a time.
  template <class Hooks = NoDecodeHooks>
  void run(Hooks&& hooks = {}) {
    if constexpr (has_device_loop && std::is_same_v<std::remove_cvref_t<Hooks>, NoDecodeHooks>) {
      if (device_loop_applies()) {
        run_on_device();
        return;
      }
    }
    while (step(hooks)) {
    }
  }

  /// Whether run() would keep the rest of this generation on the device: the backend's rule
  /// (device_loop_takes) and the sampler's (device_loop_samples: the device step samples as
  /// this loop does, log-probabilities included).
  bool device_loop_applies() const {
    return !state_.done && device_loop_samples(opt_->sampling, state_.steps) &&
           device_loop_takes<backend>(host_hooks_, opt_->stop_ids.size());
  }

  /// The rest of the generation on the device: feeds pending tokens, then queues every step,
  /// the caller's `after` launches (run_device_loop: a relay's device gate, whose verdict lands
  /// in DecodeResult::loop_verdict) and reads the outcome once (one host wait). Requires
  /// device_loop_applies().
  template <class After = NoLaunchesAfterLoop>
  void run_on_device(After&& after = {}) requires(has_device_loop) {
    BATON_CHECK(device_loop_applies(), usage_error,
                "Decoder: the device loop does not apply (done, host interceptors present, "
                "more than ",
                kernels::kMaxDeviceStopIds, " stop ids, or sampling options it cannot run)");
    forward();  // the logits are then the current step's
    const DeviceLoopStart start{state_, opt_->stop_ids, position_skew_, adapter_from_,
                                &opt_->sampling};
    typename Chain::device_params none{};
    typename Chain::device_state* states = nullptr;
    if constexpr (Chain::has_device_members) states = raw_pointer(branch_->device().data());
    DeviceLoopOutcome out;
    try {
      out = run_device_loop<Chain>(*model_, *slice_, *cache_, *ws_, target_, start,
                                   branch_ ? branch_->params() : none, states,
                                   std::forward<After>(after));
    } catch (...) {
      state_.done = 1;  // the request is abandoned; the cache's bookkeeping is committed
      throw;
    }
    result_.ids.insert(result_.ids.end(), out.ids.begin(), out.ids.end());
    result_.logprobs.insert(result_.logprobs.end(), out.logprobs.begin(), out.logprobs.end());
    result_.forwards += out.appended;
    ++result_.host_waits;
    result_.loop_verdict = out.state.verdict;
    state_ = out.state.step;
    if (state_.stop_id >= 0) {
      result_.stopped = true;
      result_.stop_id = state_.stop_id;
    }
    if (state_.stopped_by >= 0) note_stopped_by(state_.stopped_by);
  }

  /// Test hook: the device loop adds `skew` to every write position its steps compute, so
  /// its position check fails (tests of the device-side check; never set otherwise).
  void set_position_skew_for_testing(int skew) { position_skew_ = skew; }

  bool done() const { return state_.done != 0; }
  int position() const { return state_.position; }
  int steps() const { return state_.steps; }
  const DecodeState& state() const { return state_; }
  logits_view logits() const { return logits_.view(); }
  const DecodeResult& result() const { return result_; }
  DecodeResult take_result() { return std::move(result_); }

 private:
  /// The loop's state once a prompt of `tokens` ids ending in `last` (-1: unknown) is in.
  void after_prompt(int start_pos, int tokens, std::int32_t last) {
    ++result_.forwards;
    state_ = kernels::state_after_prompt(start_pos, tokens, last, opt_->max_new);
    // A member complete before the first step (a grammar matching only the empty string)
    // allows no token: the generation ends here, empty, stopped by it.
    if constexpr (Chain::size > 0) {
      if (chain_ && !state_.done) {
        if (const int k = chain_->complete_at_start(); k >= 0) {
          note_stopped_by(k);
          state_.done = 1;
        }
      }
    }
  }
  /// Chain member `k` ended the generation.
  void note_stopped_by(int k) {
    result_.stopped = true;
    if constexpr (Chain::size > 0)
      result_.stopped_by = Chain::plugin_ids[static_cast<std::size_t>(k)];
    else
      (void)k;
  }

  Decoder(const Model& model, const Slice& slice, Cache& cache, Workspace<backend>& ws,
          KvTarget target, const DecodeOptions& opt, const Chain* chain, branch_type* branch,
          std::string_view stage)
      : model_(&model),
        slice_(&slice),
        cache_(&cache),
        ws_(&ws),
        target_(target),
        opt_(&opt),
        chain_(chain),
        branch_(branch),
        stage_(stage),
        host_hooks_(chain && chain->host_members_present()),
        device_transforms_(chain && chain->device_transforms_present()),
        host_transforms_(chain && chain->host_transforms_present()),
        sampler_(opt.sampling, model.config().vocab_size, opt.max_new) {
    opt.sampling.check(model.config().vocab_size,
                       stage.empty() ? std::string() : "stage '" + std::string(stage) + "': ");
    result_.ids.reserve(opt.max_new > 0 ? opt.max_new : 0);
    if (opt.sampling.logprobs) result_.logprobs.reserve(opt.max_new > 0 ? opt.max_new : 0);
    if constexpr (backend::is_device) {
      // Host members run step by step on the host, which cannot read device members' params
      // and states (device memory); both kinds in one generation need the host backend.
      BATON_CHECK(!(host_hooks_ && chain->device_members_present()), usage_error, "Decoder: on ",
                  backend::name, ", stage '", stage,
                  "' has host interceptors and device interceptors present together; host "
                  "interceptors run in the stepped loop, device ones only in the device loop "
                  "(use baton::host for both, or drop one kind)");
    }
  }

  /// Whether the device members let the output end after this step (Chain::may_end; device
  /// members never run in the stepped loop of a device backend).
  bool may_end() const {
    if constexpr (Chain::has_device_members && !backend::is_device) {
      return Chain::may_end(branch_->params(), branch_->device_on_host());
    } else {
      return true;
    }
  }
  /// choose_step() found no finite logit: either the chain's members left no token in common (a
  /// usage_error naming them; host backends can ask each member) or the logits were not finite.
  [[noreturn]] void fail_no_choice() const {
    if constexpr (Chain::alters_on_device && !backend::is_device) {
      if (device_transforms_) {
        const std::string why = chain_->explain_no_token(
            branch_->params(), branch_->device_on_host(), static_cast<int>(logits_.size()));
        if (!why.empty())
          BATON_FAIL(usage_error, stage_.empty() ? "" : "stage '", stage_,
                     stage_.empty() ? "" : "': ", "decode step ", state_.steps, ": ", why);
      }
    }
    BATON_FAIL(
        numeric_error, "decode step ", state_.steps, " at position ", state_.origin + state_.steps,
        ": the logits are not finite (NaN or Inf); the model or adapter "
        "weights hold non-finite values or the computation overflowed",
        Chain::distribution_altering ? ", or the interceptors' masks left no token in common" : "");
  }

  /// On a backend with a device loop, a plain greedy step whose row is not on the host chooses
  /// with the split argmax kernels where the row is (one wait for the id): true, with `id`.
  bool argmax_on_device(std::int32_t& id) {
    if constexpr (has_device_loop) {
      if (sampler_.active() || logits_.copied()) return false;
      const int row = 0;
      argmax_rows(*ws_, logits_pointer(logits_.view()), static_cast<int>(logits_.size()),
                  std::span<const int>(&row, 1), std::span<std::int32_t>(&id, 1));
      return true;
    } else {
      (void)id;
      return false;
    }
  }
  const Model* model_;
  const Slice* slice_;
  Cache* cache_;
  Workspace<backend>* ws_;
  KvTarget target_;
  const DecodeOptions* opt_;
  const Chain* chain_;
  branch_type* branch_;
  std::string_view stage_;
  // Which parts of the chain take part (all of a static chain; the present ones of a chain
  // built at run time), fixed for the generation.
  bool host_hooks_ = false;
  bool device_transforms_ = false;
  bool host_transforms_ = false;
  int position_skew_ = 0;
  int adapter_from_ = kAdapterFromSlice;     ///< the slice's activation start, fixed at prefill
  StepLogits<backend, logits_view> logits_;  ///< this step's row, and its host copy
  Sampler sampler_;                          // the options' sampling state (inactive when greedy)
  TokenLogprobs step_logprobs_;              // this step's, from choose_step(), until accept()
  DecodeState state_;
  DecodeResult result_;
  // The step between begin_step() and finish_step().
  StepPlan plan_{};
  std::optional<std::int32_t> supplied_;
  bool skipped_ = false;
  std::optional<std::int32_t> chosen_;  ///< chosen_for_step()'s id, until choose_step() takes it
};

/// Appends `prompt` to `target` at `start_pos` and generates greedily: the Decoder without
/// hooks.
template <class Model, class Slice, class Cache>
DecodeResult greedy_decode(const Model& model, Workspace<typename Model::backend>& ws,
                           const Slice& slice, Cache& cache, KvTarget target, int start_pos,
                           std::span<const std::int32_t> prompt, const DecodeOptions& opt) {
  if (opt.max_new <= 0) return {};
  Decoder<Model, Slice, Cache> d(model, slice, cache, ws, target, opt);
  d.prefill(prompt, start_pos);
  d.run();
  return d.take_result();
}

}  // namespace baton
