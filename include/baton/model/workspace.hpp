// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief Activation scratch for one forward at a time; grows, never shrinks, so a decode
///        loop allocates nothing after its first step.
#pragma once

#include <cstddef>
#include <vector>

#include "baton/backend/backend.hpp"
#include "baton/core/model_config.hpp"

namespace baton {

namespace detail {
struct NoWorkspaceExtras {};
/// A backend's own per-workspace state (`B::workspace_extras`), or nothing.
template <class B>
struct workspace_extras {
  using type = NoWorkspaceExtras;
};
template <class B>
requires requires { typename B::workspace_extras; }
struct workspace_extras<B> {
  using type = typename B::workspace_extras;
};
}  // namespace detail

/// Per-caller activation buffers (a model is shared and const; its scratch is not).
/// Each stage or session owns one, so stages never race on activations.
template <Backend B>
class Workspace {
 public:
  template <class T>
  using buffer = typename B::template buffer<T>;

  /// Makes room for a forward of `tokens` tokens with `logit_rows` rows of logits. Each
  /// buffer is checked against its own need, so one workspace can serve models of different
  /// shapes without a buffer too small for one of them.
  void ensure(const ModelConfig& c, int tokens, int logit_rows) {
    const std::size_t n = static_cast<std::size_t>(tokens);
    grow(x, n * c.hidden_size);
    grow(xn, n * c.hidden_size);
    grow(qkv, n * (c.q_dim() + 2 * c.kv_dim()));
    grow(attn, n * c.q_dim());
    grow(gate_up, n * 2 * c.intermediate_size);
    grow(act, n * c.intermediate_size);
    grow(logits, static_cast<std::size_t>(logit_rows) * c.vocab_size);
  }

  buffer<float> x;                  ///< [n, hidden] residual stream
  buffer<float> xn;                 ///< [n, hidden] normed input of a block
  buffer<float> qkv;                ///< [n, q + 2 kv] fused projections
  buffer<float> attn;               ///< [n, q] attention output
  buffer<float> gate_up;            ///< [n, 2 ffn] fused gate and up projections
  buffer<float> act;                ///< [n, ffn] SwiGLU output
  buffer<float> logits;             ///< [rows, vocab]
  std::vector<float> lora_scratch;  ///< host: the rank-r intermediate
  /// What the backend keeps beside the activations (`B::workspace_extras`; the CUDA backend's
  /// stream, token staging and attention partials); empty on the host.
  typename detail::workspace_extras<B>::type extras;

 private:
  static void grow(buffer<float>& b, std::size_t need) {
    if (b.size() < need) b = buffer<float>(need);
  }
};

}  // namespace baton
