// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief RelayScheduler: many requests through one relay at once. Each request moves through
///        its stages and cycles exactly as a relay run does (RelayCursor: inputs from segments,
///        the gate, feedback, loop_from); at every step all runnable rows — prefill chunks and
///        decode tokens of every request and stage — go through one batched forward
///        (model/forward_batch.hpp), so the base weights are read once per step.
///
/// Life of a request (a ticket): queued → waits for a free slot of its stage → prefills its
/// input in chunks (the step's token budget) → decodes one token per step with the stage's
/// interceptors (the session's next_row / take_logits: the one decode step) → the
/// stage's output goes to the cursor, which picks the next stage or ends the relay. A failure
/// (bad ids, a position or numeric error, an interceptor's exception) ends that request alone:
/// its slot is released, the pre-warmed prefixes are never written, and the other requests go
/// on with the same results they would have had without it.
///
/// On a backend with a device loop (CUDA, the host grid), the rows of a step are chosen
/// together on the device after the forward (model/device_choice.hpp), greedy and sampled ones
/// alike: one wait per step for all of them, not one per row. A row whose choice rewrites it
/// (logit_bias, penalties) or that an interceptor reads is copied to the host, as is the first
/// row of a request's later choices (the n of submit_choices), which they share. On the host,
/// the same rows are chosen on the workspace's threads in parallel (choose_on_threads), each by
/// its own generation's sampler, before the stepping thread advances the requests one by one.
///
/// Choices (submit_choices, a server's `n`): one request run n times, its first stage's prompt
/// through the model once. The choices are n requests admitted together; the first prefills,
/// and at the end of its prompt each other choice's slot becomes a copy of its slot
/// (KvBuffer::fork) and takes the same logits row for its first step. From there each runs on its
/// own, drawing from its own streams: choice i's are the request's shifted by i x S, S the stages
/// it runs (1 for an only_stage request), so choice i is exactly the request submitted alone with
/// that stream (docs/sampling.md). On a relay with a shared sequence each choice also holds a
/// shared slot of its own, taken with the first's: the first's opening goes through the base
/// once, and each other choice's shared slot becomes a copy of it (SharedSequence::fork) before
/// its stage slot is rewound onto that copy; at the end of the first stage's prompt the stage
/// slots fork as above, each keeping its own copy (KvBuffer::fork_onto_copy), where its later
/// turns go.
///
/// A relay whose stages read a shared sequence (activated adapters: relay/shared_sequence.hpp)
/// holds one of its slots per request, from admission to the end: the request's opening and each
/// stage run's turn are appended there by base rows (no logits, no adapter) in the same batched
/// forwards, and the request's next stage starts once they are in. Every row of the request reads
/// that slot.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "baton/core/error.hpp"
#include "baton/model/device_choice.hpp"
#include "baton/model/forward_batch.hpp"
#include "baton/model/sample_scratch.hpp"
#include "baton/relay/relay_cursor.hpp"
#include "baton/relay/stage.hpp"

namespace baton {

/// Limits of a scheduler.
struct SchedulerOptions {      // NOLINT: aggregate
  int max_rows = 64;           ///< rows (requests' stage runs) in one batched forward
  int max_tokens = 512;        ///< tokens in one batched forward (prefills go in chunks)
  int max_queue = 1024;        ///< requests accepted and not yet finished, at most
  int max_request_tokens = 0;  ///< a request's ids at most (0: no bound but the slots')
};

/// A request's handle.
using Ticket = std::uint64_t;

/// Called with each token a request's stage accepts, as it is accepted: (ticket, stage index,
/// cycle, token). The server streams from it.
using TokenCallback = std::function<void(Ticket, int, int, std::int32_t)>;

/// Called with an accepted token's log-probabilities right after on_token gave the token, when
/// the stage run records them (its sampling options ask for logprobs): (ticket, stage index,
/// cycle, entry). A server streams logprobs from it.
using LogprobsCallback = std::function<void(Ticket, int, int, const TokenLogprobs&)>;

/// Called when one of a request's stage runs ends, after its output went to the relay's cursor:
/// (ticket, the run: its stage, cycle, ids, stop). A server learns from it when a cycle's output
/// is final.
using StageCallback = std::function<void(Ticket, const StageRun&)>;

/// What a caller may attach to one request.
struct RequestOptions {          // NOLINT: aggregate
  TokenCallback on_token;        ///< each accepted token, as it is accepted
  LogprobsCallback on_logprobs;  ///< each accepted token's log-probabilities, when recorded
  StageCallback on_stage;        ///< each stage run, as it ends
  /// What the request asks of the runs of stage `stage` (-1: of every stage) beyond their own
  /// limits: a lower max_new, its own sampling options, stop strings (StageRequest). The run
  /// of relay stage i draws from stream own.sampling->stream + i (docs/sampling.md).
  int stage = -1;
  StageRequest own;
  /// A stage this request runs alone, once, as its whole relay (-1: the relay's stages in
  /// order). For a relay of independent stages, such as one per adapter a server holds: rows
  /// of every adapter then share the steps. Its callbacks and result name that run stage 0
  /// (and its stream is the request's own, stage 0's), so where it sits does not matter.
  int only_stage = -1;
};

/// Whether backend B's scheduler chooses a batch's rows on its threads in parallel (its
/// BackendOps run f(i) over rows: BackendOps<host>::for_each_row).
template <class B>
concept ChoosesRowsInParallel = HasBackendOps<B> && requires(Workspace<B>& ws) {
  BackendOps<B>::for_each_row(ws, 1L, [](long) {});
};

/// What one scheduler step did (for tests and benchmarks).
struct SchedulerStep {
  int rows = 0;    ///< rows in the batched forward
  int tokens = 0;  ///< tokens in it
  int decode_rows = 0;
  int prefill_rows = 0;
  /// Rows whose token was chosen with the batch's others: on the device (choose_on_device) or
  /// on the host's threads (choose_on_threads).
  int chosen_with_batch = 0;
};

/// A scheduler over a run-time relay's stages, whatever their types (RuntimeRelay::batched):
/// RelayScheduler's calls.
class BatchedRelay {
 public:
  virtual ~BatchedRelay() = default;
  virtual Ticket submit(std::vector<std::int32_t> request, RequestOptions options) = 0;
  /// `n` choices of one request, its first prompt computed once (see the file comment): their
  /// tickets, choice i's at index i. The callbacks are each choice's, told apart by ticket.
  virtual std::vector<Ticket> submit_choices(std::vector<std::int32_t> request,
                                             RequestOptions options, int n) = 0;
  /// submit() with a token callback alone.
  Ticket submit(std::vector<std::int32_t> request, TokenCallback on_token = {}) {
    RequestOptions o;
    o.on_token = std::move(on_token);
    return submit(std::move(request), std::move(o));
  }
  virtual bool cancel(Ticket t) = 0;
  virtual SchedulerStep step() = 0;
  virtual void run() = 0;
  virtual bool idle() const = 0;
  virtual int pending() const = 0;
  /// Requests on a stage's slot (or the shared sequence's) now; the rest of pending() wait.
  virtual int running() const = 0;
  virtual std::optional<RelayResult> take(Ticket t) = 0;
};

/// @tparam StageT the relay's stage type (every stage of one relay shares it: a run-time relay's
///         Stage<Model, LoraSlice<kRuntimeRankBound>, Cache, DynamicInput, RuntimeChain<B>>)
template <class StageT>
class RelayScheduler final : public BatchedRelay {
  using Model = typename StageT::model_type;
  using Slice = typename StageT::slice_type;
  using Cache = typename StageT::cache_type;
  using B = typename StageT::backend;
  using Session = typename StageT::session_type;
  using Row = BatchRow<Slice, Cache>;
  using Shared = SharedSequence<Model, Slice, Cache>;
  using clock = std::chrono::steady_clock;

 public:
  /// The stages (pre-warmed, in relay order; they outlive the scheduler) and how the relay
  /// loops. The scheduler owns the batched forward's workspace.
  RelayScheduler(std::vector<StageT*> stages, RelayOptions relay, SchedulerOptions opt = {})
      : stages_(std::move(stages)), relay_(std::move(relay)), opt_(opt) {
    BATON_CHECK(!stages_.empty(), usage_error, "RelayScheduler: no stages");
    for (StageT* s : stages_) {
      BATON_CHECK(s->warm(), usage_error, "RelayScheduler: stage '", s->name(),
                  "' is not pre-warmed");
      BATON_CHECK(&s->model() == &stages_[0]->model(), wiring_error, "RelayScheduler: stage '",
                  s->name(), "' uses another model than stage '", stages_[0]->name(), "'");
    }
    BATON_CHECK(opt_.max_rows >= 1 && opt_.max_tokens >= 1 && opt_.max_queue >= 1, usage_error,
                "RelayScheduler: max_rows, max_tokens and max_queue must be >= 1 (got ",
                opt_.max_rows, ", ", opt_.max_tokens, ", ", opt_.max_queue, ")");
    (void)RelayCursor(static_cast<int>(stages_.size()), {}, relay_);  // checks the options
    for (StageT* s : stages_) {
      if (s->shared_sequence() == nullptr) continue;
      auto* sh = dynamic_cast<Shared*>(s->shared_sequence());
      BATON_CHECK(sh != nullptr && (shared_ == nullptr || shared_ == sh), wiring_error,
                  "RelayScheduler: stage '", s->name(),
                  "' reads another shared sequence than the relay's (one per relay, over the "
                  "stages' model, slice and cache types)");
      BATON_CHECK(sh->warm(), usage_error, "RelayScheduler: the shared sequence is not pre-warmed");
      shared_ = sh;
    }
    if (shared_)
      for (int k = shared_->slots() - 1; k >= 0; --k) free_shared_.push_back(k);
    free_.resize(stages_.size());
    for (std::size_t i = 0; i < stages_.size(); ++i)
      for (int k = stages_[i]->slots() - 1; k >= 0; --k) free_[i].push_back(k);
  }

  RelayScheduler(const RelayScheduler&) = delete;
  RelayScheduler& operator=(const RelayScheduler&) = delete;

  /// The batched forward's workspace, for binding to an execution context (a host relay binds
  /// it to its HostContext's pool; unbound, host loops run on OpenMP).
  Workspace<B>& workspace() { return ws_; }

  using BatchedRelay::submit;

  /// Accepts `request` (ids). capacity_error when the queue is full (max_queue requests not
  /// yet finished) or the request is longer than max_request_tokens; usage_error when
  /// `options` name a stage that does not exist or ask what a stage cannot give (a negative
  /// max_new, sampling out of range, stop strings a stage cannot match), naming it.
  Ticket submit(std::vector<std::int32_t> request, RequestOptions options) override {
    return submit_choices(std::move(request), std::move(options), 1).front();
  }

  /// submit() for `n` choices (1..slots of the stage they start on, and of the shared sequence
  /// on a relay with one): usage_error beyond. Choice c draws from the request's streams
  /// shifted by c x (runs of the relay). Its first prompt, and on a relay with a shared
  /// sequence its opening, go through the model once (see the file comment).
  std::vector<Ticket> submit_choices(std::vector<std::int32_t> request, RequestOptions options,
                                     int choices) override {
    const int n = static_cast<int>(stages_.size());
    BATON_CHECK(options.stage >= -1 && options.stage < n, usage_error,
                "RelayScheduler: request options for stage ", options.stage, " (the relay has ", n,
                " stages)");
    BATON_CHECK(options.only_stage >= -1 && options.only_stage < n, usage_error,
                "RelayScheduler: only_stage ", options.only_stage, " (the relay has ", n,
                " stages)");
    if (options.only_stage >= 0) {
      // Alone, it has no other stage's output to read.
      const StageT& st = *stages_[static_cast<std::size_t>(options.only_stage)];
      for (const Segment& g : st.input_segments())
        BATON_CHECK(g.kind == Segment::Kind::request || g.kind == Segment::Kind::literal,
                    usage_error, "RelayScheduler: stage '", st.name(),
                    "' reads another stage's output or a shared sequence, so it cannot run alone "
                    "(only_stage)");
    }
    for (int i = 0; i < n; ++i)
      if (options.stage < 0 || options.stage == i)
        stages_[static_cast<std::size_t>(i)]->check_own(options.own);
    const int first = options.only_stage >= 0 ? options.only_stage : 0;
    const int first_slots = stages_[static_cast<std::size_t>(first)]->slots();
    BATON_CHECK(choices >= 1 && choices <= first_slots, usage_error, "RelayScheduler: ", choices,
                " choices of one request; its first stage '",
                stages_[static_cast<std::size_t>(first)]->name(), "' runs at most ", first_slots,
                " at once (its slots), and the choices start together");
    BATON_CHECK(shared_ == nullptr || choices <= shared_->slots(), usage_error,
                "RelayScheduler: ", choices,
                " choices of one request; the relay's shared sequence holds at most ",
                shared_->slots(), " requests at once (its slots), and the choices start together");
    BATON_CHECK(static_cast<int>(live_.size()) + choices <= opt_.max_queue, capacity_error,
                "RelayScheduler: the queue is full (", opt_.max_queue,
                " requests not yet finished); retry after some finish");
    BATON_CHECK(opt_.max_request_tokens <= 0 ||
                    static_cast<long long>(request.size()) <= opt_.max_request_tokens,
                capacity_error, "RelayScheduler: request of ", request.size(),
                " tokens exceeds max_request_tokens = ", opt_.max_request_tokens);
    const bool alone = options.only_stage >= 0;
    const int runs = alone ? 1 : n;
    std::vector<Ticket> tickets;
    Request* leader = nullptr;
    for (int c = 0; c < choices; ++c) {
      const Ticket t = next_ticket_++;
      auto r = std::make_unique<Request>(t, c + 1 < choices ? request : std::move(request), runs,
                                         alone ? one_run_ : relay_,
                                         c + 1 < choices ? options : std::move(options));
      r->stream_shift = static_cast<std::uint64_t>(c) * static_cast<std::uint64_t>(runs);
      if (c == 0) {
        leader = r.get();
      } else {
        r->fork_state = Fork::awaiting_admission;
        leader->forks.push_back(t);
      }
      tickets.push_back(t);
      order_.push_back(r.get());
      live_.emplace(t, std::move(r));
    }
    return tickets;
  }

  /// Ends `ticket` at the next step: its rows leave the batch, its slot is freed, its result
  /// has verdict error ("cancelled"). False when the ticket is not live.
  bool cancel(Ticket t) override {
    const auto it = live_.find(t);
    if (it == live_.end()) return false;
    it->second->cancelled = true;
    return true;
  }

  /// One scheduler step: admits requests to free slots, runs one batched forward over every
  /// runnable row (up to max_rows rows and max_tokens tokens), and advances each row's
  /// request by its outcome. Returns what the step did (rows 0: nothing was runnable).
  SchedulerStep step() override {
    SchedulerStep did;
    retire_cancelled();
    admit();
    // Rows in stage order: rows of one adapter sit together (one LoRA product per stage); the
    // shared sequence's base rows first.
    std::vector<Request*> in_batch;
    rows_.clear();
    int tokens = 0;
    // Decode rows are planned first: every request past its prefill keeps its row and its
    // tokens in this step (reserved here, released as its row is placed), and prefill chunks —
    // the shared sequence's and the stages' — take what the budget leaves. A new arrival then
    // neither waits for others' whole prefills (its chunks go in beside them) nor stalls their
    // decode (docs/batching.md, "Who runs in a step").
    Reserve decode = reserve_decode_rows();
    const auto prefill_room = [&] {
      return static_cast<int>(rows_.size()) + decode.rows >= opt_.max_rows
                 ? 0
                 : opt_.max_tokens - tokens - decode.tokens;
    };
    for (Request* r : order_) {
      if (r->done || r->shared_slot < 0 || r->shared_in >= r->shared_input.size()) continue;
      if (static_cast<int>(rows_.size()) >= opt_.max_rows) break;
      const std::size_t left = r->shared_input.size() - r->shared_in;
      const int room = prefill_room();
      if (room <= 0) break;
      const int chunk =
          static_cast<int>(std::min<std::size_t>(left, static_cast<std::size_t>(room)));
      if (chunk <= 0) continue;
      const KvTarget t = KvTarget::in_slot(r->shared_slot);
      const Row row{&shared_->base_slice(),
                    &shared_->cache_for_batch(),
                    t,
                    shared_->cache().position(t),
                    std::span<const std::int32_t>(r->shared_input)
                        .subspan(r->shared_in, static_cast<std::size_t>(chunk)),
                    false,
                    kAdapterNever};
      if (!guard(r, [&] { check_batch_row(stages_[0]->model(), row); })) continue;
      rows_.push_back(row);
      in_batch.push_back(r);
      r->chunk = chunk;
      tokens += chunk;
      ++did.prefill_rows;
    }
    for (std::size_t stage = 0; stage < stages_.size(); ++stage) {
      for (Request* r : order_) {
        if (r->done || !r->session || r->stage != static_cast<int>(stage)) continue;
        if (r->fork_state == Fork::awaiting_prompt) continue;  // its first choice prefills
        if (static_cast<int>(rows_.size()) >= opt_.max_rows) break;
        if (r->prefilled < static_cast<int>(r->input.size())) {
          const int left = static_cast<int>(r->input.size()) - r->prefilled;
          const int chunk = std::min(left, prefill_room());
          if (chunk <= 0) continue;
          add_row(r,
                  std::span<const std::int32_t>(r->input).subspan(
                      static_cast<std::size_t>(r->prefilled), static_cast<std::size_t>(chunk)),
                  r->start + r->prefilled, chunk == left, in_batch);
          if (r->done) continue;  // its row failed its checks
          r->chunk = chunk;
          tokens += chunk;
          ++did.prefill_rows;
        } else {
          const int feed = r->session->tokens_to_feed();
          decode.release(feed);
          // A row longer than the budget (tokens supplied by step-skip) runs alone.
          if (tokens > 0 && tokens + feed > opt_.max_tokens) continue;
          std::optional<typename Session::Row> row;
          if (!guard(r, [&] { row = r->session->next_row(); })) continue;
          if (!row) {
            after_step(r);  // supplied by an interceptor: no forward for this step
            continue;
          }
          add_row(r, row->tokens, row->position, true, in_batch);
          if (r->done) continue;
          tokens += static_cast<int>(row->tokens.size());
          ++did.decode_rows;
        }
      }
    }
    did.rows = static_cast<int>(rows_.size());
    did.tokens = tokens;
    if (!rows_.empty()) did.chosen_with_batch = run_batch(in_batch);
    sweep();
    return did;
  }

  /// Steps until every accepted request has finished.
  void run() override {
    while (!live_.empty()) {
      const std::size_t before = events_;
      const SchedulerStep s = step();
      // Every live request either holds a slot (and so has a row to run) or waits for one
      // that a running request will free: a step where nothing happened cannot recur.
      BATON_CHECK(s.rows > 0 || events_ != before, usage_error,
                  "RelayScheduler: no request can make progress (", live_.size(), " waiting)");
    }
  }

  bool idle() const override { return live_.empty(); }
  /// Requests accepted and not yet finished.
  int pending() const override { return static_cast<int>(live_.size()); }
  int running() const override {
    int n = 0;
    for (const Request* r : order_) n += !r->done && (r->session || r->shared_slot >= 0) ? 1 : 0;
    return n;
  }

  /// The result of a finished ticket (once: it is handed over), or nothing while it runs.
  std::optional<RelayResult> take(Ticket t) override {
    const auto it = finished_.find(t);
    if (it == finished_.end()) return std::nullopt;
    RelayResult r = std::move(it->second);
    finished_.erase(it);
    return r;
  }

 private:
  /// A later choice's part in its first choice's prefill.
  enum class Fork {
    none,                ///< runs on its own (a first choice, or after the fork)
    awaiting_admission,  ///< its first choice admits it (into a slot of the same stage)
    awaiting_prompt      ///< admitted; its slot is forked when the first choice's prompt is in
  };

  struct Request {
    Request(Ticket t, std::vector<std::int32_t> req, int stages, const RelayOptions& relay,
            RequestOptions opt)
        : ticket(t), cursor(stages, req, relay), options(std::move(opt)), t0(clock::now()) {}
    Ticket ticket;
    RelayCursor cursor;
    RequestOptions options;
    clock::time_point t0;
    bool done = false;
    bool cancelled = false;
    // The stage run in progress.
    int stage = -1;  ///< the stage it holds a slot of (-1: none)
    int slot = -1;
    std::optional<Session> session;
    std::vector<std::int32_t> input;
    int start = 0;                         ///< the slot's first position (the prefix length)
    int prefilled = 0;                     ///< input ids already through the model
    int chunk = 0;                         ///< ids of this step's prefill row
    int adapter_from = kAdapterFromSlice;  ///< the stage's activation start for this input
    // The shared sequence's slot (a relay of activated adapters), held for the whole request,
    // and what the base still has to append there before the next stage starts.
    int shared_slot = -1;
    std::vector<std::int32_t> shared_input;
    std::size_t shared_in = 0;  ///< ids of shared_input already appended
    std::size_t seen = 0;       ///< accepted ids already given to on_token
    StageRequest own;           ///< what the request asks of this stage run (its stream's)
    clock::time_point stage_t0;
    StageRun run;
    // Choices (submit_choices): the first's later choices, until their slots are forked from
    // its first prompt; a later choice's part in that; the shift of every stream it draws from.
    std::vector<Ticket> forks;
    Fork fork_state = Fork::none;
    std::uint64_t stream_shift = 0;
    /// This step's token, when it was chosen with the batch's other rows (on the device:
    /// choose_on_device; on the host's threads: choose_on_threads).
    std::optional<StepChoice> batch_choice;
  };

  /// Rows and tokens held back for decode rows while a step's prefill chunks are placed.
  struct Reserve {
    int rows = 0, tokens = 0;
    void release(int pending) {
      rows = rows > 0 ? rows - 1 : 0;
      tokens = tokens > pending ? tokens - pending : 0;
    }
  };

  /// What this step's decode rows will take: a row and its pending tokens for each request
  /// past its prefill (up to max_rows of them).
  Reserve reserve_decode_rows() {
    Reserve res;
    for (Request* r : order_) {
      if (r->done || !r->session || r->prefilled < static_cast<int>(r->input.size())) continue;
      if (res.rows == opt_.max_rows) break;
      ++res.rows;
      res.tokens += r->session->tokens_to_feed();
    }
    return res;
  }

  /// Gives each waiting request (in arrival order) a free slot of its next stage and its
  /// input; a request whose input cannot fit the stage fails here, alone. A request's choices
  /// are admitted together, with its first; while they wait for enough free slots, nothing
  /// after them takes a slot of that stage (they would wait for ever behind single requests).
  void admit() {
    held_.assign(stages_.size(), 0);  // sized once: a step allocates nothing here
    bool held_shared = false;         // the same for the shared sequence's free slots
    for (Request* r : order_) {
      if (r->done || r->session || r->fork_state == Fork::awaiting_admission) continue;
      std::vector<Request*> forks;
      for (const Ticket t : r->forks) {
        const auto it = live_.find(t);
        if (it != live_.end() && !it->second->done) forks.push_back(it->second.get());
      }
      if (shared_ && !admit_shared(r, forks, held_shared)) continue;
      const int i = r->options.only_stage >= 0 ? r->options.only_stage : r->cursor.stage();
      auto& free = free_[static_cast<std::size_t>(i)];
      char& held = held_[static_cast<std::size_t>(i)];
      if (held || free.size() < 1 + forks.size()) {
        held = held || !forks.empty();
        continue;
      }
      if (!open_run(r, i)) continue;  // fail() let its choices go on alone
      for (Request* f : forks) {
        if (shared_ && !guard(f, [&] { copy_opening(r, f); })) continue;
        if (!open_run(f, i)) continue;
        f->fork_state = Fork::awaiting_prompt;
      }
      r->forks.clear();
      for (Request* f : forks)
        if (f->fork_state == Fork::awaiting_prompt) r->forks.push_back(f->ticket);
    }
  }

  /// Opens `r`'s run of stage `i` on a free slot (there is one): its input assembled and
  /// checked, its options, its session. False when that failed `r`.
  bool open_run(Request* r, int i) {
    StageT& st = *stages_[static_cast<std::size_t>(i)];
    const int slot = free_[static_cast<std::size_t>(i)].back();
    return guard(r, [&] {
      r->input = r->cursor.assemble(st.input_segments());
      // Checked whole here, so a message names the input's index, not a chunk's.
      const int vocab = st.model().config().vocab_size;
      for (std::size_t k = 0; k < r->input.size(); ++k)
        BATON_CHECK(r->input[k] >= 0 && r->input[k] < vocab, usage_error, "stage '", st.name(),
                    "': token id ", r->input[k], " at index ", k, " is outside the vocabulary [0, ",
                    vocab, ")");
      const int ss = r->shared_slot < 0 ? slot : r->shared_slot;
      r->adapter_from = st.activation_start(r->input, ss);
      // `i` is the stage that runs; the cursor's stage is its place in the request's relay
      // (0 for an only_stage run), which names its stream.
      // Choice c shifts every stream by c x S (stream_shift).
      bool own = r->options.stage < 0 || r->options.stage == i;
      r->own = own ? r->options.own : StageRequest{};
      if (r->own.sampling) {
        r->own.sampling->stream += static_cast<std::uint64_t>(r->cursor.stage()) + r->stream_shift;
        r->own.sampling->run = static_cast<std::uint32_t>(r->cursor.cycle() - 1);
      } else if (auto s = st.cycle_sampling(r->cursor.cycle(), r->stream_shift)) {
        r->own.sampling = std::move(s);  // the stage's own, afresh in this cycle or choice
        own = true;
      }
      r->session.emplace(
          st.open(static_cast<long long>(r->input.size()), slot, ss, own ? &r->own : nullptr));
      free_[static_cast<std::size_t>(i)].pop_back();
      r->stage = i;
      r->slot = slot;
      r->start = st.cache().position(KvTarget::in_slot(slot));
      r->prefilled = 0;
      r->seen = 0;
      r->stage_t0 = clock::now();
      r->run = StageRun{};
      r->run.name = st.name();
      r->run.input_tokens = static_cast<int>(r->input.size());
      ++events_;
    });
  }

  /// A relay with a shared sequence: whether `r` may start its next stage now. A new request
  /// first takes a free shared slot (rewound, its opening queued), and one for each of its
  /// later choices `forks` (their copies of its opening, made at their admission); while too
  /// few are free, nothing after it takes one (`held`). A request whose opening or last turn is
  /// still being appended waits for it.
  bool admit_shared(Request* r, const std::vector<Request*>& forks, bool& held) {
    if (r->shared_slot >= 0) return r->shared_in >= r->shared_input.size();
    if (held || free_shared_.size() < 1 + forks.size()) {
      held = held || !forks.empty();
      return false;
    }
    for (Request* f : forks) {
      f->shared_slot = free_shared_.back();
      free_shared_.pop_back();
    }
    begin_opening(r);
    return false;  // its opening goes first
  }

  /// Starts `r`'s request on a free shared slot: rewound, its opening queued for the base.
  void begin_opening(Request* r) {
    if (r->shared_slot < 0) {
      r->shared_slot = free_shared_.back();
      free_shared_.pop_back();
    }
    const int ss = r->shared_slot;
    guard(r, [&] {  // a failure frees the slot with r (complete)
      shared_->cache_for_batch().rewind(ss);
      shared_->restart(ss);
      r->shared_input = r->cursor.assemble(shared_->opening());
      r->shared_in = 0;
    });
    ++events_;
  }

  /// A later choice `f` of `r`, admitted with it: its shared slot becomes a copy of r's, whose
  /// opening is in, and counts that opening as its own (as it would alone).
  void copy_opening(const Request* r, Request* f) {
    shared_->fork(r->shared_slot, f->shared_slot);
    f->shared_input = r->shared_input;
    f->shared_in = f->shared_input.size();
    f->cursor.result().shared_tokens = r->cursor.result().shared_tokens;
  }

  /// Adds `r`'s row, after the forward's own checks on it alone (a bad row fails `r` only).
  void add_row(Request* r, std::span<const std::int32_t> tokens, int position, bool logits,
               std::vector<Request*>& in_batch) {
    StageT& st = *stages_[static_cast<std::size_t>(r->stage)];
    const Row row{&st.slice(), &st.cache_for_batch(), KvTarget::in_slot(r->slot), position, tokens,
                  logits,      r->adapter_from};
    if (!guard(r, [&] { check_batch_row(st.model(), row); })) return;
    rows_.push_back(row);
    in_batch.push_back(r);
  }

  /// The batched forward, then each row's request advanced by its row of logits. Returns how
  /// many rows were chosen with the batch.
  int run_batch(const std::vector<Request*>& in_batch) {
    const Model& model = stages_[0]->model();
    typename BackendOps<B>::logits_view logits;
    try {
      logits = forward_batch(model, ws_, std::span<const Row>(rows_));
    } catch (const std::exception& e) {
      // Every row passed its checks, so this is the forward itself failing (memory, a
      // backend error): no row's cache advanced, each of these requests ends with it.
      for (Request* r : in_batch) fail(r, e.what());
      return 0;
    }
    const std::size_t V = static_cast<std::size_t>(model.config().vocab_size);
    if constexpr (HasDeviceLoop<B>)
      choose_on_device(in_batch, logits, static_cast<int>(V));
    else if constexpr (ChoosesRowsInParallel<B>)
      choose_on_threads(in_batch, logits, V);
    int chosen_with_batch = 0;
    for (const Request* r : in_batch) chosen_with_batch += r->batch_choice.has_value() ? 1 : 0;
    std::size_t next_row = 0;  // rows with logits, in row order
    for (std::size_t k = 0; k < in_batch.size(); ++k) {
      Request* r = in_batch[k];
      const bool has_logits = rows_[k].logits;
      const auto row = has_logits ? logits.subspan(next_row++ * V, V) : decltype(logits){};
      if (r->done) continue;
      if (!r->session) {  // a base row of the shared sequence
        const auto part = std::span<const std::int32_t>(r->shared_input)
                              .subspan(r->shared_in, static_cast<std::size_t>(r->chunk));
        shared_->appended(r->shared_slot, part);
        r->shared_in += part.size();
        r->cursor.result().shared_tokens += static_cast<int>(part.size());
        ++events_;
        continue;
      }
      if (r->prefilled < static_cast<int>(r->input.size())) {
        r->prefilled += r->chunk;
        if (r->prefilled < static_cast<int>(r->input.size())) continue;  // more chunks to go
        const std::vector<Request*> forks = fork_choices(r);
        // The first step rewrites a host row in place (masks, penalties): each choice starts
        // from the row as the forward left it.
        if constexpr (!B::is_device)
          if (!forks.empty()) pristine_.assign(row.begin(), row.end());
        first_step(r, row);
        for (Request* f : forks) {
          if constexpr (!B::is_device)
            std::copy(pristine_.begin(), pristine_.end(), const_cast<float*>(row.data()));
          first_step(f, row);
        }
        continue;
      }
      if (!guard(r, [&] { r->session->take_logits(row, take_batch_choice(r)); })) continue;
      after_step(r);
    }
    return chosen_with_batch;
  }

  /// Calls f(r, row) for each request of this batch whose step chooses from its row of logits
  /// (a decode row, or the last chunk of a prompt) and whose session `may(session)` lets the
  /// batch choose for, `row` counting the rows with logits; clears every request's earlier
  /// batch choice.
  template <class May, class F>
  void for_each_choosing_row(const std::vector<Request*>& in_batch, May&& may, F&& f) {
    int logit_row = 0;
    for (std::size_t k = 0; k < in_batch.size(); ++k) {
      Request* r = in_batch[k];
      r->batch_choice.reset();
      if (!rows_[k].logits) continue;
      const int row = logit_row++;
      if (r->done || !r->session || !may(*r->session)) continue;
      const bool chooses = r->prefilled >= static_cast<int>(r->input.size()) ||
                           r->prefilled + r->chunk >= static_cast<int>(r->input.size());
      if (chooses) f(r, row);
    }
  }

  /// On a backend with a device loop: the rows of this batch whose choice is their sampler's
  /// alone (greedy or sampled, with logit_bias and penalties too: choose_rows rewrites a copy)
  /// are chosen together on the device, with one wait (choose_rows), instead of one wait per
  /// row.
  template <class LogitsView>
  void choose_on_device(const std::vector<Request*>& in_batch, const LogitsView& logits,
                        int vocab) {
    greedy_rows_.clear();
    greedy_of_.clear();
    sampled_rows_.clear();
    sampled_of_.clear();
    rewrites_.clear();
    for_each_choosing_row(
        in_batch, [](const auto& s) { return s.chooses_by_sampler(); },
        [&](Request* r, int row) {
          if (r->session->chooses_by_argmax()) {
            greedy_rows_.push_back(row);
            greedy_of_.push_back(r);
          } else {
            sampled_rows_.push_back(r->session->row_sampling(row));
            rewrites_.push_back(r->session->row_rewrites());
            sampled_of_.push_back(r);
          }
        });
    if (greedy_rows_.empty() && sampled_rows_.empty()) return;
    try {
      choose_rows(ws_, logits_pointer(logits), vocab, std::span<const int>(greedy_rows_),
                  std::span<const kernels::RowSampling>(sampled_rows_), choices_,
                  std::span<const RowRewrites>(rewrites_));
    } catch (const std::exception&) {
      return;  // each row then chooses on its own, and meets the failure there if it persists
    }
    for (std::size_t i = 0; i < greedy_of_.size(); ++i)
      greedy_of_[i]->batch_choice = StepChoice{choices_.id(i), {}};
    for (std::size_t j = 0; j < sampled_of_.size(); ++j) {
      StepChoice c{choices_.id(greedy_of_.size() + j), {}};
      if (sampled_rows_[j].draw.top_logprobs >= 0 && c.id >= 0) c.logprobs = choices_.logprobs(j);
      sampled_of_[j]->batch_choice = c;
    }
  }

  /// On the host: the rows of this batch whose choice is their sampler's are chosen beforehand
  /// on the workspace's threads in parallel, each by its own generation's sampler (the same
  /// token its step would choose), where the stepping thread would choose them one after
  /// another. A row the options rewrite (logit_bias, penalties) is rewritten in place, as its
  /// step would: only a decode row, since a prompt's last row may still be copied for the
  /// request's other choices (pristine_). A row whose choice fails chooses in its step.
  template <class LogitsView>
  void choose_on_threads(const std::vector<Request*>& in_batch, const LogitsView& logits,
                         std::size_t vocab) {
    choosing_.clear();
    for_each_choosing_row(
        in_batch, [](const auto& s) { return s.chooses_by_sampler(); },
        [&](Request* r, int row) {
          const bool rewrites = !r->session->chooses_from_row();
          if (rewrites && r->prefilled < static_cast<int>(r->input.size())) return;
          choosing_.push_back({r, row, rewrites});
        });
    if (choosing_.size() < 2) return;  // one row chooses in its step
    if (!scratch_pool_ || scratch_pool_->vocab() != static_cast<int>(vocab))
      scratch_pool_ = std::make_unique<SampleScratchPool>(static_cast<int>(vocab));
    BackendOps<B>::for_each_row(ws_, static_cast<long>(choosing_.size()), [&](long i) {
      const Choosing c = choosing_[static_cast<std::size_t>(i)];
      const auto row = logits.subspan(static_cast<std::size_t>(c.row) * vocab, vocab);
      try {
        // The thread's own scratch, still in its cache (model/sample_scratch.hpp).
        const kernels::SampleScratch work = scratch_pool_->for_this_thread();
        // The row is this request's alone in the batch's logits, which its step would rewrite.
        c.request->batch_choice =
            c.rewrites ? c.request->session->choice_rewriting_row(
                             std::span<float>(const_cast<float*>(row.data()), row.size()), &work)
                       : c.request->session->choice_from_row(row, &work);
      } catch (...) {
        c.request->batch_choice.reset();
      }
    });
  }

  /// Hands `r`'s step the token chosen for it with the batch, if it was.
  std::optional<StepChoice> take_batch_choice(Request* r) {
    return std::exchange(r->batch_choice, std::nullopt);
  }

  /// `r`'s prompt is in: its first step, from the prompt's last logits `row` (no forward).
  template <class LogitsRow>
  void first_step(Request* r, const LogitsRow& row) {
    if (!guard(r, [&] {
          r->session->take_prompt_logits(r->start, r->input, row, r->adapter_from,
                                         take_batch_choice(r));
        }))
      return;
    after_step(r);
  }

  /// `r`'s prompt is in: the choices waiting for it get a copy of its slot (KvBuffer::fork) and
  /// count their prompt as theirs. Returns them (each then takes its first step from r's row).
  std::vector<Request*> fork_choices(Request* r) {
    std::vector<Request*> forked;
    for (const Ticket t : std::exchange(r->forks, {})) {
      const auto it = live_.find(t);
      if (it == live_.end()) continue;
      Request* f = it->second.get();
      if (f->done || f->fork_state != Fork::awaiting_prompt) continue;
      f->fork_state = Fork::none;
      // Admitted together to the same stage from the same input: anything else prefills alone.
      if (f->stage != r->stage || f->input != r->input || f->start != r->start ||
          f->adapter_from != r->adapter_from)
        continue;
      if (!guard(f, [&] {
            StageT& st = *stages_[static_cast<std::size_t>(r->stage)];
            auto& cache = st.cache_for_batch();
            // A slot reading the shared sequence reads the choice's own copy of it.
            if (st.shared_sequence())
              cache.fork_onto_copy(r->slot, f->slot);
            else
              cache.fork(r->slot, f->slot);
          }))
        continue;
      f->prefilled = static_cast<int>(f->input.size());
      forked.push_back(f);
    }
    return forked;
  }

  /// After `r`'s step: its new tokens to the request's callbacks; ends the stage run when the
  /// generation is done.
  void after_step(Request* r) {
    ++events_;
    const auto& ids = r->session->result().ids;
    const auto& logprobs = r->session->result().logprobs;
    if (r->options.on_token || r->options.on_logprobs) {
      for (; r->seen < ids.size(); ++r->seen) {
        if (r->options.on_token)
          r->options.on_token(r->ticket, r->cursor.stage(), r->cursor.cycle(), ids[r->seen]);
        if (r->options.on_logprobs && r->seen < logprobs.size())
          r->options.on_logprobs(r->ticket, r->cursor.stage(), r->cursor.cycle(),
                                 logprobs[r->seen]);
      }
    }
    if (r->session->done()) end_stage(r);
  }

  /// `r`'s stage run is over: its output goes to the cursor, its slot back to the pool.
  void end_stage(Request* r) {
    DecodeResult g = r->session->finish();
    r->run.ms = std::chrono::duration<double, std::milli>(clock::now() - r->stage_t0).count();
    StageT& st = *stages_[static_cast<std::size_t>(r->stage)];
    release_slot(r);
    if (shared_) {
      // The stage's turn, for the base to append before the next stage starts (dropped when
      // the relay ends here).
      r->shared_input.clear();
      if (st.shared_sequence()) r->shared_input = r->input;
      r->shared_input.insert(r->shared_input.end(), g.ids.begin(), g.ids.end());
      const auto end = shared_->turn_end();
      r->shared_input.insert(r->shared_input.end(), end.begin(), end.end());
      r->shared_in = 0;
    }
    r->cursor.record(std::move(r->run), std::move(g));
    if (r->options.on_stage) r->options.on_stage(r->ticket, r->cursor.result().runs.back());
    if (r->cursor.done()) complete(r);
  }

  /// Runs `f`; an exception fails `r` alone (its message kept) and returns false.
  template <class F>
  bool guard(Request* r, F&& f) {
    try {
      f();
      return true;
    } catch (const std::exception& e) {
      fail(r, e.what());
      return false;
    }
  }

  void fail(Request* r, std::string message) {
    if (r->done) return;
    // Its later choices, waiting to be admitted with it or for its prompt, go on alone: one
    // that holds a shared slot and no copy of r's opening yet starts its own opening there.
    for (const Ticket t : std::exchange(r->forks, {})) {
      const auto it = live_.find(t);
      if (it == live_.end() || it->second->done) continue;
      Request* f = it->second.get();
      const bool opening_due = f->fork_state == Fork::awaiting_admission && f->shared_slot >= 0;
      f->fork_state = Fork::none;
      if (opening_due) begin_opening(f);
    }
    if (r->session) {
      r->run.ms = std::chrono::duration<double, std::milli>(clock::now() - r->stage_t0).count();
      r->cursor.fail(std::move(r->run), std::move(message));
    } else {
      r->cursor.fail(std::move(message));
    }
    release_slot(r);
    complete(r);
  }

  void release_slot(Request* r) {
    if (r->session) {
      r->session.reset();  // the Session frees the stage's slot
      free_[static_cast<std::size_t>(r->stage)].push_back(r->slot);
    }
    r->stage = -1;
    r->slot = -1;
  }

  void complete(Request* r) {
    r->done = true;
    if (r->shared_slot >= 0) {
      free_shared_.push_back(r->shared_slot);
      r->shared_slot = -1;
    }
    ++events_;
    RelayResult res = std::move(r->cursor.result());
    res.total_ms = std::chrono::duration<double, std::milli>(clock::now() - r->t0).count();
    finished_.emplace(r->ticket, std::move(res));
  }

  void retire_cancelled() {
    for (Request* r : order_)
      if (r->cancelled && !r->done) fail(r, "cancelled");
  }

  /// Forgets finished requests (their results wait in finished_).
  void sweep() {
    std::erase_if(order_, [&](Request* r) {
      if (!r->done) return false;
      live_.erase(r->ticket);
      return true;
    });
  }

  std::vector<StageT*> stages_;
  RelayOptions relay_;
  RelayOptions one_run_;  // an only_stage request's relay: one run, no gate
  SchedulerOptions opt_;
  Workspace<B> ws_;                     // the batched forward's activations
  std::vector<std::vector<int>> free_;  // each stage's free slots
  Shared* shared_ = nullptr;            // the relay's shared sequence, if its stages read one
  std::vector<int> free_shared_;        // ... and its free slots
  std::map<Ticket, std::unique_ptr<Request>> live_;
  std::vector<Request*> order_;  // live requests in arrival order
  std::map<Ticket, RelayResult> finished_;
  std::vector<Row> rows_;
  std::vector<float> pristine_;  // a host row of logits, kept for a request's later choices
  // choose_on_device's lists, kept so a step allocates nothing once they have grown.
  std::vector<int> greedy_rows_;
  std::vector<Request*> greedy_of_;
  std::vector<kernels::RowSampling> sampled_rows_;
  std::vector<Request*> sampled_of_;
  std::vector<RowRewrites> rewrites_;  ///< the sampled rows' logit_bias and penalty counts
  RowChoices choices_;
  // choose_on_threads' scratches, one a thread (made on the first batch it chooses).
  std::unique_ptr<SampleScratchPool> scratch_pool_;
  // choose_on_threads' rows: each request with its row of the batch's logits.
  struct Choosing {
    Request* request;
    int row;
    bool rewrites;  ///< its options rewrite the row (logit_bias, penalties)
  };
  std::vector<Choosing> choosing_;
  std::vector<char> held_;  // admit(): stages whose free slots a request's choices wait for
  Ticket next_ticket_ = 1;
  std::size_t events_ = 0;  ///< admissions, steps and endings so far (run() checks progress)
};

}  // namespace baton
