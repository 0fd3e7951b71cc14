// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief The forward pass on the host backend: append a span of tokens to a KV target
///        through a LoRA slice and produce logits.
#pragma once

#include <cmath>
#include <cstdint>
#include <span>

#include "baton/backend/host.hpp"
#include "baton/backend/host_blas.hpp"
#include "baton/core/error.hpp"
#include "baton/kernels/activation.hpp"
#include "baton/kernels/attention.hpp"
#include "baton/kernels/norm.hpp"
#include "baton/kernels/rope.hpp"
#include "baton/kv/kv_buffer.hpp"
#include "baton/lora/lora_slice.hpp"
#include "baton/model/base_model.hpp"
#include "baton/model/workspace.hpp"

namespace baton {

namespace detail {

/// Adds the slice's update for (layer, target) to output columns [col, col + out) of y.
template <int R>
void host_lora(const LoraSlice<R, host>& slice, int layer, LoraTarget t, const float* x, int n,
               int ldx, float* y, int ldy, Workspace<host>& ws) {
  if (const auto* m = slice.module(layer, t)) {
    host_ops::lora_update(x, n, m->in, ldx, m->a.data(), m->b.data(), m->rank, m->out, m->scale, y,
                          ldy, ws.lora_scratch);
  }
}

}  // namespace detail

/// Appends `tokens` to `target` of `cache`, starting at `expected_pos`, and returns the logits
/// asked for by `mode` ([vocab] for `last`, [n, vocab] for `all`, empty for `none`).
///
/// Before anything is written: every id is checked against the vocabulary and the cache's
/// write contract (position == expected_pos, fits in capacity) is checked. The cache position
/// advances only after the whole forward succeeded.
template <StorageType S, int R, KvLayout L>
std::span<const float> forward(const BaseModel<host, S>& model, Workspace<host>& ws,
                               const LoraSlice<R, host>& slice, KvBuffer<L, host>& cache,
                               KvTarget target, int expected_pos,
                               std::span<const std::int32_t> tokens, Logits mode) {
  const ModelConfig& c = model.config();
  const int n = static_cast<int>(tokens.size());
  BATON_CHECK(n > 0, usage_error, "forward: no tokens to append to ", cache.describe(target));
  for (int i = 0; i < n; ++i) {
    BATON_CHECK(tokens[i] >= 0 && tokens[i] < c.vocab_size, usage_error, "forward: token id ",
                tokens[i], " at index ", i, " is outside the vocabulary [0, ", c.vocab_size, ")");
  }
  BATON_CHECK(slice.num_layers() == c.num_layers, shape_error, "forward: slice '", slice.name(),
              "' has ", slice.num_layers(), " layers, the model ", c.num_layers);
  cache.check_write(target, expected_pos, n);

  const int rows = mode == Logits::all ? n : 1;
  ws.ensure(c, n, rows);
  const int H = c.hidden_size, D = c.head_dim, nq = c.num_heads, nkv = c.num_kv_heads;
  const int qd = c.q_dim(), kvd = c.kv_dim(), qkv_w = qd + 2 * kvd, F = c.intermediate_size;
  const int group = nq / nkv;
  const float eps = static_cast<float>(c.rms_norm_eps);
  const float scale = 1.0f / std::sqrt(static_cast<float>(D));
  float* x = ws.x.data();
  float* xn = ws.xn.data();
  float* qkv = ws.qkv.data();
  const float* inv_freq = model.inv_freq().data();

  // Token-parallel loops fork only when there is enough work (see kParallelMinWork).
  const bool par_tokens = static_cast<long>(n) * H >= host_ops::kParallelMinWork;
  const S* emb = model.embedding().data();
#pragma omp parallel for schedule(static) if (par_tokens)
  for (int t = 0; t < n; ++t) {
    const S* row = emb + static_cast<std::size_t>(tokens[t]) * H;
    for (int i = 0; i < H; ++i) x[static_cast<std::size_t>(t) * H + i] = widen(row[i]);
  }

  for (int layer = 0; layer < c.num_layers; ++layer) {
    const LayerWeights<host, S>& W = model.layer(layer);

    // --- attention block -------------------------------------------------------------
#pragma omp parallel for schedule(static) if (par_tokens)
    for (int t = 0; t < n; ++t)
      kernels::rmsnorm_row(x + t * H, W.attn_norm.data(), xn + t * H, H, eps);
    host_ops::matmul_nt(xn, n, H, H, W.wqkv.data(), qkv_w, qkv, qkv_w, false, ws.widen_scratch);
    if (!W.bqkv.empty()) {
      for (int t = 0; t < n; ++t)
        for (int j = 0; j < qkv_w; ++j) qkv[t * qkv_w + j] += W.bqkv[j];
    }
    detail::host_lora(slice, layer, LoraTarget::q, xn, n, H, qkv, qkv_w, ws);
    detail::host_lora(slice, layer, LoraTarget::k, xn, n, H, qkv + qd, qkv_w, ws);
    detail::host_lora(slice, layer, LoraTarget::v, xn, n, H, qkv + qd + kvd, qkv_w, ws);

    // RoPE on q and k, then store k and v at their positions.
    KvBlock<L> dst = cache.write_block(target, layer);
#pragma omp parallel for schedule(static) if (par_tokens)
    for (int t = 0; t < n; ++t) {
      const int pos = expected_pos + t;
      float* q = qkv + static_cast<std::size_t>(t) * qkv_w;
      for (int h = 0; h < nq + nkv; ++h) kernels::rope_rotate_head(q + h * D, D, pos, inv_freq);
      const int idx = cache.block_index(target, pos);
      for (int h = 0; h < nkv; ++h) {
        typename L::element* kd = dst.key(h, idx);
        typename L::element* vd = dst.value(h, idx);
        const float* ks = q + qd + h * D;
        const float* vs = q + qd + kvd + h * D;
        for (int d = 0; d < D; ++d) {
          kd[d] = narrow<typename L::element>(ks[d]);
          vd[d] = narrow<typename L::element>(vs[d]);
        }
      }
    }
    const KvSpan<L> span = cache.read_span(target, layer, expected_pos + n);
    float* attn = ws.attn.data();
    const bool par_attn =
        static_cast<long>(n) * nq * (expected_pos + n) * D >= host_ops::kParallelMinWork;
#pragma omp parallel for collapse(2) schedule(static) if (par_attn)
    for (int t = 0; t < n; ++t) {
      for (int h = 0; h < nq; ++h) {
        kernels::attend_one<L>(qkv + static_cast<std::size_t>(t) * qkv_w + h * D, span, h / group,
                               expected_pos + t + 1, scale,
                               attn + static_cast<std::size_t>(t) * qd + h * D);
      }
    }
    host_ops::matmul_nt(attn, n, qd, qd, W.wo.data(), H, x, H, true, ws.widen_scratch);
    detail::host_lora(slice, layer, LoraTarget::o, attn, n, qd, x, H, ws);

    // --- MLP block ---------------------------------------------------------------------
#pragma omp parallel for schedule(static) if (par_tokens)
    for (int t = 0; t < n; ++t)
      kernels::rmsnorm_row(x + t * H, W.mlp_norm.data(), xn + t * H, H, eps);
    float* gu = ws.gate_up.data();
    host_ops::matmul_nt(xn, n, H, H, W.wgate_up.data(), 2 * F, gu, 2 * F, false, ws.widen_scratch);
    detail::host_lora(slice, layer, LoraTarget::gate, xn, n, H, gu, 2 * F, ws);
    detail::host_lora(slice, layer, LoraTarget::up, xn, n, H, gu + F, 2 * F, ws);
    float* act = ws.act.data();
#pragma omp parallel for schedule(static) if (static_cast <long>(n) * F >= \
                                              host_ops::kParallelMinWork)
    for (int t = 0; t < n; ++t)
      for (int i = 0; i < F; ++i)
        act[t * F + i] = kernels::swiglu(gu[t * 2 * F + i], gu[t * 2 * F + F + i]);
    host_ops::matmul_nt(act, n, F, F, W.wdown.data(), H, x, H, true, ws.widen_scratch);
    detail::host_lora(slice, layer, LoraTarget::down, act, n, F, x, H, ws);
  }

  cache.commit(target, n);
  if (mode == Logits::none) return {};

  // Final norm and head only for the rows asked for.
  const int first = n - rows;
#pragma omp parallel for schedule(static) if (par_tokens)
  for (int t = first; t < n; ++t)
    kernels::rmsnorm_row(x + t * H, model.final_norm().data(), xn + (t - first) * H, H, eps);
  host_ops::matmul_nt(xn, rows, H, H, model.head().data(), c.vocab_size, ws.logits.data(),
                      c.vocab_size, false, ws.widen_scratch);
  return std::span<const float>(ws.logits.data(), static_cast<std::size_t>(rows) * c.vocab_size);
}

}  // namespace baton
