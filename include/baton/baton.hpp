// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief The umbrella header: everything a host program needs to load a model, build stages
///        and run a relay. Link baton::host; add baton::text for the tokenizer (included here
///        when PCRE2 and utf8proc headers are available). The CUDA backend is
///        baton/backend/cuda.hpp (link baton::cuda).
#pragma once

#include "baton/backend/host.hpp"
#include "baton/core/dispatch.hpp"
#include "baton/core/dtype.hpp"
#include "baton/core/error.hpp"
#include "baton/core/model_config.hpp"
#include "baton/grammar/grammar_spec.hpp"
#include "baton/grammar/token_grammar.hpp"
#include "baton/intercept/builtins.hpp"
#include "baton/intercept/grammar_constraint.hpp"
#include "baton/io/hf_config.hpp"
#include "baton/io/peft_config.hpp"
#include "baton/io/safetensors.hpp"
#include "baton/kv/append.hpp"
#include "baton/kv/head_dims.hpp"
#include "baton/kv/kv_buffer.hpp"
#include "baton/kv/kv_view.hpp"
#include "baton/kv/layout.hpp"
#include "baton/lora/base_model_check.hpp"
#include "baton/lora/lora_dims.hpp"
#include "baton/lora/lora_slice.hpp"
#include "baton/model/base_model.hpp"
#include "baton/model/decode.hpp"
#include "baton/model/family/family.hpp"
#include "baton/model/family/qwen2.hpp"
#include "baton/model/family/qwen3.hpp"
#include "baton/model/forward.hpp"
#include "baton/model/forward_batch.hpp"
#include "baton/model/host_forward.hpp"
#include "baton/model/weight_reader.hpp"
#include "baton/relay/config.hpp"
#include "baton/relay/engine.hpp"
#include "baton/relay/gate.hpp"
#include "baton/relay/relay.hpp"
#include "baton/relay/runtime_relay.hpp"
#include "baton/relay/stage.hpp"

#if __has_include(<pcre2.h>) && __has_include(<utf8proc.h>)
#include "baton/grammar/grammar.hpp"
#include "baton/text/chat.hpp"
#include "baton/text/chat_config.hpp"
#include "baton/text/chat_encode.hpp"
#include "baton/text/chat_template.hpp"
#include "baton/text/model_chat.hpp"
#include "baton/text/relay_text.hpp"
#include "baton/text/token_bytes.hpp"
#include "baton/text/tokenizer.hpp"
#endif
