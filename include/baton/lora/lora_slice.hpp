// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief LoraSlice: one adapter's A/B matrices for the targeted projections of every layer.
///
/// The update of a targeted projection W is  y = W x + s · B (A x)  with A [r, in], B [out, r]
/// and s = alpha / r (or alpha / sqrt(r) with rsLoRA). A and B are kept in f32: they are small,
/// and the rank-r intermediate stays exact enough for the f32 golden tolerances.
///
/// An activated LoRA (adapter_config.json's `alora_invocation_tokens`) applies that update only
/// from its invocation on (lora/activation.hpp); the slice keeps the invocation, and the forward
/// is told the activation start.
#pragma once

#include <array>
#include <concepts>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "baton/backend/backend.hpp"
#include "baton/core/error.hpp"
#include "baton/core/model_config.hpp"
#include "baton/io/peft_config.hpp"
#include "baton/io/safetensors.hpp"
#include "baton/lora/activation.hpp"
#include "baton/lora/lora_dims.hpp"

namespace baton {

/// The rank bound used where the adapter is only known at run time (relay files, the CLI).
/// On the host the bound only limits which adapters load — the kernels loop over the real
/// rank — so one generous bound keeps the instantiations down.
inline constexpr int kRuntimeRankBound = 256;

/// One adapter on the projections it targets.
/// @tparam Rank compile-time bound on every module's rank (kernels keep the rank-r
///         intermediate in registers); an adapter with a larger r is rejected at load.
/// @tparam B the backend holding A and B
template <int Rank, Backend B>
class LoraSlice {
  static_assert(Rank >= 1 && Rank <= 256, "LoraSlice<Rank>: the rank bound must be in 1..256");

 public:
  static constexpr int rank_bound = Rank;
  using backend = B;

  /// A and B of one projection; `rank` <= Rank.
  struct Module {
    int rank = 0;
    int in = 0;
    int out = 0;
    float scale = 0.0f;
    typename B::template buffer<float> a;  ///< [rank, in], row-major
    typename B::template buffer<float> b;  ///< [out, rank], row-major
  };

  /// The "no adapter" slice: base-model behaviour.
  static LoraSlice none(const ModelConfig& cfg) {
    LoraSlice s;
    s.modules_.resize(cfg.num_layers);
    s.name_ = "(none)";
    return s;
  }

  /// Loads a PEFT adapter folder for `model`, checking every module against the projection
  /// shapes its family states (BaseModel::lora_shapes()).
  template <class Model>
  requires requires(const Model& m) {
    { m.config() } -> std::convertible_to<const ModelConfig&>;
    { m.lora_shapes() } -> std::same_as<LoraShapes>;
  }
  static LoraSlice load(const std::filesystem::path& dir, const Model& model,
                        const io::ReadLimits& limits = {}) {
    return load(dir, model.config(), model.lora_shapes(), limits);
  }

  /// Loads a PEFT adapter folder for a model with `cfg` and the standard decoder projections
  /// (every family baton ships; pass the model itself for a family with other shapes).
  static LoraSlice load(const std::filesystem::path& dir, const ModelConfig& cfg,
                        const io::ReadLimits& limits = {}) {
    return load(dir, cfg, decoder_lora_shapes(cfg), limits);
  }

  /// Loads a PEFT adapter folder (adapter_config.json + adapter_model.safetensors) whose
  /// modules must have the widths in `shapes`.
  static LoraSlice load(const std::filesystem::path& dir, const ModelConfig& cfg,
                        const LoraShapes& shapes, const io::ReadLimits& limits = {}) {
    const io::AdapterConfig ac = io::load_adapter_config(dir, limits);
    const std::filesystem::path file = dir / "adapter_model.safetensors";
    const io::TensorSource src = io::TensorSource::open_file(file);
    LoraSlice s = none(cfg);
    s.name_ = dir.string();
    s.base_model_ = ac.base_model_name_or_path;
    for (const std::int32_t id : ac.alora_invocation_tokens) {
      BATON_CHECK(id < cfg.vocab_size, config_error, ac.source,
                  ": field 'alora_invocation_tokens' holds token id ", id,
                  ", outside the model's vocabulary [0, ", cfg.vocab_size, ")");
    }
    s.invocation_ = ac.alora_invocation_tokens;
    std::size_t used = 0;
    for (int layer = 0; layer < cfg.num_layers; ++layer) {
      for (int ti = 0; ti < kLoraTargetCount; ++ti) {
        const auto t = static_cast<LoraTarget>(ti);
        if (!ac.targets(layer, t)) continue;
        const std::string an = io::lora_tensor_name(layer, t, 'A');
        const std::string bn = io::lora_tensor_name(layer, t, 'B');
        const int r = ac.rank_for(layer, t);
        // The rank comes from the config (before any tensor is read): name the field.
        BATON_CHECK(r <= Rank, shape_error, "adapter ", dir.string(),
                    ": adapter_config.json's 'r' (or its 'rank_pattern') = ", r, " for ",
                    io::AdapterConfig::module_path(layer, t), " exceeds the largest rank ", Rank,
                    " that this LoraSlice<", Rank, "> holds; use a larger rank bound");
        const auto [in, out] = shapes[ti];
        const std::size_t a_shape[] = {static_cast<std::size_t>(r), static_cast<std::size_t>(in)};
        const std::size_t b_shape[] = {static_cast<std::size_t>(out), static_cast<std::size_t>(r)};
        Module m;
        m.rank = r;
        m.in = in;
        m.out = out;
        m.scale = static_cast<float>(ac.scale_for(layer, t));
        m.a = B::upload(std::span<const float>(src.template read<float>(an, a_shape)));
        m.b = B::upload(std::span<const float>(src.template read<float>(bn, b_shape)));
        s.modules_[layer][ti] = std::move(m);
        used += 2;
      }
    }
    // Every tensor in the file must belong to a module we applied: anything else means the
    // adapter targets something this loader would silently ignore.
    if (used != src.names().size()) {
      for (const std::string& n : src.names()) {
        bool known = false;
        for (int layer = 0; layer < cfg.num_layers && !known; ++layer)
          for (int ti = 0; ti < kLoraTargetCount && !known; ++ti)
            known = s.modules_[layer][ti].has_value() &&
                    (n == io::lora_tensor_name(layer, static_cast<LoraTarget>(ti), 'A') ||
                     n == io::lora_tensor_name(layer, static_cast<LoraTarget>(ti), 'B'));
        BATON_CHECK(known, format_error, "adapter ", file.string(), ": tensor '", n,
                    "' does not belong to a targeted projection of this ", cfg.num_layers,
                    "-layer model");
      }
    }
    return s;
  }

  /// The module on (layer, target), or nullptr if the adapter leaves it alone.
  const Module* module(int layer, LoraTarget t) const {
    const auto& m = modules_.at(layer)[static_cast<int>(t)];
    return m ? &*m : nullptr;
  }
  bool empty() const {
    for (const auto& layer : modules_)
      for (const auto& m : layer)
        if (m) return false;
    return true;
  }
  int num_layers() const { return static_cast<int>(modules_.size()); }
  /// Whether this is an activated LoRA: its update applies only from its invocation on.
  bool activated() const { return !invocation_.empty(); }
  /// The invocation tokens of an activated LoRA (empty for a plain one).
  std::span<const std::int32_t> invocation() const { return invocation_; }
  /// The activation start for the stream `context` (from position `base`) then `tokens`: 0 for
  /// a plain LoRA; for an activated one the last occurrence of its invocation, kAdapterNever
  /// without one (alora_start).
  int activation_start(std::span<const std::int32_t> context, std::span<const std::int32_t> tokens,
                       int base = 0) const {
    return activated() ? alora_start(context, tokens, invocation_, base) : 0;
  }
  const std::string& name() const { return name_; }
  /// The adapter's `base_model_name_or_path` as written ("" if absent or no adapter): the
  /// model it says it was trained on (see lora/base_model_check.hpp).
  const std::string& base_model() const { return base_model_; }

 private:
  LoraSlice() = default;
  std::vector<std::array<std::optional<Module>, kLoraTargetCount>> modules_;
  std::string name_;
  std::string base_model_;
  std::vector<std::int32_t> invocation_;  ///< aLoRA invocation; empty: plain LoRA
};

}  // namespace baton
