// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief Activation scratch for one forward at a time; grows, never shrinks, so a decode
///        loop allocates nothing after its first step.
#pragma once

#include <cstddef>
#include <vector>

#include "baton/backend/backend.hpp"
#include "baton/model/config.hpp"

namespace baton {

/// Per-caller activation buffers (a model is shared and const; its scratch is not).
/// Each stage or session owns one, so stages never race on activations.
template <Backend B>
class Workspace {
 public:
  template <class T>
  using buffer = typename B::template buffer<T>;

  /// Makes room for a forward of `tokens` tokens with `logit_rows` rows of logits.
  void ensure(const ModelConfig& c, int tokens, int logit_rows) {
    if (tokens > tokens_ || c.hidden_size != hidden_) {
      const std::size_t n = static_cast<std::size_t>(tokens);
      x = buffer<float>(n * c.hidden_size);
      xn = buffer<float>(n * c.hidden_size);
      qkv = buffer<float>(n * (c.q_dim() + 2 * c.kv_dim()));
      attn = buffer<float>(n * c.q_dim());
      gate_up = buffer<float>(n * 2 * c.intermediate_size);
      act = buffer<float>(n * c.intermediate_size);
      tokens_ = tokens;
      hidden_ = c.hidden_size;
    }
    const std::size_t need = static_cast<std::size_t>(logit_rows) * c.vocab_size;
    if (logits.size() < need) logits = buffer<float>(need);
  }

  buffer<float> x;        ///< [n, hidden] residual stream
  buffer<float> xn;       ///< [n, hidden] normed input of a block
  buffer<float> qkv;      ///< [n, q + 2 kv] fused projections
  buffer<float> attn;     ///< [n, q] attention output
  buffer<float> gate_up;  ///< [n, 2 ffn] fused gate and up projections
  buffer<float> act;      ///< [n, ffn] SwiGLU output
  buffer<float> logits;   ///< [rows, vocab]
  std::vector<float> widen_scratch;  ///< host: widened weight band for 16-bit prefill products
  std::vector<float> lora_scratch;   ///< host: the rank-r intermediate

 private:
  int tokens_ = 0;
  int hidden_ = 0;
};

}  // namespace baton
