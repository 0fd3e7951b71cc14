// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief Many requests through a relay's batch scheduler, a fixed number in flight: the loop
///        `baton relay --requests` runs (relay_requests.cpp) and the Python package's
///        Relay.run_many (python/src/relay.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "baton/relay/runtime_relay_on.hpp"

namespace baton::cli {

/// Runs `count` requests through `relay`'s batch scheduler (the relay pre-warmed, built with at
/// least `concurrency` slots per stage), keeping `concurrency` in flight: a closed loop, a new
/// one submitted as soon as one finishes. `submit(sched, k)` submits request k and returns its
/// ticket; `step(sched)` takes one scheduler step (and may time or count it). Returns the
/// results in request order; a request that failed has verdict error (the others go on).
template <class Submit, class Step>
std::vector<RelayResult> run_batched(RuntimeRelay& relay, std::size_t count, int concurrency,
                                     Submit&& submit, Step&& step) {
  SchedulerOptions opt;
  opt.max_rows = concurrency * static_cast<int>(relay.stage_names().size());
  opt.max_queue = concurrency;
  const std::unique_ptr<BatchedRelay> sched = relay.batched(opt);
  std::map<Ticket, std::size_t> index;
  std::vector<RelayResult> results(count);
  std::size_t next = 0, done = 0;
  while (done < count) {
    while (next < count && sched->pending() < concurrency) {
      index[submit(*sched, next)] = next;
      ++next;
    }
    step(*sched);
    for (auto it = index.begin(); it != index.end();) {
      if (auto r = sched->take(it->first)) {
        results[it->second] = std::move(*r);
        ++done;
        it = index.erase(it);
      } else {
        ++it;
      }
    }
  }
  return results;
}

}  // namespace baton::cli
