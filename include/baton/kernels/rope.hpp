// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief Rotary position embedding in the rotate-half (NEOX) form, with llama3/linear scaling.
#pragma once

#include <cmath>
#include <numbers>
#include <vector>

#include "baton/core/macros.hpp"
#include "baton/core/model_config.hpp"

namespace baton::kernels {

/// Inverse frequencies inv_freq[i] = theta^(-2i/d) for i < d/2, rescaled as the config's
/// rope_scaling says: `linear` divides positions by the factor (folded into inv_freq here),
/// `llama3` divides low frequencies by the factor, keeps high ones, and interpolates the band
/// between (wavelength thresholds original_max / low_freq_factor and / high_freq_factor).
inline std::vector<double> rope_inverse_frequencies(int head_dim, double theta,
                                                    const RopeScaling& s) {
  std::vector<double> inv(head_dim / 2);
  for (int i = 0; i < head_dim / 2; ++i) {
    inv[i] = std::pow(theta, -2.0 * i / head_dim);
  }
  if (s.type == RopeScaling::Type::linear) {
    for (double& f : inv) f /= s.factor;
  } else if (s.type == RopeScaling::Type::llama3) {
    const double old_len = s.original_max_position_embeddings;
    const double low_wavelen = old_len / s.low_freq_factor;
    const double high_wavelen = old_len / s.high_freq_factor;
    for (double& f : inv) {
      const double wavelen = 2.0 * std::numbers::pi / f;
      if (wavelen > low_wavelen) {
        f /= s.factor;  // long wavelengths: interpolate fully
      } else if (wavelen >= high_wavelen) {
        const double smooth =
            (old_len / wavelen - s.low_freq_factor) / (s.high_freq_factor - s.low_freq_factor);
        f = (1.0 - smooth) * f / s.factor + smooth * f;
      }  // short wavelengths stay as they are
    }
  }
  return inv;
}

/// The rotation of one frequency at `pos`: its cosine and sine, the angle formed in double so
/// long positions keep their precision.
BATON_HD inline void rope_angle(int pos, float inv_freq, float& c, float& s) {
  const double angle = static_cast<double>(pos) * static_cast<double>(inv_freq);
  c = static_cast<float>(cos(angle));
  s = static_cast<float>(sin(angle));
}

/// Rotates one pair (a, b) by the angle whose cosine and sine are (c, s).
BATON_HD inline void rope_apply_pair(float& a, float& b, float c, float s) {
  const float a0 = a;
  const float b0 = b;
  a = a0 * c - b0 * s;
  b = b0 * c + a0 * s;
}

/// Rotates one pair (a, b) = (x[i], x[i + d/2]) by the angle pos * inv_freq: the unit one
/// device thread owns.
BATON_HD inline void rope_rotate_pair(float& a, float& b, int pos, float inv_freq) {
  float c, s;
  rope_angle(pos, inv_freq, c, s);
  rope_apply_pair(a, b, c, s);
}

/// Rotates `heads` consecutive head vectors of one token (all at `pos`) in place, dimension i
/// pairing with i + d/2 (rotate-half form): each pair exactly as rope_rotate_pair turns it (the
/// device's unit), with each frequency's cosine and sine computed once for all heads (a
/// token's q and k heads share them: one double sin/cos per frequency, not one per head).
inline void rope_rotate_heads(float* x, int heads, int head_dim, int pos, const float* inv_freq) {
  constexpr int kChunk = 64;
  const int half = head_dim / 2;
  float c[kChunk], s[kChunk];
  for (int i0 = 0; i0 < half; i0 += kChunk) {
    const int m = half - i0 < kChunk ? half - i0 : kChunk;
    for (int i = 0; i < m; ++i) rope_angle(pos, inv_freq[i0 + i], c[i], s[i]);
    for (int h = 0; h < heads; ++h) {
      float* v = x + static_cast<long>(h) * head_dim + i0;
      for (int i = 0; i < m; ++i) rope_apply_pair(v[i], v[i + half], c[i], s[i]);
    }
  }
}

}  // namespace baton::kernels
