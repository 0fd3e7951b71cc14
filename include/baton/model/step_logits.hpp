// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief StepLogits: a decode step's row of logits where the forward left it, and its host
///        copy when the step needs the row on the host (the Decoder's one place for it).
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "baton/backend/backend.hpp"

namespace baton {

/// The row a decode step chooses from. A host backend's row is host memory that the step reads
/// and rewrites in place (the chain's masks, the sampler's logit_bias and penalties); a device
/// backend's row is copied to the host the first time the step needs it there (host
/// interceptors, the host sampler: one counted wait on the row's context), and the copy is
/// what the step rewrites.
template <Backend B, class View>
class StepLogits {
 public:
  /// The row of this step (a forward's; a batched forward's row of this generation).
  void set(View row) {
    row_ = row;
    copied_ = false;
  }
  /// A new step: a copy made for the last one is stale.
  void new_step() { copied_ = false; }
  View view() const { return row_; }
  std::size_t size() const { return row_.size(); }
  /// Whether the row was copied to the host this step (device backends; false on the host).
  bool copied() const { return copied_; }
  /// The row on the host, writable: the forward's own row on a host backend (handed out
  /// read-only only because forward() hands it out that way), the copy on a device backend
  /// (made now when it is not yet).
  std::span<float> on_host() {
    if constexpr (B::is_device) {
      if (!copied_) {
        copy_.resize(row_.size());
        row_.owner->context().copy_to_host(row_.data, std::span<float>(copy_));
        copied_ = true;
      }
      return copy_;
    } else {
      return {const_cast<float*>(row_.data()), row_.size()};
    }
  }

 private:
  View row_{};
  std::vector<float> copy_;  ///< device backends: the row on the host (sized once)
  bool copied_ = false;
};

}  // namespace baton
