// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief Activation scratch for one forward at a time; grows, never shrinks, so a decode
///        loop allocates nothing after its first step.
#pragma once

#include <cstddef>
#include <type_traits>
#include <utility>
#include <vector>

#include "baton/backend/backend.hpp"
#include "baton/core/model_config.hpp"
#include "baton/core/quant.hpp"

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
    const ActivationSizes z = sizes(c, tokens, logit_rows);
    grow(x, z.x);
    grow(xn, z.xn);
    grow(qkv, z.qkv);
    grow(attn, z.attn);
    grow(gate_up, z.gate_up);
    grow(act, z.act);
    grow(logits, z.logits);
  }
  /// The f32 elements of each activation buffer for a forward of `tokens` tokens with
  /// `logit_rows` rows of logits.
  struct ActivationSizes {
    std::size_t x, xn, qkv, attn, gate_up, act, logits;
    std::size_t total() const { return x + xn + qkv + attn + gate_up + act + logits; }
  };
  static ActivationSizes sizes(const ModelConfig& c, int tokens, int logit_rows) {
    const std::size_t n = static_cast<std::size_t>(tokens);
    const auto z = [](long v) { return static_cast<std::size_t>(v); };
    return {n * z(c.hidden_size),
            n * z(c.hidden_size),
            n * z(c.q_dim() + 2 * c.kv_dim()),
            n * z(c.q_dim()),
            n * 2 * z(c.intermediate_size),
            n * z(c.intermediate_size),
            z(logit_rows) * z(c.vocab_size)};
  }

  buffer<float> x;                  ///< [n, hidden] residual stream
  buffer<float> xn;                 ///< [n, hidden] normed input of a block
  buffer<float> qkv;                ///< [n, q + 2 kv] fused projections
  buffer<float> attn;               ///< [n, q] attention output
  buffer<float> gate_up;            ///< [n, 2 ffn] fused gate and up projections
  buffer<float> act;                ///< [n, ffn] SwiGLU output
  buffer<float> logits;             ///< [rows, vocab]
  std::vector<float> lora_scratch;  ///< host: the rank-r intermediate
  /// host, block-quantized models: the rows of a matrix-vector product's input, quantized
  QuantizedActivations quant_scratch;
  /// What the backend keeps beside the activations (`B::workspace_extras`; the CUDA backend's
  /// stream, token staging and attention partials); empty on the host.
  typename detail::workspace_extras<B>::type extras;

 private:
  void grow(buffer<float>& b, std::size_t need) {
    if constexpr (requires { extras.grow(b, need); }) {
      extras.grow(b, need);  // the backend's counted path (backend/exec_binding.hpp)
    } else if (b.size() < need) {
      b = buffer<float>(need);
    }
  }
};

/// The execution context B's workspaces bind to and count on (CudaContext, HostGridContext:
/// `ws.extras.bind(ctx)`, `ws.extras.bound_context()`), or void for a backend without one.
template <Backend B>
struct exec_context {
  using type = void;
};
template <Backend B>
requires requires(Workspace<B>& w) { w.extras.bound_context(); }
struct exec_context<B> {
  using type = std::remove_cvref_t<decltype(std::declval<Workspace<B>&>().extras.context())>;
};
template <Backend B>
using exec_context_t = typename exec_context<B>::type;

}  // namespace baton
