// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief LoraTarget: the seven projections a LoRA adapter may adapt, and their PEFT names.
///
/// Split from io/peft_config.hpp so kernels and slices can name targets without pulling in
/// JSON or <regex>.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

namespace baton {

/// A projection inside a decoder layer that LoRA can adapt.
enum class LoraTarget : std::uint8_t { q, k, v, o, gate, up, down };
inline constexpr int kLoraTargetCount = 7;

/// All targets in enum order, for loops.
inline constexpr std::array<LoraTarget, kLoraTargetCount> kLoraTargets{
    LoraTarget::q,    LoraTarget::k,  LoraTarget::v,   LoraTarget::o,
    LoraTarget::gate, LoraTarget::up, LoraTarget::down};

/// The module's short name in Hugging Face checkpoints: "q_proj", ..., "down_proj".
constexpr std::string_view lora_target_name(LoraTarget t) {
  switch (t) {
    case LoraTarget::q:
      return "q_proj";
    case LoraTarget::k:
      return "k_proj";
    case LoraTarget::v:
      return "v_proj";
    case LoraTarget::o:
      return "o_proj";
    case LoraTarget::gate:
      return "gate_proj";
    case LoraTarget::up:
      return "up_proj";
    case LoraTarget::down:
      return "down_proj";
  }
  return "?";
}

/// The submodule holding it: "self_attn" (q, k, v, o) or "mlp" (gate, up, down).
constexpr std::string_view lora_target_parent(LoraTarget t) {
  return static_cast<int>(t) <= static_cast<int>(LoraTarget::o) ? "self_attn" : "mlp";
}

/// The target whose short name is `name` ("q_proj" -> q), if any.
constexpr std::optional<LoraTarget> lora_target_from_name(std::string_view name) {
  for (const LoraTarget t : kLoraTargets) {
    if (lora_target_name(t) == name) return t;
  }
  return std::nullopt;
}

}  // namespace baton
