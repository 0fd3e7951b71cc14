// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief One relay as the server runs it: the pre-warmed relay, its batch scheduler, and the
///        thread that steps it. HTTP threads submit requests and wait on their Job; only the
///        stepping thread runs the model.
///
/// Threads: the scheduler belongs to the stepping thread alone. HTTP threads leave requests and
/// cancellations in an inbox (one small mutex, never held across a step), which the stepping
/// thread takes in before every step; so a submit or a cancel never waits for the model. The
/// scheduler's callbacks run on the stepping thread and only copy into the request's Job, under
/// the Job's own mutex.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "adapter_table.hpp"
#include "baton/relay/config.hpp"
#include "baton/relay/runtime_relay_on.hpp"
#include "baton/text/tokenizer.hpp"
#include "openai_api.hpp"

namespace baton::serve {

/// A request in flight, as its HTTP handler sees it. Everything is guarded by `mutex`.
struct Job {
  std::mutex mutex;
  std::condition_variable changed;
  /// The output stage's ids of its latest run so far, and that run's cycle (0: none yet).
  std::vector<std::int32_t> output;
  /// Their log-probabilities, one entry per id, when the request asked for logprobs.
  std::vector<TokenLogprobs> output_logprobs;
  int output_cycle = 0;
  /// Whether that run is the answer for certain (it cannot be run again: the relay's last
  /// cycle, or a stage before the loop): only then may a stream send it as it grows.
  bool output_final = false;
  /// The output run's ids once it ended (stop ids and interceptors' trims applied).
  std::optional<std::vector<std::int32_t>> output_ended;
  std::optional<RelayResult> result;  ///< set once, when the relay ends
  std::uint64_t version = 0;          ///< bumped by every change (a waiter's "anything new?")
  std::chrono::steady_clock::time_point submitted = std::chrono::steady_clock::now();
  Ticket ticket = 0;
  std::string adapter;  ///< the served adapter it runs on ("": the relay's own stages)
};

/// Limits of one served relay.
struct ServeLimits {     // NOLINT: aggregate
  int concurrency = 16;  ///< slots per stage: requests whose stages run at once
  int queue = 64;        ///< requests accepted and not finished, at most (then 429)
};

/// What the stepping thread has done, for /metrics.
struct RelayCounters {
  long long steps = 0;
  long long rows = 0;  ///< rows over all steps
  int last_rows = 0;   ///< rows in the latest step
  int pending = 0;     ///< requests accepted and not finished
  int running = 0;     ///< ... of which on a stage's slot now (the rest wait)
  int slots = 0;       ///< every stage's slots together (their KV is reserved)
};

/// One model id the server answers: a relay file, and the engine every served id runs on (its
/// relay, batch scheduler and stepping thread). What differs between served kinds is how a
/// request becomes the first stage's ids and how /v1/models describes it: the two virtuals,
/// which a model folder served as chat (served_model.hpp) overrides. The HTTP layer knows only
/// this class.
class ServedRelay {
 public:
  /// Serves `relay` (built from `spec` with `limits.concurrency` slots per stage, pre-warmed)
  /// and starts its stepping thread.
  ServedRelay(RelaySpec spec, std::optional<Tokenizer> tokenizer,
              std::unique_ptr<RuntimeRelay> relay, ServeLimits limits,
              bool request_specials = false);
  virtual ~ServedRelay();
  ServedRelay(const ServedRelay&) = delete;
  ServedRelay& operator=(const ServedRelay&) = delete;

  const std::string& name() const { return name_; }
  /// How messages name it: "relay 'NAME'".
  virtual std::string label() const { return "relay '" + name_ + "'"; }
  /// Where its prompt limit (spec().max_request_tokens) is set, for messages.
  virtual std::string prompt_limit_source() const { return "its max_request_tokens"; }
  const RelaySpec& spec() const { return spec_; }
  const std::optional<Tokenizer>& tokenizer() const { return tokenizer_; }
  const RuntimeRelay& relay() const { return *relay_; }
  const ServeLimits& limits() const { return limits_; }
  int output_stage() const { return spec_.output_stage; }
  /// The output stage's own max_new (a request's max_tokens may only lower it).
  int output_max_new() const {
    return spec_.stages[static_cast<std::size_t>(output_stage())].max_new;
  }

  /// A request's text as ids: plain text (added tokens such as <|im_end|> written in it are
  /// spelled byte by byte, so a client cannot inject control tokens), or with added tokens
  /// matched where the operator allowed it for this relay (--request-specials). Needs a
  /// tokenizer; safe from any thread.
  std::vector<std::int32_t> encode_request(std::string_view text) const;
  /// Whether a request's control tags are control tokens (--request-specials, or the relay's
  /// "trusted_text"); otherwise they are text.
  bool request_specials() const { return request_specials_ || spec_.trusted_text; }
  /// Text longer than this in bytes is longer than max_request_tokens for certain (checked
  /// before tokenizing it): every token spells at most the longest token's bytes, and the
  /// normalizer (NFC) shrinks text at most 3 times (Hangul jamo into syllables).
  std::size_t max_request_bytes() const { return max_request_bytes_; }

  /// The ids a request starts the relay with; ApiError (400) naming the field when it cannot.
  /// A relay takes a completion's prompt, and a chat's last user message: its stages own their
  /// system prompts, examples and turns (also with "template": "model", which renders that
  /// message as the user turn after the stage's pre-warmed prefix; docs/serve.md says why the
  /// rest of the conversation is not used).
  virtual std::vector<std::int32_t> prompt_ids(const ApiRequest& r) const;
  /// What GET /v1/models says of it besides its id (the "baton" object).
  virtual nlohmann::json describe() const;

  /// Accepts `ids`, with `own` asked of the output stage's runs (a lower max_new, sampling,
  /// stop strings), on the served adapter `adapter` ("": none), as `n` choices from one prefill
  /// (1..concurrency): a Job per choice, choice i's at index i. capacity_error when the queue
  /// has no room for n more or the relay is stopping; ApiError 404 when no adapter is served as
  /// `adapter` (it was just unloaded).
  std::vector<std::shared_ptr<Job>> submit(std::vector<std::int32_t> ids, StageRequest own = {},
                                           const std::string& adapter = "", int n = 1);
  /// The adapters this served model answers as more model ids (served_model.hpp), or null.
  virtual AdapterTable* adapters() { return nullptr; }
  const AdapterTable* adapters() const { return const_cast<ServedRelay*>(this)->adapters(); }
  /// Ends `job` before its next step (a client that went away); its result says "cancelled".
  void cancel(std::shared_ptr<Job> job);
  /// Cancels every request in flight (a shutdown past its deadline).
  void cancel_all();
  RelayCounters counters() const;
  /// Stops the stepping thread (requests still in flight end as cancelled).
  void stop();

 protected:
  /// The relay, for a served kind that changes its stages' adapters (only from the stepping
  /// thread, or before any request arrives).
  RuntimeRelay& relay_mut() { return *relay_; }

 private:
  /// A request on its way to the scheduler: its choices' jobs (one, unless it asked for n).
  struct Arrival {
    std::vector<std::shared_ptr<Job>> jobs;
    std::vector<std::int32_t> ids;
    RequestOptions options;
  };
  void step_loop();
  /// Hands `job` its result (the stepping thread).
  void finish(Job& job, RelayResult result);
  /// The stepping thread, before a request goes to the scheduler: the stage it runs alone
  /// (-1: the relay's stages in order, as a relay file's requests do), or nullopt to hold it
  /// back until after the next step (its adapter waits for a slot). Throws to fail it alone.
  std::optional<int> place(const Job& job);
  /// The scheduler's callbacks for the jobs in jobs_ (found by ticket): they copy the output
  /// stage's tokens, logprobs (when `logprobs`) and run ends into the job.
  RequestOptions job_callbacks(bool logprobs);
  /// Submits (or holds back) what arrived; fails what cannot run.
  void take_in(std::vector<Arrival>& arrived);
  /// Whether the output run of `cycle` can never be repeated.
  bool final_cycle(int cycle) const;

  RelaySpec spec_;
  std::optional<Tokenizer> tokenizer_;
  std::string name_;
  std::unique_ptr<RuntimeRelay> relay_;
  std::unique_ptr<BatchedRelay> scheduler_;      // the stepping thread's alone
  std::map<Ticket, std::shared_ptr<Job>> jobs_;  // the stepping thread's alone
  std::vector<Arrival> held_;                    // ... and these: place() said not yet
  bool freed_ = false;                           // an adapter's request ended since take_in
  ServeLimits limits_;
  bool request_specials_ = false;
  std::size_t max_request_bytes_ = 0;
  int loop_from_ = 0;

  mutable std::mutex inbox_mutex_;  // what follows
  std::condition_variable work_;
  std::vector<Arrival> arrivals_;
  std::vector<std::shared_ptr<Job>> cancels_;
  bool cancel_everything_ = false;
  RelayCounters counters_;  ///< pending: accepted and not finished (the queue's bound)
  bool stopping_ = false;
  std::thread stepper_;
};

}  // namespace baton::serve
