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
///
/// A relay whose stages read a shared sequence (activated adapters: relay/shared_sequence.hpp)
/// starts each request by appending its opening there, and after each stage run (but the
/// relay's last) appends that stage's turn: what it read after the shared sequence, its output
/// and the turn's end. Stages that do not read it (plain LoRA, own prefix) run as always; their
/// turns are their outputs alone.
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
#include "baton/relay/relay_cursor.hpp"
#include "baton/relay/result.hpp"
#include "baton/relay/stage.hpp"

namespace baton {

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
        } else if (g.kind == Segment::Kind::shared) {
          BATON_CHECK(s == 0 && st.shared_sequence() != nullptr, wiring_error, "stage ", i, " '",
                      st.name(), "' segment ", s,
                      " (shared): a stage reads the shared sequence first, and only once it "
                      "was given one (Stage::read_shared)");
        }
      }
      if (SharedSequenceBase<B>* sh = st.shared_sequence()) {
        BATON_CHECK(shared_ == nullptr || shared_ == sh, wiring_error, "stage ", i, " '", st.name(),
                    "' reads another shared sequence than an earlier stage; a relay "
                    "has one");
        BATON_CHECK(sh->model_identity() == stages_[0]->model_identity(), wiring_error,
                    "the shared sequence of stage ", i, " '", st.name(),
                    "' uses a different model than the relay");
        shared_ = sh;
      }
    }
    if constexpr (kSharedContext) share_one_context();
  }
  RelayEngine(const RelayEngine&) = delete;
  RelayEngine& operator=(const RelayEngine&) = delete;
  ~RelayEngine() {
    if constexpr (kSharedContext) {
      // The workspaces outlive the engine (the stages belong to the caller): leave none bound
      // to the context that goes with it, after its queued work is done.
      if (own_context_)
        for_each_workspace([](const auto&, Workspace<B>& ws) { ws.extras.unbind(); });
    }
  }

  /// Whether this backend's workspaces run on an execution context (a stream on baton::cuda,
  /// its stand-in on the host grid) that a relay must share among all its stages.
  static constexpr bool kSharedContext = requires(Workspace<B> & w) { w.extras.bound_context(); };
  /// The context every stage runs on, once checked (device-loop backends).
  auto* context() requires kSharedContext { return context_; }

  int size() const { return static_cast<int>(stages_.size()); }
  StageBase<B>& stage(int i) { return *stages_.at(i); }
  /// The shared sequence the stages read, or nullptr.
  SharedSequenceBase<B>* shared_sequence() { return shared_; }

  /// Pre-warms every stage (each computes its prefix once); on a device-loop backend also
  /// writes the literal segments' ids into backend memory, once.
  void prewarm() {
    if (shared_) shared_->prewarm();
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

 private:
  using clock = std::chrono::steady_clock;
  static double ms_since(clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(clock::now() - t0).count();
  }

  void run_into(RelayResult& r, std::span<const std::int32_t> request, const RelayOptions& opt) {
    const auto t0 = clock::now();
    RelayCursor cur(size(), request, opt);
    // The result and its total time however the run ends: normal return, early pass, or
    // exception (with the runs that completed and the failed one's time).
    struct Finish {
      RelayResult& r;
      RelayCursor& cur;
      clock::time_point t0;
      ~Finish() {
        r = std::move(cur.result());
        r.total_ms = ms_since(t0);
      }
    } finish{r, cur, t0};

    if constexpr (kDeviceHandoff) {
      if (!handoff_.prepared()) handoff_.prepare(stages_);
      handoff_.begin_request(request, opt.gate);
    }
    if (shared_)
      extend_shared(cur, [&] { return shared_->begin(cur.assemble(shared_->opening()), 0); });
    int cycle = 1;
    while (!cur.done()) {
      if (cur.cycle() != cycle) {
        cycle = cur.cycle();
        if constexpr (kDeviceHandoff) handoff_.begin_cycle();
      }
      const int i = cur.stage();
      StageRun run{i, cycle, stages_[i]->name(), {}, false, 0, 0};
      const auto ts = clock::now();
      DecodeResult g;
      std::vector<std::int32_t> own_input;  // a shared-sequence reader's input: its turn's start
      try {
        g = run_stage(cur, opt, run, own_input);
      } catch (const std::exception& e) {
        run.ms = ms_since(ts);
        cur.fail(std::move(run), e.what());
        throw;
      } catch (...) {
        run.ms = ms_since(ts);
        cur.fail(std::move(run), "a stage threw an object that is not a std::exception");
        throw;
      }
      run.ms = ms_since(ts);
      cur.record(std::move(run), std::move(g));
      if (shared_ && !cur.done()) {
        const std::vector<std::int32_t>& output = cur.result().runs.back().ids;
        extend_shared(cur, [&] { return shared_->append_turn(own_input, output, 0); });
      }
    }
  }

  /// Runs `append` (one base forward into the shared sequence), counting its tokens and time in
  /// the cursor's result.
  template <class F>
  void extend_shared(RelayCursor& cur, F&& append) {
    const auto ts = clock::now();
    const int n = append();
    cur.result().shared_tokens += n;
    cur.result().shared_ms += ms_since(ts);
  }

  /// Runs stage cur.stage() with its input handed off on the device where it can, else
  /// assembled on the host; fills `run`'s input facts.
  DecodeResult run_stage(const RelayCursor& cur, const RelayOptions& opt, StageRun& run,
                         std::vector<std::int32_t>& own_input) {
    const int i = cur.stage();
    StageBase<B>& st = *stages_[i];
    if constexpr (kDeviceHandoff) {
      if (handoff_.applies(i)) {
        run.input_tokens = cur.input_length(st.input_segments());
        run.input_on_device = true;
        const bool gates = cur.at_last_stage() && opt.gate.built_in();
        DecodeResult g =
            st.run_handed_off(handoff_.plan(i), run.input_tokens,
                              gates ? handoff_.gate() : kernels::DeviceGate{}, 0, run.cycle);
        handoff_.ran_on_device(i);
        return g;
      }
    }
    std::vector<std::int32_t> input = cur.assemble(st.input_segments());
    run.input_tokens = static_cast<int>(input.size());
    DecodeResult g = st.run_in_cycle(input, 0, run.cycle);
    if (st.shared_sequence()) own_input = std::move(input);
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
    for_each_workspace([&](const auto& where, Workspace<B>& ws) {
      {
        const std::string at = where();
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
    });
    BATON_CHECK(seen == nullptr || !unbound, usage_error, "relay: ", seen_at,
                " is bound to an execution context but ", unbound_at,
                " is not; the stages of a relay run on one stream (bind every workspace to the "
                "same context, or none)");
    if (seen == nullptr) {
      own_context_ = std::make_shared<Ctx>();
      for_each_workspace([&](const auto&, Workspace<B>& ws) { ws.extras.bind(*own_context_); });
      context_ = own_context_.get();
    } else {
      context_ = const_cast<Ctx*>(seen);
    }
  }

  /// `f(where, ws)` for every workspace of every stage and of the shared sequence; `where()`
  /// names it for a message.
  template <class F>
  void for_each_workspace(F&& f) {
    for (StageBase<B>* st : stages_) {
      int slot = 0;
      for (Workspace<B>& ws : st->workspaces()) {
        f([&] { return "stage '" + st->name() + "' slot " + std::to_string(slot); }, ws);
        ++slot;
      }
    }
    if (shared_) {
      int slot = 0;
      for (Workspace<B>& ws : shared_->workspaces()) {
        f([&] { return "the shared sequence's slot " + std::to_string(slot); }, ws);
        ++slot;
      }
    }
  }

  using context_type = exec_context_t<B>;
  std::shared_ptr<context_type> own_context_;  // the context of a relay nobody bound
  context_type* context_ = nullptr;

  std::vector<StageBase<B>*> stages_;
  SharedSequenceBase<B>* shared_ = nullptr;  // the sequence the stages read, if any
  DeviceHandoff<B> handoff_;  // device-loop backends: each stage's latest output, in backend
                              // memory (the cursor keeps them on the host)
};

}  // namespace baton
