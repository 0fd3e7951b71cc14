// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// Constrained greedy decoding on the naive reference model: at each step the reference's
// logits (f64, recomputed from scratch), a caller's rule of which ids are allowed given the
// output so far, then argmax over the allowed ids (lowest id on a tie). Also reports each
// step's top-2 margin among allowed ids, so a test can state how far from a tie it ran.
#pragma once

#include <functional>
#include <limits>
#include <vector>

#include "reference/naive_model.hpp"

namespace baton::test {

struct ConstrainedRun {
  std::vector<int> ids;
  std::vector<double> margins;  ///< per step: best - second best allowed logit (inf if one)
};

/// `allowed(out, id)`: whether `id` may follow the output `out`; `stop_after(out)`: whether the
/// generation ends after `out` (its last token kept).
inline ConstrainedRun constrained_greedy(
    const NaiveModel& ref, std::vector<int> seq, int max_new,
    const std::function<bool(const std::vector<int>&, int)>& allowed,
    const std::function<bool(const std::vector<int>&)>& stop_after = {}) {
  ConstrainedRun r;
  for (int s = 0; s < max_new; ++s) {
    const auto lg = ref.logits(seq).back();
    int best = -1, second = -1;
    for (int i = 0; i < static_cast<int>(lg.size()); ++i) {
      if (!allowed(r.ids, i)) continue;
      if (best < 0 || lg[i] > lg[best]) {
        second = best;
        best = i;
      } else if (second < 0 || lg[i] > lg[second]) {
        second = i;
      }
    }
    if (best < 0) break;
    r.margins.push_back(second < 0 ? std::numeric_limits<double>::infinity()
                                   : lg[best] - lg[second]);
    r.ids.push_back(best);
    seq.push_back(best);
    if (stop_after && stop_after(r.ids)) break;
  }
  return r;
}

}  // namespace baton::test
