// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief RelayResult: what a relay run produced, with its timings however it ended.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "baton/core/error.hpp"
#include "baton/intercept/trace.hpp"
#include "baton/model/sampling.hpp"

namespace baton {

/// How a relay run ended.
enum class Verdict {
  pass,  ///< the gate passed (possibly before the last cycle)
  fail,  ///< every cycle ran and the gate never passed
  error  ///< a stage or the gate threw (try_run only); `error` holds the message
};

inline const char* verdict_name(Verdict v) {
  return v == Verdict::pass ? "pass" : v == Verdict::fail ? "fail" : "error";
}

/// One stage's run in one cycle.
struct StageRun {
  int stage = 0;
  int cycle = 1;  ///< 1-based
  std::string name;
  std::vector<std::int32_t> ids;  ///< generated ids (stop token excluded)
  bool stopped = false;           ///< ended on a stop id or an interceptor's stop (else max_new)
  int input_tokens = 0;
  double ms = 0;           ///< wall time of this stage run
  std::string stopped_by;  ///< plugin_id of the interceptor that stopped it, if one did
  int forwards = 0;        ///< model forwards (prefill included)
  int skipped = 0;         ///< steps whose forward was skipped (step-skip)
  /// Waits for this run's outcome (DecodeResult::host_waits): one for a run on the device loop,
  /// one per step at which host interceptors ran (counted alike on the host backends, where
  /// it costs nothing).
  int host_waits = 0;
  std::vector<TraceRow> trace;  ///< per-step rows, when the stage has a trace recorder
  /// Each id's log-probability and alternatives, when the stage's sampling options ask.
  std::vector<TokenLogprobs> logprobs;
  bool input_on_device = false;  ///< its input was assembled on the device (the hand-off)
  bool gate_on_device = false;   ///< the relay's gate was evaluated on the device on its output
};

struct RelayResult {
  std::vector<StageRun> runs;  ///< every stage run, in execution order
  int cycles = 0;              ///< cycles started
  Verdict verdict = Verdict::fail;
  std::string error;    ///< message when verdict == error
  double total_ms = 0;  ///< wall time of the whole run, set however it ended
  int stages = 0;
  /// A relay with a shared sequence (relay/shared_sequence.hpp): the tokens the base appended
  /// to it for this request (its opening and each stage's turn), and the time that took.
  int shared_tokens = 0;
  double shared_ms = 0;

  bool passed() const { return verdict == Verdict::pass; }

  /// The latest output of `stage` (in the last cycle it ran).
  const std::vector<std::int32_t>& output(int stage) const {
    for (auto it = runs.rbegin(); it != runs.rend(); ++it)
      if (it->stage == stage) return it->ids;
    BATON_FAIL(usage_error, "RelayResult: stage ", stage, " has no output");
  }
  /// The output of `stage` in 1-based `cycle`.
  const std::vector<std::int32_t>& output(int stage, int cycle) const {
    for (const StageRun& r : runs)
      if (r.stage == stage && r.cycle == cycle) return r.ids;
    BATON_FAIL(usage_error, "RelayResult: stage ", stage, " did not run in cycle ", cycle);
  }
  /// Host waits over every stage run (StageRun::host_waits).
  int host_waits() const {
    int n = 0;
    for (const StageRun& r : runs) n += r.host_waits;
    return n;
  }
  /// Tokens computed by prefill for this request: every stage run's input plus what the base
  /// appended to the shared sequence (pre-warmed prefixes are not counted: they are computed
  /// once, not per request).
  long long prefill_tokens() const {
    long long n = shared_tokens;
    for (const StageRun& r : runs) n += r.input_tokens;
    return n;
  }
  /// Total wall time of `stage` over all cycles.
  double stage_ms(int stage) const {
    double t = 0;
    for (const StageRun& r : runs)
      if (r.stage == stage) t += r.ms;
    return t;
  }
};

}  // namespace baton
