// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief `baton generate`'s run on any backend: load the model and adapter, one slot of a
///        fresh cache, the library's decode loop (with the grammar where one is given), and the
///        run-time facts (family, storage, head_dim) turned into template parameters by
///        model/model_dispatch.hpp. The host
///        subcommand (cmd_generate.cpp) and the CUDA translation unit (cuda/cuda_backend.cu)
///        both instantiate it, so the two backends run the same code.
#pragma once

#include <cstdint>
#include <iostream>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "baton/core/dtype.hpp"
#include "baton/grammar/token_grammar.hpp"
#include "baton/intercept/grammar_constraint.hpp"
#include "baton/intercept/step_skip.hpp"
#include "baton/io/hf_config.hpp"
#include "baton/kv/kv_buffer.hpp"
#include "baton/lora/base_model_check.hpp"
#include "baton/model/decode.hpp"
#include "baton/model/model_dispatch.hpp"
#include "generate_job.hpp"

namespace baton::cli {

/// Host logits are already in host memory. (A device backend's logits view has its own
/// `download_logits`, found by argument-dependent lookup.)
inline std::vector<float> download_logits(std::span<const float> logits) {
  return {logits.begin(), logits.end()};
}

/// The execution context generate() runs a workspace on, where B has one.
template <Backend B, class Ctx = exec_context_t<B>>
struct OwnContext {
  Ctx ctx;
};
template <Backend B>
struct OwnContext<B, void> {};

/// Runs `job` on `model` (family F, storage S, backend B) with a head_dim-D cache: the adapter,
/// then the prompt + generation on one slot of a fresh cache sized prompt + max_new.
template <Backend B, class F, WeightStorage S, int D>
Generated generate_with(const BaseModel<B, S, F>& model, const GenerateJob& job) {
  using Slice = LoraSlice<kRuntimeRankBound, B>;
  using Model = BaseModel<B, S, F>;
  const auto slice =
      job.adapter.empty() ? Slice::none(model.config()) : Slice::load(job.adapter, model);
  if (const auto why = base_model_mismatch(slice, model))
    std::cerr << "baton: warning: " << *why << "\n";
  const int n = static_cast<int>(job.prompt.size());
  // In long long: --max-new 2147483647 plus the prompt must not wrap into a negative size.
  const long long positions = static_cast<long long>(n) + job.max_new;
  BATON_CHECK(positions <= model.config().max_positions(), capacity_error, job.model,
              ": the prompt's ", n, " ids + --max-new ", job.max_new, " = ", positions,
              " positions exceed the model's max_position_embeddings = ",
              model.config().max_positions(), " (config.json)");
  // The f32 head-major cache only: one layout keeps the instantiations (and build time) down.
  using Cache = KvBuffer<layout::HeadMajor<f32, D>, B>;
  Cache cache(model.config(),
              KvShape{.prefix_capacity = 0, .tail_capacity = n + job.max_new, .slots = 1});
  cache.reset_prefix();
  cache.freeze_prefix();
  // On a backend with an execution context (CUDA: a stream of its own) the workspace runs on
  // one made here, so the decode loop's step is captured once as a graph and replayed rather
  // than launched kernel by kernel on the legacy stream.
  [[maybe_unused]] OwnContext<B> own;
  Workspace<B> ws;
  if constexpr (std::is_same_v<B, host>) {
    if (job.host_context != nullptr) ws.extras.bind(*job.host_context);
  } else if constexpr (!std::is_void_v<exec_context_t<B>>) {
    ws.extras.bind(own.ctx);
  }
  const DecodeOptions opt{job.max_new, job.stop_ids, job.sampling};
  Generated out;
  // The library's decode loop, exactly as a stage runs it: no hook (unless --step-logits asks
  // for every row), so on a device backend it stays on the device. The first logits row is the
  // prefill's, read before the loop, and `mask` applies the grammar's mask to it: a forced first
  // token is taken without a forward (step-skip), so the loop itself may never hold that row.
  const auto run = [&](auto& d, auto&& mask) {
    d.prefill(std::span<const std::int32_t>(job.prompt), 0);
    if (job.keep_first_logits) {
      out.first_logits = download_logits(d.logits());
      mask(out.first_logits);
    }
    if (job.keep_step_logits) {
      // Stepped by hand, reading each step's row (after its transforms: the grammar's mask)
      // once the step is over: the same step() that run() repeats, so no second instantiation
      // of it per model type. A step whose token was supplied without a forward gets an empty
      // row, and a chosen stop id (which ends the generation without joining the ids) none.
      // Watching every step keeps a device backend in the stepped loop (one copy per
      // step): --step-logits is a checking tool, not a fast path.
      for (bool more = true; more;) {
        const int skipped_before = d.result().skipped;
        more = d.step();
        if (out.step_logits.size() < d.result().ids.size())
          out.step_logits.push_back(d.result().skipped > skipped_before
                                        ? std::vector<float>{}
                                        : download_logits(d.logits()));
      }
    } else {
      d.run();
    }
    out.ids = d.result().ids;
    out.logprobs = d.result().logprobs;
    if constexpr (!std::is_void_v<exec_context_t<B>>) out.exec = own.ctx.counters();
  };
  if constexpr (B::is_device) {
    BATON_CHECK(!job.grammar, usage_error,
                "a grammar (--regex, --json-schema) runs on the host backend only (so far)");
  } else if (job.grammar) {
    // Constrained: the grammar masks every step; forced tokens skip their forward.
    using C = Chain<GrammarConstraint<B>, StepSkip>;
    const C chain{GrammarConstraint<B>(job.grammar), StepSkip{}};
    BranchState<C, B> branch(chain, "generate", BranchInfo{"generate", "generate", 0, job.max_new});
    Decoder<Model, Slice, Cache, C> d(model, slice, cache, ws, KvTarget::in_slot(0), opt, chain,
                                      branch, "generate");
    run(d, [&](std::vector<float>& row) {
      for (std::size_t id = 0; id < row.size(); ++id)
        row[id] = C::transform_logit(branch.params(), branch.device_on_host(),
                                     static_cast<std::int32_t>(id), row[id]);
    });
    return out;
  }
  Decoder<Model, Slice, Cache> d(model, slice, cache, ws, KvTarget::in_slot(0), opt);
  run(d, [](std::vector<float>&) {});
  return out;
}

/// A model folder's weights loaded once for any number of generate() calls: `baton generate`
/// loads one per run, the Python package one per `baton.Model`. Its family, storage and
/// head_dim are fixed when it is loaded (load_generator).
class LoadedModel {
 public:
  virtual ~LoadedModel() = default;
  /// `job` (its prompt, adapter, limits, sampling, grammar) on these weights; job.model and
  /// job.storage are those it was loaded with.
  virtual Generated generate(const GenerateJob& job) const = 0;
};

template <Backend B, class F, WeightStorage S, int D>
class LoadedModelOf final : public LoadedModel {
 public:
  explicit LoadedModelOf(const std::string& path) : model_(load_model<B, S, F>(path)) {}
  Generated generate(const GenerateJob& job) const override {
    return generate_with<B, F, S, D>(model_, job);
  }

 private:
  BaseModel<B, S, F> model_;
};

/// Loads the folder `path` as family F, storage S, head_dim D on backend B.
template <Backend B, class F, WeightStorage S, int D>
std::unique_ptr<LoadedModel> load_generator(const std::string& path) {
  return std::make_unique<LoadedModelOf<B, F, S, D>>(path);
}

/// Loads the folder `path` (config `cfg`, stored as `storage` or the checkpoint's dtype) on
/// backend B: the model's family, stored dtype and head_dim as template parameters
/// (model/model_dispatch.hpp), those `Builds` leaves out refused by name.
template <Backend B, class Builds = BuildEveryModel>
std::unique_ptr<LoadedModel> load_generator_dispatch(const std::string& path,
                                                     const ModelConfig& cfg,
                                                     std::optional<Storage> storage) {
  return dispatch_model<Builds>(
      path, cfg, [&]<class F, class S, int D>() { return load_generator<B, F, S, D>(path); },
      std::string("the ") + std::string(B::name) + " program (use --backend host)", storage);
}

/// `job` on backend B: its model loaded (load_generator_dispatch), then generate().
template <Backend B, class Builds = BuildEveryModel>
Generated generate_dispatch(const GenerateJob& job, const ModelConfig& cfg) {
  return load_generator_dispatch<B, Builds>(job.model, cfg, job.storage)->generate(job);
}

}  // namespace baton::cli
