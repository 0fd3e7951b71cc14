// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
#include "served_relay.hpp"

#include <utility>

namespace baton::serve {

ServedRelay::ServedRelay(RelaySpec spec, std::optional<Tokenizer> tokenizer,
                         std::unique_ptr<RuntimeRelay> relay, ServeLimits limits)
    : spec_(std::move(spec)),
      tokenizer_(std::move(tokenizer)),
      name_(served_name(spec_)),
      relay_(std::move(relay)),
      limits_(limits) {
  const int stages = static_cast<int>(spec_.stages.size());
  loop_from_ = spec_.loop_from.value_or(stages > 1 ? 1 : 0);
  SchedulerOptions opt;
  opt.max_rows = limits_.concurrency * stages;
  opt.max_queue = limits_.queue;
  opt.max_request_tokens = spec_.max_request_tokens;
  scheduler_ = relay_->batched(opt);
  stepper_ = std::thread([this] { step_loop(); });
}

ServedRelay::~ServedRelay() { stop(); }

bool ServedRelay::final_cycle(int cycle) const {
  return cycle >= spec_.max_cycles || spec_.output_stage < loop_from_;
}

std::shared_ptr<Job> ServedRelay::submit(std::vector<std::int32_t> ids, int max_new) {
  auto job = std::make_shared<Job>();
  RequestOptions o;
  const int out = spec_.output_stage;
  // The callbacks run on the stepping thread, inside step(): they only copy into the job. They
  // hold the job weakly: a job its handler has dropped takes no more tokens.
  std::weak_ptr<Job> weak = job;
  o.on_token = [this, weak, out](Ticket, int stage, int cycle, std::int32_t id) {
    if (stage != out) return;
    const auto j = weak.lock();
    if (!j) return;
    {
      const std::lock_guard lock(j->mutex);
      if (cycle != j->output_cycle) {
        j->output.clear();
        j->output_ended.reset();
        j->output_cycle = cycle;
        j->output_final = final_cycle(cycle);
      }
      j->output.push_back(id);
      ++j->version;
    }
    j->changed.notify_all();
  };
  o.on_stage = [this, weak, out](Ticket, const StageRun& run) {
    if (run.stage != out) return;
    const auto j = weak.lock();
    if (!j) return;
    {
      const std::lock_guard lock(j->mutex);
      if (run.cycle != j->output_cycle) {  // a run that accepted no token
        j->output.clear();
        j->output_cycle = run.cycle;
        j->output_final = final_cycle(run.cycle);
      }
      j->output_ended = run.ids;
      ++j->version;
    }
    j->changed.notify_all();
  };
  if (max_new > 0) {
    o.capped_stage = out;
    o.max_new = max_new;
  }
  {
    const std::lock_guard lock(mutex_);
    BATON_CHECK(!stopping_, capacity_error, "the server is shutting down");
    job->ticket = scheduler_->submit(std::move(ids), std::move(o));
    jobs_.emplace(job->ticket, job);
    counters_.pending = scheduler_->pending();
  }
  work_.notify_one();
  return job;
}

void ServedRelay::cancel(const Job& job) {
  {
    const std::lock_guard lock(mutex_);
    scheduler_->cancel(job.ticket);
  }
  work_.notify_one();
}

void ServedRelay::cancel_all() {
  {
    const std::lock_guard lock(mutex_);
    for (const auto& [ticket, job] : jobs_) scheduler_->cancel(ticket);
  }
  work_.notify_one();
}

RelayCounters ServedRelay::counters() const {
  const std::lock_guard lock(mutex_);
  return counters_;
}

void ServedRelay::stop() {
  {
    const std::lock_guard lock(mutex_);
    if (stopping_ && !stepper_.joinable()) return;
    stopping_ = true;
    for (const auto& [ticket, job] : jobs_) scheduler_->cancel(ticket);
  }
  work_.notify_one();
  if (stepper_.joinable()) stepper_.join();
}

void ServedRelay::step_loop() {
  std::unique_lock lock(mutex_);
  for (;;) {
    work_.wait(lock, [&] { return stopping_ || !scheduler_->idle(); });
    if (scheduler_->idle()) return;  // stopping, and every request has ended
    SchedulerStep s;
    try {
      s = scheduler_->step();
    } catch (const std::exception& e) {
      // The scheduler ends a failing request alone; anything escaping it is a fault of the
      // whole batch: end every request with it rather than spin.
      // (Their tickets stay in jobs_ until the scheduler hands the cancelled results over.)
      for (auto& [ticket, job] : jobs_) {
        RelayResult r;
        r.verdict = Verdict::error;
        r.error = e.what();
        scheduler_->cancel(ticket);
        const std::lock_guard jl(job->mutex);
        if (!job->result) job->result = std::move(r);
        ++job->version;
        job->changed.notify_all();
      }
      continue;
    }
    ++counters_.steps;
    counters_.rows += s.rows;
    counters_.last_rows = s.rows;
    for (auto it = jobs_.begin(); it != jobs_.end();) {
      std::optional<RelayResult> r = scheduler_->take(it->first);
      if (!r) {
        ++it;
        continue;
      }
      {
        const std::lock_guard jl(it->second->mutex);
        if (!it->second->result) it->second->result = std::move(*r);
        ++it->second->version;
      }
      it->second->changed.notify_all();
      it = jobs_.erase(it);
    }
    counters_.pending = scheduler_->pending();
  }
}

}  // namespace baton::serve
