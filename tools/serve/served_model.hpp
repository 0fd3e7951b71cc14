// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief A plain model folder served under one model id (`baton serve --model DIR`): the base
///        model as a relay of one stage (no adapter, no prefix: the request is the whole
///        prompt), run by the same engine and batch scheduler as relay files, so concurrent
///        requests share steps. A chat is the request's whole conversation rendered through the
///        folder's own chat template; a completion is its prompt as text.
///
/// With adapters (`--lora NAME=DIR`, `--max-loras N`), the relay has one more stage per adapter
/// slot, each the same request-only stage on its slot's adapter, and every request runs one
/// stage alone: the base's or its adapter's (adapter_table.hpp places it). All share one
/// scheduler, so requests for different adapters are rows of the same batched steps.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "baton/text/chat_config.hpp"
#include "served_relay.hpp"

namespace baton::serve {

/// How a model folder is served.
struct ModelServeSpec {  // NOLINT: aggregate
  std::filesystem::path dir;
  std::string name;                ///< the model id clients give
  int max_tokens = 256;            ///< tokens a request may generate at most
  int max_prompt_tokens = 1024;    ///< a prompt's tokens at most (sizes each slot)
  std::vector<std::int32_t> stop;  ///< ids that end generation (config's and generation_config's)
  int max_loras = 0;               ///< adapter slots (0: no adapters are served)
};

/// The relay `m` is served as: stage "model", the base model (no adapter), the request as its
/// input, `m.stop` as its stop ids, max_new `m.max_tokens`; then `m.max_loras` stages
/// "adapter-slot-K" alike, without an adapter until one is placed there.
RelaySpec model_relay_spec(const ModelServeSpec& m);

class ServedModel final : public ServedRelay {
 public:
  /// Serves `relay` (built from model_relay_spec(...) as `spec`, pre-warmed) with the folder's
  /// tokenizer and chat conventions. With `request_specials`, control tags spelled in a
  /// request are control tokens (--request-specials); otherwise they are text.
  ServedModel(RelaySpec spec, Tokenizer tokenizer, ChatConfig chat,
              std::unique_ptr<RuntimeRelay> relay, ServeLimits limits, bool request_specials);
  /// The same, serving adapters through `adapters` (over this relay's slot stages).
  ServedModel(RelaySpec spec, Tokenizer tokenizer, ChatConfig chat,
              std::unique_ptr<RuntimeRelay> relay, ServeLimits limits, bool request_specials,
              AdapterLimits adapters);
  /// Stops the stepping thread before the adapter table it uses goes.
  ~ServedModel() override { stop(); }
  AdapterTable* adapters() override { return adapters_.get(); }

  std::string label() const override { return "model '" + name() + "'"; }
  std::string prompt_limit_source() const override { return "--max-prompt-tokens"; }
  /// A chat: every message through the chat template with add_generation_prompt, the
  /// template's tags as control tokens and the messages' text as text, add_bos_token's BOS
  /// once (text/model_chat.hpp). A completion: the tokenizer's own leading special tokens
  /// (its post-processor's, as transformers' tokenizer(text) adds them), the prompt as text,
  /// then the same BOS rule. Ids are taken as given.
  std::vector<std::int32_t> prompt_ids(const ApiRequest& r) const override;
  nlohmann::json describe() const override;

 private:
  ChatConfig chat_;
  std::unique_ptr<AdapterTable> adapters_;
};

}  // namespace baton::serve
