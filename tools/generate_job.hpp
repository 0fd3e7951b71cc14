// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief One `baton generate` request, decided from the command line and the model's config,
///        and what it produced: plain data shared by the host and the CUDA translation units.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "baton/backend/exec_binding.hpp"
#include "baton/core/storage.hpp"
#include "baton/model/sampling.hpp"

namespace baton {
class HostContext;
}
namespace baton::grammar {
class TokenGrammar;
}

namespace baton::cli {

struct GenerateJob {
  std::string model, adapter;          ///< folders, as given
  std::vector<std::int32_t> prompt;    ///< the ids run at positions 0 .. n-1
  std::vector<std::int32_t> stop_ids;  ///< the config's eos ids (empty with --ignore-eos)
  int max_new = 0;
  bool keep_first_logits = false;                        ///< --logits
  bool keep_step_logits = false;                         ///< --step-logits
  std::shared_ptr<const grammar::TokenGrammar> grammar;  ///< --regex / --json-schema (host only)
  HostContext* host_context = nullptr;  ///< host: the pool the forward runs on (null: OpenMP)
  std::optional<Storage> storage;       ///< the base model's storage; unset: the checkpoint's
  SamplingOptions sampling;             ///< --temperature, --seed, ... (greedy by default)
};

struct Generated {
  std::vector<std::int32_t> ids;
  std::vector<float> first_logits;  ///< the row that chose ids[0]; filled only when asked for
  /// Filled only when asked for: one row per id, the logits that chose it (after the grammar's
  /// mask); an empty row where the step supplied its token without a forward (step-skip).
  std::vector<std::vector<float>> step_logits;
  std::vector<TokenLogprobs> logprobs;  ///< one per id when --logprobs asked
  /// What the execution context counted (device-loop backends: CUDA, the host grid): waits,
  /// run-time allocations, graph captures and replays.
  ExecCounters exec;
};

}  // namespace baton::cli
