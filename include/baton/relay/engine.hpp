// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief The relay engine: assembles each stage's input from its segments, runs the stages
///        in order, gates on the last one, and loops for more cycles until the gate passes.
///
/// Both faces of a relay use this engine: Relay<Stages...> (wiring checked at compile time)
/// and a relay built at run time from a JSON file (wiring checked here, at construction).
///
/// On a backend with a device loop (baton::cuda, the host grid) the hand-off runs on the
/// device (relay/device_handoff.hpp): a stage that takes the device loop gets its input
/// assembled there from backend memory, and a built-in gate is evaluated there on the last
/// stage's output, its verdict read at that stage's one wait. A stage with host interceptors
/// (the stepped loop) and a custom gate keep the host's way: the ids each stage's wait
/// brought back. On the host backends everything is assembled and gated on the host.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "baton/core/error.hpp"
#include "baton/relay/device_handoff.hpp"
#include "baton/relay/gate.hpp"
#include "baton/relay/result.hpp"
#include "baton/relay/stage.hpp"

namespace baton {

/// How a relay run loops.
struct RelayOptions {
  int max_cycles = 1;            ///< cycles at most (a cycle = the stages from loop_from on)
  std::optional<int> loop_from;  ///< first stage of cycles 2, 3, ... (default: the second)
  Gate gate;                     ///< on the last stage's output; none = pass after one cycle
};

template <Backend B>
class RelayEngine {
 public:
  /// Validates the wiring: every out<K> names an earlier stage, every feedback<K> a stage of
  /// the relay, names are unique, all stages share one model. Errors name stage and segment.
  explicit RelayEngine(std::vector<StageBase<B>*> stages) : stages_(std::move(stages)) {
    const int n = size();
    BATON_CHECK(n > 0, wiring_error, "a relay needs at least one stage");
    for (int i = 0; i < n; ++i) {
      const StageBase<B>& st = *stages_[i];
      BATON_CHECK(st.model_identity() == stages_[0]->model_identity(), wiring_error, "stage ", i,
                  " '", st.name(), "' uses a different model than stage 0 '", stages_[0]->name(),
                  "'; a relay shares one frozen model");
      for (int j = 0; j < i; ++j)
        BATON_CHECK(stages_[j]->name() != st.name(), wiring_error, "stages ", j, " and ", i,
                    " are both named '", st.name(), "'");
      const auto& segs = st.input_segments();
      BATON_CHECK(!segs.empty(), wiring_error, "stage ", i, " '", st.name(),
                  "' has no input segments");
      for (std::size_t s = 0; s < segs.size(); ++s) {
        const Segment& g = segs[s];
        if (g.kind == Segment::Kind::output) {
          BATON_CHECK(g.stage >= 0 && g.stage < i, wiring_error, "stage ", i, " '", st.name(),
                      "' segment ", s, " (", g.describe(),
                      "): a stage may only read the output of an earlier stage (0..", i - 1, ")");
        } else if (g.kind == Segment::Kind::feedback) {
          BATON_CHECK(g.stage >= 0 && g.stage < n, wiring_error, "stage ", i, " '", st.name(),
                      "' segment ", s, " (", g.describe(), "): the relay has stages 0..", n - 1);
        }
      }
    }
    latest_.resize(n);
    previous_.resize(n);
    if constexpr (kSharedContext) share_one_context();
  }
  RelayEngine(const RelayEngine&) = delete;
  RelayEngine& operator=(const RelayEngine&) = delete;
  ~RelayEngine() {
    if constexpr (kSharedContext) {
      // The workspaces outlive the engine (the stages belong to the caller): leave none bound
      // to the context that goes with it, after its queued work is done.
      if (own_context_)
        for (StageBase<B>* st : stages_)
          for (Workspace<B>& ws : st->workspaces()) ws.extras.unbind();
    }
  }

  /// Whether this backend's workspaces run on an execution context (a stream on baton::cuda,
  /// its stand-in on the host grid) that a relay must share among all its stages.
  static constexpr bool kSharedContext = requires(Workspace<B> & w) { w.extras.bound_context(); };
  /// The context every stage runs on, once checked (device-loop backends).
  auto* context() requires kSharedContext { return context_; }

  int size() const { return static_cast<int>(stages_.size()); }
  StageBase<B>& stage(int i) { return *stages_.at(i); }

  /// Pre-warms every stage (each computes its prefix once); on a device-loop backend also
  /// writes the literal segments' ids into backend memory, once.
  void prewarm() {
    for (StageBase<B>* s : stages_) s->prewarm();
    if constexpr (kDeviceHandoff) handoff_.prepare(stages_);
  }

  /// Whether this engine's backend hands off on the device.
  static constexpr bool kDeviceHandoff = HasDeviceLoop<B>;

  /// Runs the relay on `request`. Throws what a stage or the gate throws; the stages' caches
  /// stay usable (their prefixes are never written by a request).
  RelayResult run(std::span<const std::int32_t> request, const RelayOptions& opt) {
    RelayResult r;
    run_into(r, request, opt);
    return r;
  }

  /// Like run(), but a failure ends in a result with verdict `error`, the message, the runs
  /// that completed, and the timings — never an exception from a stage or the gate.
  RelayResult try_run(std::span<const std::int32_t> request, const RelayOptions& opt) {
    RelayResult r;
    try {
      run_into(r, request, opt);
    } catch (const std::exception& e) {
      r.verdict = Verdict::error;
      r.error = e.what();
    }
    return r;
  }

  /// How many ids stage `i` reads: the host knows every segment's length (outputs from their
  /// stages' waits), which sizes a device hand-off's prefill.
  int input_length(int i, std::span<const std::int32_t> request) const {
    std::size_t n = 0;
    for (const Segment& g : stages_.at(i)->input_segments()) {
      switch (g.kind) {
        case Segment::Kind::literal:
          n += g.ids.size();
          break;
        case Segment::Kind::request:
          n += request.size();
          break;
        case Segment::Kind::output:
          n += latest_[g.stage].size();
          break;
        case Segment::Kind::feedback:
          n += previous_[g.stage].size();
          break;
      }
    }
    return static_cast<int>(n);
  }

  /// The ids stage `i` reads, assembled from its segments (exposed for tests and tools).
  std::vector<std::int32_t> assemble(int i, std::span<const std::int32_t> request) const {
    std::vector<std::int32_t> in;
    for (const Segment& g : stages_.at(i)->input_segments()) {
      switch (g.kind) {
        case Segment::Kind::literal:
          in.insert(in.end(), g.ids.begin(), g.ids.end());
          break;
        case Segment::Kind::request:
          in.insert(in.end(), request.begin(), request.end());
          break;
        case Segment::Kind::output:
          in.insert(in.end(), latest_[g.stage].begin(), latest_[g.stage].end());
          break;
        case Segment::Kind::feedback:
          in.insert(in.end(), previous_[g.stage].begin(), previous_[g.stage].end());
          break;
      }
    }
    return in;
  }

 private:
  using clock = std::chrono::steady_clock;
  static double ms_since(clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(clock::now() - t0).count();
  }

  void run_into(RelayResult& r, std::span<const std::int32_t> request, const RelayOptions& opt) {
    const auto t0 = clock::now();
    // Timings are set however the run ends: normal return, early pass, or exception.
    struct SetTotal {
      RelayResult& r;
      clock::time_point t0;
      ~SetTotal() { r.total_ms = ms_since(t0); }
    } set_total{r, t0};

    const int n = size();
    const int loop_from = opt.loop_from.value_or(n > 1 ? 1 : 0);
    BATON_CHECK(opt.max_cycles >= 1, usage_error, "relay: max_cycles must be >= 1 (got ",
                opt.max_cycles, ")");
    BATON_CHECK(loop_from >= 0 && loop_from < n, usage_error, "relay: loop_from ", loop_from,
                " is not a stage (0..", n - 1, ")");
    r.stages = n;
    for (auto& v : latest_) v.clear();
    for (auto& v : previous_) v.clear();
    if constexpr (kDeviceHandoff) {
      if (!handoff_.prepared()) handoff_.prepare(stages_);
      handoff_.begin_request(request, opt.gate);
    }

    for (int cycle = 1; cycle <= opt.max_cycles; ++cycle) {
      r.cycles = cycle;
      if (cycle > 1) {
        previous_ = latest_;  // feedback<K> reads what K produced last cycle
        if constexpr (kDeviceHandoff) handoff_.begin_cycle();
      }
      std::optional<bool> device_verdict;
      for (int i = cycle == 1 ? 0 : loop_from; i < n; ++i) {
        StageRun run{i, cycle, stages_[i]->name(), {}, false, 0, 0};
        const auto ts = clock::now();
        try {
          DecodeResult g = run_stage(i, request, opt, run);
          run.ids = std::move(g.ids);
          run.stopped = g.stopped;
          run.stopped_by = std::string(g.stopped_by);
          run.forwards = g.forwards;
          run.skipped = g.skipped;
          run.host_waits = g.host_waits;
          run.trace = std::move(g.trace);
          if (g.device_gate >= 0) {
            run.gate_on_device = true;
            device_verdict = g.device_gate == 1;
          }
        } catch (...) {
          run.ms = ms_since(ts);
          r.runs.push_back(std::move(run));
          throw;
        }
        run.ms = ms_since(ts);
        latest_[i] = run.ids;
        r.runs.push_back(std::move(run));
      }
      const bool pass = device_verdict
                            ? *device_verdict
                            : !opt.gate || opt.gate(std::span<const std::int32_t>(latest_[n - 1]));
      r.verdict = pass ? Verdict::pass : Verdict::fail;
      if (pass) break;
    }
  }

  /// Runs stage `i` with its input handed off on the device where it can, else assembled on
  /// the host; fills `run`'s input facts.
  DecodeResult run_stage(int i, std::span<const std::int32_t> request, const RelayOptions& opt,
                         StageRun& run) {
    if constexpr (kDeviceHandoff) {
      if (handoff_.applies(i)) {
        run.input_tokens = input_length(i, request);
        run.input_on_device = true;
        const bool gates = i == size() - 1 && opt.gate.built_in();
        DecodeResult g = stages_[i]->run_handed_off(
            handoff_.plan(i), run.input_tokens, gates ? handoff_.gate() : kernels::DeviceGate{}, 0);
        handoff_.ran_on_device(i);
        return g;
      }
    }
    const std::vector<std::int32_t> input = assemble(i, request);
    run.input_tokens = static_cast<int>(input.size());
    DecodeResult g = stages_[i]->run(input, 0);
    if constexpr (kDeviceHandoff) handoff_.ran_on_host(i, g.ids);
    return g;
  }

  /// One stream per relay: every workspace of every stage bound to the same context, or none
  /// bound (the engine then binds them all to one of its own). Anything else would let one
  /// stage read ids or K/V another stream has not finished writing: refused here.
  void share_one_context() {
    using Ctx = context_type;
    const Ctx* seen = nullptr;
    std::string seen_at;
    bool unbound = false;
    std::string unbound_at;
    for (StageBase<B>* st : stages_) {
      int slot = 0;
      for (Workspace<B>& ws : st->workspaces()) {
        const std::string at = "stage '" + st->name() + "' slot " + std::to_string(slot++);
        const Ctx* c = ws.extras.bound_context();
        if (c == nullptr) {
          if (!unbound) unbound_at = at;
          unbound = true;
        } else if (seen == nullptr) {
          seen = c;
          seen_at = at;
        } else {
          BATON_CHECK(c == seen, usage_error, "relay: ", at,
                      " is bound to another execution "
                      "context than ",
                      seen_at,
                      "; the stages of a relay run on one stream (bind "
                      "every workspace to the same context, or none)");
        }
      }
    }
    BATON_CHECK(seen == nullptr || !unbound, usage_error, "relay: ", seen_at,
                " is bound to an execution context but ", unbound_at,
                " is not; the stages of a relay run on one stream (bind every workspace to the "
                "same context, or none)");
    if (seen == nullptr) {
      own_context_ = std::make_shared<Ctx>();
      for (StageBase<B>* st : stages_)
        for (Workspace<B>& ws : st->workspaces()) ws.extras.bind(*own_context_);
      context_ = own_context_.get();
    } else {
      context_ = const_cast<Ctx*>(seen);
    }
  }

  using context_type = exec_context_t<B>;
  std::shared_ptr<context_type> own_context_;  // the context of a relay nobody bound
  context_type* context_ = nullptr;

  std::vector<StageBase<B>*> stages_;
  std::vector<std::vector<std::int32_t>> latest_;    // each stage's latest output
  std::vector<std::vector<std::int32_t>> previous_;  // ... as of the start of this cycle
  DeviceHandoff<B> handoff_;  // device-loop backends: the same, in backend memory
};

}  // namespace baton
