// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
#include "served_relay.hpp"

#include <algorithm>
#include <utility>

namespace baton::serve {

ServedRelay::ServedRelay(RelaySpec spec, std::optional<Tokenizer> tokenizer,
                         std::unique_ptr<RuntimeRelay> relay, ServeLimits limits,
                         bool request_specials)
    : spec_(std::move(spec)),
      tokenizer_(std::move(tokenizer)),
      name_(served_name(spec_)),
      relay_(std::move(relay)),
      limits_(limits),
      request_specials_(request_specials) {
  if (tokenizer_) {
    std::size_t longest = 1;
    const auto n = static_cast<std::int32_t>(tokenizer_->vocab_size());
    for (std::int32_t id = 0; id < n; ++id)
      if (tokenizer_->contains_id(id) &&
          (request_specials_ || spec_.trusted_text || !tokenizer_->is_added(id)))
        longest = std::max(longest, tokenizer_->token_bytes(id).size());
    max_request_bytes_ =
        3 * longest * static_cast<std::size_t>(std::max(spec_.max_request_tokens, 1));
  }
  const int stages = static_cast<int>(spec_.stages.size());
  loop_from_ = spec_.loop_from.value_or(stages > 1 ? 1 : 0);
  SchedulerOptions opt;
  opt.max_rows = limits_.concurrency * stages;
  opt.max_queue = limits_.queue;  // never reached: submit() refuses first
  opt.max_request_tokens = spec_.max_request_tokens;
  scheduler_ = relay_->batched(opt);
  counters_.slots = limits_.concurrency * stages;
  stepper_ = std::thread([this] { step_loop(); });
}

ServedRelay::~ServedRelay() { stop(); }

std::vector<std::int32_t> ServedRelay::encode_request(std::string_view text) const {
  // A copy per request: encode updates its object's cache and match buffers, so HTTP threads
  // must not share one (the copy shares the tables; its cache starts empty).
  const Tokenizer tok(tokenizer_.value());
  return request_specials() ? tok.encode(text) : tok.encode_ordinary_text(text);
}

std::vector<std::int32_t> ServedRelay::prompt_ids(const ApiRequest& r) const {
  if (r.ids) return *r.ids;
  const char* field = r.endpoint == Endpoint::chat ? "messages" : "prompt";
  const std::string text = r.endpoint == Endpoint::chat ? last_user_message(r.messages) : *r.text;
  if (!tokenizer_)
    throw ApiError{400, "invalid_request_error",
                   label() + " has no tokenizer: send the prompt as token ids", field};
  // A text that cannot fit is refused by its length before any of it is tokenized.
  if (text.size() > max_request_bytes_)
    throw ApiError{400, "invalid_request_error",
                   "the request is " + std::to_string(text.size()) + " bytes, more than " +
                       label() + " can take in " + std::to_string(spec_.max_request_tokens) +
                       " tokens (" + prompt_limit_source() + ")",
                   field, "context_length_exceeded"};
  return encode_request(text);
}

nlohmann::json ServedRelay::describe() const {
  nlohmann::json stages = nlohmann::json::array();
  for (const std::string& s : relay_->stage_names()) stages.push_back(s);
  return {{"stages", stages},
          {"output", spec_.stages[static_cast<std::size_t>(output_stage())].name},
          {"max_request_tokens", spec_.max_request_tokens},
          {"max_tokens", output_max_new()},
          {"concurrency", limits_.concurrency},
          {"queue", limits_.queue},
          {"backend", relay_->backend_name()},
          {"file", spec_.source.string()}};
}

bool ServedRelay::final_cycle(int cycle) const {
  return cycle >= spec_.max_cycles || spec_.output_stage < loop_from_;
}

std::shared_ptr<Job> ServedRelay::submit(std::vector<std::int32_t> ids, StageRequest own,
                                         const std::string& adapter) {
  auto job = std::make_shared<Job>();
  job->adapter = adapter;
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
        j->output_logprobs.clear();
        j->output_ended.reset();
        j->output_cycle = cycle;
        j->output_final = final_cycle(cycle);
      }
      j->output.push_back(id);
      ++j->version;
    }
    j->changed.notify_all();
  };
  if (own.sampling && own.sampling->logprobs) {
    // Right after on_token gave the same token (so the cycle is already the job's).
    o.on_logprobs = [weak, out](Ticket, int stage, int, const TokenLogprobs& lp) {
      if (stage != out) return;
      const auto j = weak.lock();
      if (!j) return;
      const std::lock_guard lock(j->mutex);
      j->output_logprobs.push_back(lp);
    };
  }
  o.on_stage = [this, weak, out](Ticket, const StageRun& run) {
    if (run.stage != out) return;
    const auto j = weak.lock();
    if (!j) return;
    {
      const std::lock_guard lock(j->mutex);
      if (run.cycle != j->output_cycle) {  // a run that accepted no token
        j->output.clear();
        j->output_logprobs.clear();
        j->output_cycle = run.cycle;
        j->output_final = final_cycle(run.cycle);
      }
      j->output_ended = run.ids;
      ++j->version;
    }
    j->changed.notify_all();
  };
  o.stage = out;
  o.own = std::move(own);
  // Counted in before it is queued: from here an unload of its adapter answers 409.
  AdapterTable* table = adapters();
  if (!adapter.empty() && (!table || !table->acquire(adapter)))
    throw ApiError{404, "invalid_request_error",
                   "the model '" + detail::excerpt(adapter) +
                       "' does not exist: GET /v1/models lists the models served",
                   "model", "model_not_found"};
  try {
    const std::lock_guard lock(inbox_mutex_);
    BATON_CHECK(!stopping_, capacity_error, "the server is shutting down");
    BATON_CHECK(counters_.pending < limits_.queue, capacity_error, label(), ": the queue is full (",
                limits_.queue, " requests in flight)");
    ++counters_.pending;
    arrivals_.push_back({job, std::move(ids), std::move(o)});
  } catch (...) {
    if (!adapter.empty()) table->release(adapter);
    throw;
  }
  work_.notify_one();
  return job;
}

void ServedRelay::cancel(std::shared_ptr<Job> job) {
  {
    const std::lock_guard lock(inbox_mutex_);
    cancels_.push_back(std::move(job));
  }
  work_.notify_one();
}

void ServedRelay::cancel_all() {
  {
    const std::lock_guard lock(inbox_mutex_);
    cancel_everything_ = true;
  }
  work_.notify_one();
}

RelayCounters ServedRelay::counters() const {
  const std::lock_guard lock(inbox_mutex_);
  return counters_;
}

std::optional<int> ServedRelay::place(const Job& job) {
  AdapterTable* table = adapters();
  if (!table) return -1;              // a relay file: its stages in order
  if (job.adapter.empty()) return 0;  // the base model's own stage
  return table->place(job.adapter);   // an adapter's slot, once it has one
}

void ServedRelay::take_in(std::vector<Arrival>& arrived) {
  // Held-back requests first, in arrival order: an adapter's requests keep their order.
  freed_ = false;
  std::vector<Arrival> all = std::move(held_);
  held_.clear();
  for (Arrival& a : arrived) all.push_back(std::move(a));
  arrived.clear();
  for (Arrival& a : all) {
    try {
      const std::optional<int> stage = place(*a.job);
      if (!stage) {
        held_.push_back(std::move(a));
        continue;
      }
      if (*stage >= 0) {
        // The request's run is that stage alone; its cap and sampling follow it there.
        a.options.only_stage = *stage;
        if (a.options.stage >= 0) a.options.stage = *stage;
      }
      a.job->ticket = scheduler_->submit(std::move(a.ids), std::move(a.options));
      jobs_.emplace(a.job->ticket, a.job);
    } catch (const std::exception& e) {
      RelayResult r;
      r.verdict = Verdict::error;
      r.error = e.what();
      finish(*a.job, std::move(r));
    }
  }
}

void ServedRelay::stop() {
  {
    const std::lock_guard lock(inbox_mutex_);
    stopping_ = true;
    cancel_everything_ = true;
  }
  work_.notify_one();
  if (stepper_.joinable()) stepper_.join();
}

void ServedRelay::finish(Job& job, RelayResult result) {
  {
    const std::lock_guard jl(job.mutex);
    if (!job.result) job.result = std::move(result);
    ++job.version;
  }
  job.changed.notify_all();
  if (!job.adapter.empty()) {
    adapters()->release(job.adapter);
    freed_ = true;  // a held-back request may find a slot now
  }
  const std::lock_guard lock(inbox_mutex_);
  --counters_.pending;
}

void ServedRelay::step_loop() {
  for (;;) {
    std::vector<Arrival> arrived;
    std::vector<std::shared_ptr<Job>> cancelled;
    bool everything = false;
    {
      std::unique_lock lock(inbox_mutex_);
      work_.wait(lock, [&] {
        return stopping_ || cancel_everything_ || !arrivals_.empty() || !cancels_.empty() ||
               !scheduler_->idle() || (!held_.empty() && freed_);
      });
      if (stopping_ && arrivals_.empty() && held_.empty() && scheduler_->idle()) return;
      arrived.swap(arrivals_);
      cancelled.swap(cancels_);
      everything = std::exchange(cancel_everything_, false);
    }
    // Cancelled before it reached the scheduler (held back for an adapter slot): ends here.
    const auto cancel_held = [&](const auto& which) {
      std::erase_if(held_, [&](Arrival& a) {
        if (!which(a.job)) return false;
        RelayResult r;
        r.verdict = Verdict::error;
        r.error = "cancelled";
        finish(*a.job, std::move(r));
        return true;
      });
    };
    take_in(arrived);
    for (const auto& j : cancelled) cancel_held([&](const auto& h) { return h == j; });
    if (everything) cancel_held([](const auto&) { return true; });
    // A job's ticket is set above, before any cancellation of it is taken in.
    for (const auto& j : cancelled)
      if (j->ticket) scheduler_->cancel(j->ticket);
    if (everything)
      for (const auto& [ticket, job] : jobs_) scheduler_->cancel(ticket);
    if (scheduler_->idle()) {
      const std::lock_guard lock(inbox_mutex_);
      counters_.running = 0;
      continue;
    }
    SchedulerStep s;
    try {
      s = scheduler_->step();
    } catch (const std::exception& e) {
      // The scheduler ends a failing request alone; anything escaping it is a fault of the
      // whole batch: every request ends with it (their tickets are cancelled, and dropped when
      // the scheduler hands the cancelled results over).
      for (auto& [ticket, job] : jobs_) {
        scheduler_->cancel(ticket);
        const std::lock_guard jl(job->mutex);
        if (!job->result) {
          job->result.emplace();
          job->result->verdict = Verdict::error;
          job->result->error = e.what();
          ++job->version;
        }
        job->changed.notify_all();
      }
      continue;
    }
    for (auto it = jobs_.begin(); it != jobs_.end();) {
      std::optional<RelayResult> r = scheduler_->take(it->first);
      if (!r) {
        ++it;
        continue;
      }
      finish(*it->second, std::move(*r));
      it = jobs_.erase(it);
    }
    const int running = scheduler_->running();
    const std::lock_guard lock(inbox_mutex_);
    ++counters_.steps;
    counters_.rows += s.rows;
    counters_.last_rows = s.rows;
    counters_.running = running;
  }
}

}  // namespace baton::serve
