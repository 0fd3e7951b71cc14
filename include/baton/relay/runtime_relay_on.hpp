// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief A relay built at run time from a RelaySpec (a JSON file) on any backend whose
///        forward this translation unit has: stage count, adapters and wiring known only
///        then, checked when it is built. Same engine as Relay<Stages...>.
///
/// Backend-generic (it includes no backend's forward): relay/runtime_relay.hpp adds the host
/// backend and `build_relay`; relay/cuda_relay.cuh the CUDA one.
#pragma once

#include <algorithm>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "baton/kv/kv_buffer.hpp"
#include "baton/lora/base_model_check.hpp"
#include "baton/model/model_dispatch.hpp"
#include "baton/relay/config.hpp"
#include "baton/relay/engine.hpp"
#include "baton/relay/runtime_chain.hpp"
#include "baton/relay/scheduler.hpp"
#include "baton/relay/shared_sequence.hpp"

namespace baton {

/// An adapter read for one relay's model and held outside its stages (its slice type is that
/// relay's, hidden here): what RuntimeRelay::load_adapter returns and swap_adapter takes.
class RelayAdapter {
 public:
  virtual ~RelayAdapter() = default;
  /// The folder it was read from.
  virtual const std::string& source() const = 0;
  /// What loading it noticed but did not refuse (base_model_name_or_path names another model).
  virtual const std::optional<std::string>& warning() const = 0;
};

/// A relay built from a RelaySpec: owns the model, its stages and the engine.
class RuntimeRelay {
 public:
  virtual ~RuntimeRelay() = default;
  virtual void prewarm() = 0;
  virtual RelayResult run(std::span<const std::int32_t> request) = 0;
  virtual RelayResult try_run(std::span<const std::int32_t> request) = 0;
  virtual const ModelConfig& config() const = 0;
  virtual std::vector<std::string> stage_names() const = 0;
  /// The prefix ids of `stage` (what its pre-warm computes).
  virtual std::vector<std::int32_t> prefix(int stage) const = 0;
  /// What building the relay noticed but did not refuse, one sentence each: an adapter whose
  /// base_model_name_or_path names another model (lora/base_model_check.hpp).
  virtual const std::vector<std::string>& warnings() const = 0;
  /// The backend the relay runs on ("host", "cuda").
  virtual std::string_view backend_name() const = 0;
  /// A scheduler that runs many requests through this (pre-warmed) relay at once, batching
  /// the rows of every request and stage into one forward per step (relay/scheduler.hpp); each
  /// stage serves RelaySpec::slots requests at once. The relay must outlive it, and run() and
  /// the scheduler must not be used at the same time. usage_error on a backend without a
  /// batched forward (baton::cuda, for now).
  virtual std::unique_ptr<BatchedRelay> batched(const SchedulerOptions& opt) = 0;
  /// Reads and checks the PEFT adapter in `dir` against this relay's model (its rank bound,
  /// targets and shapes), without touching any stage; the errors name the file and field.
  virtual std::unique_ptr<RelayAdapter> load_adapter(const std::filesystem::path& dir) const = 0;
  /// Puts `adapter` (one of this relay's load_adapter; null: none, the base model) into
  /// `stage`, pre-warms the stage again (its prefix is recomputed through the new weights) and
  /// returns the adapter the stage held. usage_error while the stage has a request on a slot.
  virtual std::unique_ptr<RelayAdapter> swap_adapter(int stage,
                                                     std::unique_ptr<RelayAdapter> adapter) = 0;
};

/// Whether a run-time relay type carries RuntimeRelay::batched (the scheduler and the batched
/// forward). Instantiating them costs about a fifth of a one-relay unit's compile time (the
/// word-problems example: 102 s without, 125 s with, -O3), so a program that only calls run()
/// may leave them out; batched() then throws usage_error. build_relay's relays carry them.
enum class Batching { with_scheduler, without };

/// What a run-time relay on backend B owns besides its stages, and binds each stage's
/// workspaces to: a HostContext on the host (relay/runtime_relay.hpp specializes it, from the
/// spec's "host" field), a CudaContext on baton::cuda (relay/cuda_relay.cuh), so all its
/// stages run in order on one thread pool or one stream; nothing elsewhere (the host grid).
template <Backend B>
struct RelayExecution {
  // The host one owns a HostContext; without its header a host relay would silently differ.
  static_assert(
      !std::is_same_v<B, host>,
      "a relay on baton::host needs baton/relay/runtime_relay.hpp (RelayExecution<host>)");
  explicit RelayExecution(const RelaySpec&) {}
  void bind(Workspace<B>&) {}
};

namespace detail {

inline std::vector<std::int32_t> spec_ids(const IdsOrText& v, const std::string& where) {
  BATON_CHECK(!v.text, config_error, where,
              " is text; text needs a tokenizer (resolve the spec with resolve_text first)");
  return v.ids;
}

/// Every id a relay file gives (prefix, literal input, stop, gate) must be a token of the
/// model: an out-of-vocabulary stop or gate id can never be chosen, so the relay would run
/// silently without it. config_error naming the place (`where`, e.g. the stage and field).
inline void check_vocab_ids(const std::vector<std::int32_t>& ids, int vocab_size,
                            const std::string& where) {
  for (std::size_t k = 0; k < ids.size(); ++k) {
    BATON_CHECK(ids[k] >= 0 && ids[k] < vocab_size, config_error, where, "[", k, "] = ", ids[k],
                " is outside the model's vocabulary [0, ", vocab_size, ")");
  }
}

/// The room a relay's shared sequence needs per request after its common prefix: the opening,
/// then every turn the relay can append (each stage run's invocation, output and turn end, over
/// every cycle; the relay's last run appends none, counted anyway).
inline long long shared_tail_for(const RelaySpec& spec, const std::vector<int>& invocation_len) {
  const SharedSpec& sh = *spec.shared;
  long long n = 0;
  for (const SegmentSpec& g : sh.input)
    n += g.kind == Segment::Kind::request ? spec.max_request_tokens
                                          : static_cast<long long>(g.literal.ids.size());
  const int stages = static_cast<int>(spec.stages.size());
  const int loop_from = spec.loop_from.value_or(stages > 1 ? 1 : 0);
  for (int i = 0; i < stages; ++i) {
    const int runs = 1 + (i >= loop_from ? spec.max_cycles - 1 : 0);
    const long long turn = invocation_len[static_cast<std::size_t>(i)] + spec.stages[i].max_new +
                           static_cast<long long>(sh.turn_end.ids.size());
    n += runs * turn;
  }
  return n;
}

/// The slot size a stage needs: its literal ids, the request, the outputs it reads, and its
/// own generation.
inline int tail_capacity_for(const RelaySpec& spec, std::size_t i) {
  long long n = spec.stages[i].max_new;
  for (const SegmentSpec& g : spec.stages[i].input) {
    switch (g.kind) {
      case Segment::Kind::literal:
        n += static_cast<long long>(g.literal.ids.size());
        break;
      case Segment::Kind::request:
        n += spec.max_request_tokens;
        break;
      case Segment::Kind::output:
      case Segment::Kind::feedback:
        n += spec.stages[g.stage].max_new;
        break;
      case Segment::Kind::shared:  // read from the shared sequence's own buffer
        break;
    }
  }
  BATON_CHECK(n < (1LL << 30), config_error, spec.source.string(), ": stage '", spec.stages[i].name,
              "' would need a slot of ", n, " positions");
  return static_cast<int>(n);
}

/// A relay from a spec on backend B (host, or cuda through relay/cuda_relay.cuh), for a model
/// of family F with weights in S and head_dim D.
template <Backend B, WeightStorage S, int D, ModelFamily F = family::Qwen2,
          Batching W = Batching::with_scheduler>
class BackendRuntimeRelay final : public RuntimeRelay {
  using Model = BaseModel<B, S, F>;
  using Slice = LoraSlice<kRuntimeRankBound, B>;
  using Cache = KvBuffer<layout::HeadMajor<f32, D>, B>;
  using StageT = Stage<Model, Slice, Cache, wire::DynamicInput, RuntimeChain<B>>;
  using SharedT = SharedSequence<Model, Slice, Cache>;

 public:
  BackendRuntimeRelay(const RelaySpec& spec, Model model)
      : model_(std::move(model)), execution_(spec) {
    const std::string src = spec.source.string();
    if (spec.tokenizer_ids > 0)
      check_tokenizer_fits(spec.tokenizer_ids, model_.config().vocab_size,
                           spec.tokenizer.value_or(spec.model / "tokenizer.json").string(),
                           model_.source());
    if (!model_.fallback_matrices().empty()) {
      std::string list;
      for (const std::string& m : model_.fallback_matrices())
        list += (list.empty() ? "" : ", ") + m;
      warnings_.push_back(model_.source() + ": " + std::string(storage_name(storage_of<S>)) +
                          " keeps " + std::to_string(model_.fallback_matrices().size()) +
                          " matrices in f16, their rows not a multiple of 32: " + list);
    }
    std::vector<StageBase<B>*> ptrs;
    const int vocab_size = model_.config().vocab_size;
    // Adapters first: a stage reading the shared sequence may take its invocation from its
    // adapter, and the shared sequence is sized from every invocation.
    std::vector<Slice> slices;
    std::vector<std::vector<std::int32_t>> invocations(spec.stages.size());
    for (std::size_t i = 0; i < spec.stages.size(); ++i) {
      const StageSpec& s = spec.stages[i];
      const std::string where = src + ": stage '" + s.name + "'";
      BATON_CHECK(!s.served_adapter, config_error, where, " names the served adapter '",
                  s.served_adapter.value_or(""),
                  "' (field 'lora'): only `baton serve --lora NAME=DIR` resolves it; give its "
                  "folder as 'adapter' elsewhere");
      slices.push_back(s.adapter ? Slice::load(*s.adapter, model_) : Slice::none(model_.config()));
      if (!s.reads_shared) continue;
      BATON_CHECK(slices.back().activated(), config_error, where,
                  " reads the shared sequence (no 'input'), so its adapter must be an activated "
                  "LoRA (adapter_config.json with alora_invocation_tokens)",
                  s.adapter ? "; " + s.adapter->string() + " is a plain one" : "; it has none");
      if (s.invocation) {
        invocations[i] = spec_ids(*s.invocation, where + " invocation");
      } else {
        const auto inv = slices.back().invocation();
        invocations[i].assign(inv.begin(), inv.end());
      }
      check_vocab_ids(invocations[i], vocab_size, where + " invocation");
    }
    if (spec.shared) {
      const SharedSpec& sh = *spec.shared;
      BATON_CHECK(!sh.system && !sh.turn_end.text, config_error, src,
                  ": field 'shared' has text; resolve it with a tokenizer");
      check_vocab_ids(sh.prefix, vocab_size, src + ": shared prefix");
      check_vocab_ids(sh.turn_end.ids, vocab_size, src + ": shared turn_end");
      std::vector<Segment> opening;
      for (std::size_t k = 0; k < sh.input.size(); ++k) {
        const std::string in = src + ": shared input[" + std::to_string(k) + "]";
        opening.push_back(Segment{sh.input[k].kind, -1, spec_ids(sh.input[k].literal, in)});
        check_vocab_ids(opening.back().ids, vocab_size, in + " ids");
      }
      std::vector<int> lens;
      int longest_stage_tail = 0;
      for (std::size_t i = 0; i < spec.stages.size(); ++i) {
        lens.push_back(static_cast<int>(invocations[i].size()));
        longest_stage_tail = std::max(longest_stage_tail, lens.back() + spec.stages[i].max_new);
      }
      const long long prefix_len = static_cast<long long>(sh.prefix.size());
      // Room for every turn, but never past the positions a stage's tail still needs.
      const long long room = model_.config().max_positions() - prefix_len - longest_stage_tail;
      BATON_CHECK(room > spec.max_request_tokens, capacity_error, src, ": the shared prefix of ",
                  prefix_len, " tokens, a request of ", spec.max_request_tokens,
                  " and a stage's invocation and output do not fit the "
                  "model's ",
                  model_.config().max_positions(), " positions");
      const int tail = static_cast<int>(std::min(shared_tail_for(spec, lens), room));
      shared_ =
          std::make_unique<SharedT>(model_, KvShape{static_cast<int>(prefix_len), tail, spec.slots},
                                    sh.prefix, std::move(opening), sh.turn_end.ids);
      for (Workspace<B>& ws : shared_->workspaces()) execution_.bind(ws);
    }
    for (std::size_t i = 0; i < spec.stages.size(); ++i) {
      const StageSpec& s = spec.stages[i];
      const std::string where = src + ": stage '" + s.name + "'";
      BATON_CHECK(!s.system && s.examples.empty() && s.stop_text.empty(), config_error, where,
                  " has text fields (system/examples/stop_text); resolve them with a tokenizer");
      const int vocab = model_.config().vocab_size;
      check_vocab_ids(s.prefix, vocab, where + " prefix");
      check_vocab_ids(s.stop, vocab, where + " stop");
      std::vector<Segment> segs;
      if (s.reads_shared) {
        segs.push_back(Segment{Segment::Kind::shared, -1, {}});
        segs.push_back(Segment{Segment::Kind::literal, -1, invocations[i]});
      }
      for (std::size_t k = 0; k < s.input.size(); ++k) {
        const SegmentSpec& g = s.input[k];
        const std::string in = where + " input[" + std::to_string(k) + "]";
        segs.push_back(Segment{g.kind, g.stage, spec_ids(g.literal, in)});
        check_vocab_ids(segs.back().ids, vocab, in + " ids");
      }
      Slice slice = std::move(slices[i]);
      if (auto why = base_model_mismatch(slice, model_)) warnings_.push_back(where + ": " + *why);
      // The worst-case slot (every read output at its max_new, the longest request) may
      // exceed the model's context; a slot never needs more than the positions left after
      // the prefix. A run whose input would not fit gets the stage's capacity_error.
      const long long prefix_len = static_cast<long long>(s.prefix.size());
      const long long room = model_.config().max_positions() - prefix_len;
      BATON_CHECK(room > s.max_new, capacity_error, where, ": prefix of ", prefix_len,
                  " tokens + max_new ", s.max_new, " do not fit the model's ",
                  model_.config().max_positions(), " positions (max_position_embeddings)");
      const long long needed = s.reads_shared
                                   ? static_cast<long long>(invocations[i].size()) + s.max_new
                                   : tail_capacity_for(spec, i);
      const int tail = static_cast<int>(std::min<long long>(needed, room));
      BATON_CHECK(spec.slots >= 1 && spec.slots <= 4096, config_error, src,
                  ": slots = ", spec.slots, " is outside [1, 4096]");
      const KvShape shape{static_cast<int>(prefix_len), tail, spec.slots};
      BATON_CHECK(!s.grammar || s.compiled_grammar, config_error, where,
                  " has a grammar; compile it with a tokenizer (resolve_text)");
      if (s.compiled_grammar)
        BATON_CHECK(s.compiled_grammar->distance(0) <= s.max_new, grammar_error, where,
                    ": the grammar needs at least ", s.compiled_grammar->distance(0),
                    " tokens, but max_new is ", s.max_new);
      stages_.push_back(std::make_unique<StageT>(
          s.name, model_, std::move(slice), shape, s.prefix, wire::DynamicInput{std::move(segs)},
          StageLimits{s.max_new, s.stop, s.sampling}, build_runtime_chain<B>(s, spec, vocab)));
      for (Workspace<B>& ws : stages_.back()->workspaces()) execution_.bind(ws);
      if (spec.token_bytes) stages_.back()->take_request_stops(spec.token_bytes);
      if (s.reads_shared) stages_.back()->read_shared(*shared_);
      ptrs.push_back(stages_.back().get());
    }
    engine_ = std::make_unique<RelayEngine<B>>(std::move(ptrs));
    options_.max_cycles = spec.max_cycles;
    options_.loop_from = spec.loop_from;
    const auto needle = spec_ids(spec.gate.needle, src + ": gate");
    BATON_CHECK(spec.gate.kind == GateSpec::Kind::none || !needle.empty(), config_error, src,
                ": the gate's needle is empty; it would pass every output");
    check_vocab_ids(needle, model_.config().vocab_size, src + ": gate");
    if (spec.gate.kind == GateSpec::Kind::starts_with) options_.gate = starts_with(needle);
    if (spec.gate.kind == GateSpec::Kind::contains) options_.gate = contains(needle);
    max_request_ = spec.max_request_tokens;
  }

  void prewarm() override { engine_->prewarm(); }
  RelayResult run(std::span<const std::int32_t> request) override {
    check_request(request);
    return engine_->run(request, options_);
  }
  RelayResult try_run(std::span<const std::int32_t> request) override {
    check_request(request);
    return engine_->try_run(request, options_);
  }
  const ModelConfig& config() const override { return model_.config(); }
  std::vector<std::string> stage_names() const override {
    std::vector<std::string> names;
    for (const auto& s : stages_) names.push_back(s->name());
    return names;
  }
  std::vector<std::int32_t> prefix(int stage) const override { return stages_.at(stage)->prefix(); }
  const std::vector<std::string>& warnings() const override { return warnings_; }
  std::string_view backend_name() const override { return B::name; }
  std::unique_ptr<BatchedRelay> batched(const SchedulerOptions& opt) override {
    if constexpr (W == Batching::without) {
      (void)opt;
      BATON_FAIL(usage_error, "this relay was built without the scheduler (Batching::without); ",
                 "build it with build_relay, or build_relay_as with Batching::with_scheduler");
    } else if constexpr (has_batched_forward_v<B, Model, Slice, Cache>) {
      std::vector<StageT*> stages;
      for (const auto& s : stages_) stages.push_back(s.get());
      SchedulerOptions o = opt;
      if (o.max_request_tokens <= 0) o.max_request_tokens = max_request_;
      auto scheduler = std::make_unique<RelayScheduler<StageT>>(std::move(stages), options_, o);
      execution_.bind(scheduler->workspace());  // the stages' pool, not OpenMP
      return scheduler;
    } else {
      (void)opt;
      BATON_FAIL(usage_error, "batched relays run on the host backend; ", B::name,
                 " has no batched forward yet");
    }
  }
  std::unique_ptr<RelayAdapter> load_adapter(const std::filesystem::path& dir) const override {
    auto a = std::make_unique<Adapter>(Slice::load(dir, model_));
    a->why = base_model_mismatch(a->slice, model_);
    return a;
  }
  std::unique_ptr<RelayAdapter> swap_adapter(int stage,
                                             std::unique_ptr<RelayAdapter> adapter) override {
    BATON_CHECK(stage >= 0 && stage < static_cast<int>(stages_.size()), usage_error,
                "swap_adapter: stage ", stage, " (the relay has ", stages_.size(), " stages)");
    auto* mine = dynamic_cast<Adapter*>(adapter.get());
    BATON_CHECK(!adapter || mine, usage_error,
                "swap_adapter: the adapter was loaded by a relay of another model type");
    StageT& st = *stages_[static_cast<std::size_t>(stage)];
    // Checked before the adapter is moved from: a refusal leaves it whole with its caller.
    BATON_CHECK(!st.in_use(), usage_error, "swap_adapter: stage '", st.name(),
                "' has a request on a slot; it runs on the weights it started with");
    Slice next = mine ? std::move(mine->slice) : Slice::none(model_.config());
    auto old = std::make_unique<Adapter>(st.exchange_slice(std::move(next)));
    old->why = base_model_mismatch(old->slice, model_);
    st.prewarm();
    return old;
  }
  /// The context the stages run on (tests read its wait counter).
  RelayExecution<B>& execution() { return execution_; }

 private:
  void check_request(std::span<const std::int32_t> request) const {
    BATON_CHECK(static_cast<long long>(request.size()) <= max_request_, capacity_error,
                "relay request of ", request.size(),
                " tokens exceeds max_request_tokens = ", max_request_);
  }

  struct Adapter final : RelayAdapter {
    explicit Adapter(Slice s) : slice(std::move(s)) {}
    const std::string& source() const override { return slice.name(); }
    const std::optional<std::string>& warning() const override { return why; }
    Slice slice;
    std::optional<std::string> why;
  };

  Model model_;                      // declared first: the stages hold a reference to it
  RelayExecution<B> execution_;      // ... and their workspaces one to this
  std::unique_ptr<SharedT> shared_;  // the sequence stages of activated adapters share, if any
  std::vector<std::unique_ptr<StageT>> stages_;
  std::unique_ptr<RelayEngine<B>> engine_;
  RelayOptions options_;
  int max_request_ = 0;
  std::vector<std::string> warnings_;
};

}  // namespace detail

/// Builds (but does not pre-warm) the relay on backend B for a model whose family, storage type
/// and head_dim the program fixes at compile time: one instantiation instead of build_relay's
/// dispatch over every supported triple, so a program made for one model compiles in a
/// fraction of the time (W: whether it carries RuntimeRelay::batched, see Batching). Throws
/// config_error when the model's files say otherwise.
template <Backend B, WeightStorage S, int D, ModelFamily F = family::Qwen2,
          Batching W = Batching::with_scheduler>
std::unique_ptr<RuntimeRelay> build_relay_as_on(const RelaySpec& spec) {
  check_spec_backend(spec, B::name);  // before anything is loaded
  const ModelConfig cfg = load_runtime_config(spec.model);
  BATON_CHECK(cfg.head_dim == D, config_error, spec.model.string(), ": head_dim is ", cfg.head_dim,
              ", but this relay was built for head_dim ", D);
  const Storage wanted = spec.storage ? *spec.storage : storage_of_dtype(stored_dtype(spec.model));
  BATON_CHECK(wanted == storage_of<S>, config_error, spec.model.string(), ": weights are ",
              storage_name(wanted), spec.storage ? " (the relay file's \"storage\")" : "",
              ", but this relay was built for ", storage_name(storage_of<S>));
  // load_model refuses an architecture F does not claim, naming both.
  return std::make_unique<detail::BackendRuntimeRelay<B, S, D, F, W>>(
      spec, load_model<B, S, F>(spec.model));
}

/// Builds (but does not pre-warm) the relay a spec describes, on backend B (baton::cuda needs
/// relay/cuda_relay.cuh in an nvcc translation unit). Family, storage type and head_dim follow
/// the model's files (model/model_dispatch.hpp); `Builds` may leave triples out.
template <Backend B, class Builds = BuildEveryModel>
std::unique_ptr<RuntimeRelay> build_relay_on(const RelaySpec& spec) {
  check_spec_backend(spec, B::name);
  return dispatch_model<Builds>(
      spec.model, load_runtime_config(spec.model),
      [&]<class F, class S, int D>() { return build_relay_as_on<B, S, D, F>(spec); },
      std::string("the ") + std::string(B::name) + " relay of this program", spec.storage);
}

}  // namespace baton
