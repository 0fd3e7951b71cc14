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

RequestOptions ServedRelay::job_callbacks(bool logprobs) {
  RequestOptions o;
  const int out = spec_.output_stage;
  // They run on the stepping thread, inside step(), which owns jobs_; they only copy into the
  // job, under its mutex.
  o.on_token = [this, out](Ticket t, int stage, int cycle, std::int32_t id) {
    const auto it = jobs_.find(t);
    if (stage != out || it == jobs_.end()) return;
    Job& j = *it->second;
    {
      const std::lock_guard lock(j.mutex);
      if (cycle != j.output_cycle) {
        j.output.clear();
        j.output_logprobs.clear();
        j.output_ended.reset();
        j.output_cycle = cycle;
        j.output_final = final_cycle(cycle);
      }
      j.output.push_back(id);
      ++j.version;
    }
    j.changed.notify_all();
  };
  if (logprobs) {
    // Right after on_token gave the same token (so the cycle is already the job's).
    o.on_logprobs = [this, out](Ticket t, int stage, int, const TokenLogprobs& lp) {
      const auto it = jobs_.find(t);
      if (stage != out || it == jobs_.end()) return;
      const std::lock_guard lock(it->second->mutex);
      it->second->output_logprobs.push_back(lp);
    };
  }
  o.on_stage = [this, out](Ticket t, const StageRun& run) {
    const auto it = jobs_.find(t);
    if (run.stage != out || it == jobs_.end()) return;
    Job& j = *it->second;
    {
      const std::lock_guard lock(j.mutex);
      if (run.cycle != j.output_cycle) {  // a run that accepted no token
        j.output.clear();
        j.output_logprobs.clear();
        j.output_cycle = run.cycle;
        j.output_final = final_cycle(run.cycle);
      }
      j.output_ended = run.ids;
      ++j.version;
    }
    j.changed.notify_all();
  };
  return o;
}

std::vector<std::shared_ptr<Job>> ServedRelay::submit(std::vector<std::int32_t> ids,
                                                      StageRequest own, const std::string& adapter,
                                                      int n) {
  BATON_CHECK(n >= 1 && n <= limits_.concurrency, usage_error, label(), ": ", n,
              " choices; it runs at most ", limits_.concurrency, " at once (--concurrency)");
  std::vector<std::shared_ptr<Job>> jobs;
  for (int c = 0; c < n; ++c) {
    jobs.push_back(std::make_shared<Job>());
    jobs.back()->adapter = adapter;
  }
  RequestOptions o = job_callbacks(own.sampling && own.sampling->logprobs);
  o.stage = spec_.output_stage;
  o.own = std::move(own);
  // Counted in before it is queued: from here an unload of its adapter answers 409. Each
  // choice holds the adapter until it ends.
  AdapterTable* table = adapters();
  int acquired = 0;
  const auto release = [&] {
    for (; acquired > 0; --acquired) table->release(adapter);
  };
  if (!adapter.empty()) {
    while (table && acquired < n && table->acquire(adapter)) ++acquired;
    if (acquired < n) {
      if (table) release();
      throw ApiError{404, "invalid_request_error",
                     "the model '" + detail::excerpt(adapter) +
                         "' does not exist: GET /v1/models lists the models served",
                     "model", "model_not_found"};
    }
  }
  try {
    const std::lock_guard lock(inbox_mutex_);
    BATON_CHECK(!stopping_, capacity_error, "the server is shutting down");
    BATON_CHECK(counters_.pending + n <= limits_.queue, capacity_error, label(),
                ": the queue is full (", limits_.queue, " requests in flight)");
    counters_.pending += n;
    arrivals_.push_back({jobs, std::move(ids), std::move(o)});
  } catch (...) {
    if (!adapter.empty()) release();
    throw;
  }
  work_.notify_one();
  return jobs;
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
      const std::optional<int> stage = place(*a.jobs.front());
      if (!stage) {
        held_.push_back(std::move(a));
        continue;
      }
      if (*stage >= 0) {
        // The request's run is that stage alone; its cap and sampling follow it there.
        a.options.only_stage = *stage;
        if (a.options.stage >= 0) a.options.stage = *stage;
      }
      const std::vector<Ticket> tickets = scheduler_->submit_choices(
          std::move(a.ids), std::move(a.options), static_cast<int>(a.jobs.size()));
      for (std::size_t c = 0; c < tickets.size(); ++c) {
        a.jobs[c]->ticket = tickets[c];
        jobs_.emplace(tickets[c], a.jobs[c]);
      }
    } catch (const std::exception& e) {
      for (const auto& job : a.jobs) {
        RelayResult r;
        r.verdict = Verdict::error;
        r.error = e.what();
        finish(*job, std::move(r));
      }
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
  // The bookkeeping before the result: a client holding its answer finds a server that no
  // longer counts the request (its metrics, an unload of its adapter).
  if (!job.adapter.empty()) {
    adapters()->release(job.adapter);
    freed_ = true;  // a held-back request may find a slot now
  }
  {
    const std::lock_guard lock(inbox_mutex_);
    --counters_.pending;
  }
  {
    const std::lock_guard jl(job.mutex);
    if (!job.result) job.result = std::move(result);
    ++job.version;
  }
  job.changed.notify_all();
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
    // A request's choices are cancelled together (their handler cancels every one).
    const auto cancel_held = [&](const auto& which) {
      std::erase_if(held_, [&](Arrival& a) {
        if (std::none_of(a.jobs.begin(), a.jobs.end(), which)) return false;
        for (const auto& job : a.jobs) {
          RelayResult r;
          r.verdict = Verdict::error;
          r.error = "cancelled";
          finish(*job, std::move(r));
        }
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
