// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief The input and output width of every projection a LoRA adapter may target, for one
///        model: what a model family states and what LoraSlice checks an adapter against.
#pragma once

#include <array>

#include "baton/core/model_config.hpp"
#include "baton/io/lora_target.hpp"

namespace baton {

/// Widths of one projection y[out] = W[out, in] x[in].
struct LoraDims {
  int in = 0;
  int out = 0;
};

/// One LoraDims per LoraTarget, in enum order.
using LoraShapes = std::array<LoraDims, kLoraTargetCount>;

/// The shapes of the standard decoder block (q/k/v/o attention projections, gate/up/down MLP)
/// that every family shipped with baton uses; a family with other projections states its own.
inline LoraShapes decoder_lora_shapes(const ModelConfig& c) {
  LoraShapes s{};
  s[static_cast<int>(LoraTarget::q)] = {c.hidden_size, c.q_dim()};
  s[static_cast<int>(LoraTarget::k)] = {c.hidden_size, c.kv_dim()};
  s[static_cast<int>(LoraTarget::v)] = {c.hidden_size, c.kv_dim()};
  s[static_cast<int>(LoraTarget::o)] = {c.q_dim(), c.hidden_size};
  s[static_cast<int>(LoraTarget::gate)] = {c.hidden_size, c.intermediate_size};
  s[static_cast<int>(LoraTarget::up)] = {c.hidden_size, c.intermediate_size};
  s[static_cast<int>(LoraTarget::down)] = {c.intermediate_size, c.hidden_size};
  return s;
}

}  // namespace baton
