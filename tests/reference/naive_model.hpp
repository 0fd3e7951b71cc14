// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// A deliberately naive, double-precision Qwen2/Llama/Qwen3 forward with no KV cache: every call
// recomputes the whole sequence from the weights. It shares no code with the library's
// model, kernels or loaders (only the plain ModelConfig struct), so agreeing with it means
// something. Slow on purpose: O(layers * n^2) with simple loops.
#pragma once

#include <algorithm>
#include <cmath>
#include <map>
#include <numbers>
#include <string>
#include <vector>

#include "support/tiny_model.hpp"

namespace baton::test {

class NaiveModel {
 public:
  explicit NaiveModel(const TinyModel& m, const TinyAdapter* adapter = nullptr) : m_(m) {
    for (const auto& [name, v] : m.tensors) w_[name] = std::vector<double>(v.begin(), v.end());
    if (adapter) {
      for (const auto& [name, v] : adapter->tensors)
        lora_[name] = std::vector<double>(v.begin(), v.end());
      lora_scale_ = adapter->scale;
      invocation_ = adapter->spec.invocation;
    }
  }

  /// An activated adapter's start in `prompt`: where the last whole occurrence of its
  /// invocation begins (PEFT's rule, written here on its own), or the prompt's length + 1 (no
  /// token adapted, generated ones neither) without one; 0 for a plain adapter.
  int activation_start(const std::vector<int>& prompt) const {
    if (invocation_.empty()) return 0;
    const int n = static_cast<int>(prompt.size()), m = static_cast<int>(invocation_.size());
    for (int s = n - m; s >= 0; --s)
      if (std::equal(invocation_.begin(), invocation_.end(), prompt.begin() + s)) return s;
    return 1 << 30;
  }

  /// Logits for every position of `ids` (rows of vocab doubles).
  /// `adapt_from`: the first position the adapter applies at (activated adapters).
  std::vector<std::vector<double>> logits(const std::vector<int>& ids, int adapt_from = 0) const {
    const ModelConfig& c = m_.cfg;
    const int n = static_cast<int>(ids.size()), H = c.hidden_size, D = c.head_dim;
    std::vector<std::vector<double>> x(n, std::vector<double>(H));
    for (int t = 0; t < n; ++t)
      for (int i = 0; i < H; ++i) x[t][i] = w("model.embed_tokens.weight")[ids[t] * H + i];
    for (int l = 0; l < c.num_layers; ++l) {
      const std::string p = "model.layers." + std::to_string(l) + ".";
      std::vector<std::vector<double>> q(n), k(n), v(n), out(n);
      for (int t = 0; t < n; ++t) {
        const auto h = rmsnorm(x[t], w(p + "input_layernorm.weight"));
        const bool on = t >= adapt_from;
        q[t] = proj(l, "self_attn", "q_proj", h, on);
        k[t] = proj(l, "self_attn", "k_proj", h, on);
        v[t] = proj(l, "self_attn", "v_proj", h, on);
        // Qwen3: RMSNorm of each q and k head (weights [head_dim]) before the rotation.
        if (w_.count(p + "self_attn.q_norm.weight")) {
          for (int hd = 0; hd < c.num_heads; ++hd)
            head_rmsnorm(q[t], hd * D, w(p + "self_attn.q_norm.weight"));
          for (int hd = 0; hd < c.num_kv_heads; ++hd)
            head_rmsnorm(k[t], hd * D, w(p + "self_attn.k_norm.weight"));
        }
        for (int hd = 0; hd < c.num_heads; ++hd) rope(q[t], hd * D, t);
        for (int hd = 0; hd < c.num_kv_heads; ++hd) rope(k[t], hd * D, t);
      }
      for (int t = 0; t < n; ++t) {
        std::vector<double> o(c.q_dim(), 0.0);
        for (int hd = 0; hd < c.num_heads; ++hd) {
          const int kvh = hd / (c.num_heads / c.num_kv_heads);
          std::vector<double> s(t + 1);
          double mx = -1e300;
          for (int u = 0; u <= t; ++u) {
            double dot = 0;
            for (int d = 0; d < D; ++d) dot += q[t][hd * D + d] * k[u][kvh * D + d];
            s[u] = dot / std::sqrt(static_cast<double>(D));
            mx = std::max(mx, s[u]);
          }
          double sum = 0;
          for (double& e : s) sum += (e = std::exp(e - mx));
          for (int u = 0; u <= t; ++u)
            for (int d = 0; d < D; ++d) o[hd * D + d] += s[u] / sum * v[u][kvh * D + d];
        }
        const bool on = t >= adapt_from;
        const auto a = proj(l, "self_attn", "o_proj", o, on);
        for (int i = 0; i < H; ++i) x[t][i] += a[i];
        const auto h2 = rmsnorm(x[t], w(p + "post_attention_layernorm.weight"));
        const auto g = proj(l, "mlp", "gate_proj", h2, on);
        const auto u = proj(l, "mlp", "up_proj", h2, on);
        std::vector<double> act(g.size());
        for (std::size_t i = 0; i < g.size(); ++i) act[i] = g[i] / (1.0 + std::exp(-g[i])) * u[i];
        const auto dn = proj(l, "mlp", "down_proj", act, on);
        for (int i = 0; i < H; ++i) x[t][i] += dn[i];
      }
    }
    const std::string head = c.tie_word_embeddings ? "model.embed_tokens.weight" : "lm_head.weight";
    std::vector<std::vector<double>> logits(n);
    for (int t = 0; t < n; ++t) logits[t] = matvec(w(head), rmsnorm(x[t], w("model.norm.weight")));
    return logits;
  }

  /// Greedy decode recomputing everything at every step (lowest id wins an exact tie). An
  /// activated adapter's start is found once, in the prompt, and kept (as PEFT's generate()).
  std::vector<int> greedy(std::vector<int> seq, int max_new,
                          const std::vector<int>& stop = {}) const {
    std::vector<int> out;
    const int from = activation_start(seq);
    for (int s = 0; s < max_new; ++s) {
      const auto lg = logits(seq, from).back();
      int best = 0;
      for (int i = 1; i < static_cast<int>(lg.size()); ++i)
        if (lg[i] > lg[best]) best = i;
      if (std::find(stop.begin(), stop.end(), best) != stop.end()) break;
      out.push_back(best);
      seq.push_back(best);
    }
    return out;
  }

  /// The reference's own RoPE frequencies (written independently of the library's).
  static std::vector<double> inverse_frequencies(const ModelConfig& c) {
    std::vector<double> f;
    for (int i = 0; i < c.head_dim / 2; ++i) {
      double inv = 1.0 / std::pow(c.rope_theta, (2.0 * i) / c.head_dim);
      const RopeScaling& s = c.rope_scaling;
      if (s.type == RopeScaling::Type::linear) inv /= s.factor;
      if (s.type == RopeScaling::Type::llama3) {
        const double wavelen = 2 * std::numbers::pi / inv;
        const double lo = s.original_max_position_embeddings / s.low_freq_factor;
        const double hi = s.original_max_position_embeddings / s.high_freq_factor;
        if (wavelen < hi) {
          // high frequency: unchanged
        } else if (wavelen > lo) {
          inv = inv / s.factor;
        } else {
          const double smooth = (s.original_max_position_embeddings / wavelen - s.low_freq_factor) /
                                (s.high_freq_factor - s.low_freq_factor);
          inv = (1 - smooth) * (inv / s.factor) + smooth * inv;
        }
      }
      f.push_back(inv);
    }
    return f;
  }

 private:
  const std::vector<double>& w(const std::string& name) const { return w_.at(name); }

  std::vector<double> matvec(const std::vector<double>& W, const std::vector<double>& x) const {
    const std::size_t in = x.size(), out = W.size() / in;
    std::vector<double> y(out, 0.0);
    for (std::size_t o = 0; o < out; ++o)
      for (std::size_t i = 0; i < in; ++i) y[o] += W[o * in + i] * x[i];
    return y;
  }

  /// W x (+ bias) (+ scale · B (A x)) for one projection.
  std::vector<double> proj(int layer, const std::string& parent, const std::string& name,
                           const std::vector<double>& x, bool adapted = true) const {
    const std::string p = "model.layers." + std::to_string(layer) + "." + parent + "." + name;
    auto y = matvec(w(p + ".weight"), x);
    if (auto b = w_.find(p + ".bias"); b != w_.end())
      for (std::size_t i = 0; i < y.size(); ++i) y[i] += b->second[i];
    const std::string lp = "base_model.model." + p;
    if (auto a = lora_.find(lp + ".lora_A.weight"); adapted && a != lora_.end()) {
      const auto ax = matvec(a->second, x);
      const auto bax = matvec(lora_.at(lp + ".lora_B.weight"), ax);
      for (std::size_t i = 0; i < y.size(); ++i) y[i] += lora_scale_ * bax[i];
    }
    return y;
  }

  std::vector<double> rmsnorm(const std::vector<double>& x, const std::vector<double>& g) const {
    double ss = 0;
    for (double v : x) ss += v * v;
    const double inv = 1.0 / std::sqrt(ss / x.size() + m_.cfg.rms_norm_eps);
    std::vector<double> y(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) y[i] = x[i] * inv * g[i];
    return y;
  }

  /// RMSNorm of v[off, off + g.size()) in place.
  /// (Computed in place: a copy of the slice in a temporary vector trips GCC 12's
  /// -Wfree-nonheap-object, a false positive, when this is inlined into a large unit.)
  void head_rmsnorm(std::vector<double>& v, int off, const std::vector<double>& g) const {
    double ss = 0;
    for (std::size_t i = 0; i < g.size(); ++i) ss += v[off + i] * v[off + i];
    const double inv = 1.0 / std::sqrt(ss / g.size() + m_.cfg.rms_norm_eps);
    for (std::size_t i = 0; i < g.size(); ++i) v[off + i] = v[off + i] * inv * g[i];
  }

  void rope(std::vector<double>& v, int off, int pos) const {
    const auto inv = inverse_frequencies(m_.cfg);
    const int half = m_.cfg.head_dim / 2;
    for (int i = 0; i < half; ++i) {
      const double a = v[off + i], b = v[off + i + half], ang = pos * inv[i];
      v[off + i] = a * std::cos(ang) - b * std::sin(ang);
      v[off + i + half] = b * std::cos(ang) + a * std::sin(ang);
    }
  }

  const TinyModel& m_;
  std::map<std::string, std::vector<double>> w_;
  std::map<std::string, std::vector<double>> lora_;
  double lora_scale_ = 0;
  std::vector<int> invocation_;
};

}  // namespace baton::test
