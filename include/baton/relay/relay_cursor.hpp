// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief RelayCursor: one request's way through a relay — which stage runs next in which
///        cycle, what each stage produced, each stage's input assembled from its segments, and
///        the gate after the last stage. The relay engine (one request at a time) and the
///        batch scheduler (many at once) both move requests with it: the rule of cycles is
///        written once.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "baton/core/error.hpp"
#include "baton/model/decode.hpp"
#include "baton/relay/gate.hpp"
#include "baton/relay/result.hpp"
#include "baton/relay/segments.hpp"

namespace baton {

/// How a relay run loops.
struct RelayOptions {
  int max_cycles = 1;            ///< cycles at most (a cycle = the stages from loop_from on)
  std::optional<int> loop_from;  ///< first stage of cycles 2, 3, ... (default: the second)
  Gate gate;                     ///< on the last stage's output; none = pass after one cycle
};

class RelayCursor {
 public:
  /// A request at the start of a relay of `stages` stages. usage_error for options that name
  /// no cycle or no stage.
  RelayCursor(int stages, std::span<const std::int32_t> request, const RelayOptions& opt)
      : n_(stages),
        loop_from_(opt.loop_from.value_or(stages > 1 ? 1 : 0)),
        max_cycles_(opt.max_cycles),
        gate_(&opt.gate),
        request_(request.begin(), request.end()),
        latest_(static_cast<std::size_t>(stages)),
        previous_(static_cast<std::size_t>(stages)) {
    BATON_CHECK(opt.max_cycles >= 1, usage_error, "relay: max_cycles must be >= 1 (got ",
                opt.max_cycles, ")");
    BATON_CHECK(loop_from_ >= 0 && loop_from_ < n_, usage_error, "relay: loop_from ", loop_from_,
                " is not a stage (0..", n_ - 1, ")");
    result_.stages = n_;
    result_.cycles = 1;
  }

  bool done() const { return done_; }
  /// The stage that runs next, in cycle(); only while !done().
  int stage() const { return stage_; }
  int cycle() const { return result_.cycles; }
  /// Whether stage() is the relay's last (its output meets the gate).
  bool at_last_stage() const { return stage_ == n_ - 1; }
  std::span<const std::int32_t> request() const { return request_; }

  /// How many ids a stage with input `segs` reads now.
  int input_length(const std::vector<Segment>& segs) const {
    std::size_t n = 0;
    for (const Segment& g : segs) n += source(g).size();
    return static_cast<int>(n);
  }
  /// The ids a stage with input `segs` reads now, assembled from its segments.
  std::vector<std::int32_t> assemble(const std::vector<Segment>& segs) const {
    std::vector<std::int32_t> in;
    for (const Segment& g : segs) {
      const std::span<const std::int32_t> s = source(g);
      in.insert(in.end(), s.begin(), s.end());
    }
    return in;
  }

  /// Records stage()'s run, `g` its outcome (`run` carries its input facts and time), and
  /// moves on: to the next stage, or after the last one to the gate — `device_verdict` when
  /// the gate ran on the device, else the options' gate on the output — which ends the
  /// relay or starts the next cycle from loop_from.
  void record(StageRun run, DecodeResult g) {
    run.stage = stage_;
    run.cycle = result_.cycles;
    run.ids = std::move(g.ids);
    run.stopped = g.stopped;
    run.stopped_by = std::string(g.stopped_by);
    run.forwards = g.forwards;
    run.skipped = g.skipped;
    run.host_waits = g.host_waits;
    run.trace = std::move(g.trace);
    run.logprobs = std::move(g.logprobs);
    if (g.loop_verdict >= 0) {  // the stage's device gate ran (Stage::run_handed_off)
      run.gate_on_device = true;
      device_verdict_ = g.loop_verdict == 1;
    }
    latest_[static_cast<std::size_t>(stage_)] = run.ids;
    result_.runs.push_back(std::move(run));
    if (stage_ + 1 < n_) {
      ++stage_;
      return;
    }
    const bool pass = device_verdict_ ? *device_verdict_
                                      : !*gate_ || (*gate_)(std::span<const std::int32_t>(
                                                       latest_[static_cast<std::size_t>(n_ - 1)]));
    device_verdict_.reset();
    result_.verdict = pass ? Verdict::pass : Verdict::fail;
    if (pass || result_.cycles == max_cycles_) {
      done_ = true;
      return;
    }
    ++result_.cycles;
    previous_ = latest_;  // feedback<K> reads what K produced last cycle
    stage_ = loop_from_;
  }

  /// Records a failed run of stage() (its time and input facts) and ends the relay with
  /// verdict error and `message`.
  void fail(StageRun run, std::string message) {
    run.stage = stage_;
    run.cycle = result_.cycles;
    result_.runs.push_back(std::move(run));
    fail(std::move(message));
  }
  /// Ends the relay with verdict error and `message` (no stage run to record).
  void fail(std::string message) {
    result_.verdict = Verdict::error;
    result_.error = std::move(message);
    done_ = true;
  }

  const RelayResult& result() const { return result_; }
  RelayResult& result() { return result_; }

 private:
  std::span<const std::int32_t> source(const Segment& g) const {
    switch (g.kind) {
      case Segment::Kind::literal:
        return g.ids;
      case Segment::Kind::request:
        return request_;
      case Segment::Kind::output:
        return latest_[static_cast<std::size_t>(g.stage)];
      case Segment::Kind::feedback:
        return previous_[static_cast<std::size_t>(g.stage)];
      case Segment::Kind::shared:
        return {};  // read from the shared sequence's K/V, not handed over as ids
    }
    return {};
  }

  int n_;
  int loop_from_;
  int max_cycles_;
  const Gate* gate_;  ///< the options' gate (outlives the run)
  std::vector<std::int32_t> request_;
  std::vector<std::vector<std::int32_t>> latest_;    // each stage's latest output
  std::vector<std::vector<std::int32_t>> previous_;  // ... as of the start of this cycle
  int stage_ = 0;
  bool done_ = false;
  std::optional<bool> device_verdict_;
  RelayResult result_;
};

}  // namespace baton
