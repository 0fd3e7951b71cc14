// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief TokenSet: the token-set constraint — only ids in an allow set (or none in a deny set)
///        may be chosen. Device kind, distribution-altering, graph-safe.
///
/// The set is a bitset over the model's vocabulary in backend memory (one bit per id, 32 ids
/// per word); the per-logit mask reads one bit. When the set leaves exactly one id, that id is
/// its forced token, which a step-skip interceptor (intercept/step_skip.hpp) supplies without
/// running the model.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "baton/backend/backend.hpp"
#include "baton/core/error.hpp"
#include "baton/intercept/interceptor.hpp"

namespace baton {

/// Whether a token set lists the ids that may be chosen or those that may not.
enum class TokenSetMode { allow, deny };

/// @tparam B  the backend whose memory holds the bitset
template <Backend B>
class TokenSet {
 public:
  static constexpr std::string_view plugin_id = "baton.token_set";
  static constexpr bool distribution_altering = true;
  static constexpr bool graph_safe = true;

  struct params_type {
    const std::uint32_t* bits = nullptr;  ///< [ceil(vocab / 32)] in backend memory
    std::int32_t vocab = 0;
    std::int32_t allow = 1;    ///< 1: the bits allow, 0: the bits deny
    std::int32_t single = -1;  ///< the only id the set leaves, or -1
  };
  struct state_type {};

  /// Only `ids` may be chosen. `vocab` is the model's vocabulary size (the logits row); ids
  /// outside [0, vocab) and an empty set are usage_error.
  static TokenSet allow(std::span<const std::int32_t> ids, int vocab) {
    return TokenSet(TokenSetMode::allow, ids, vocab);
  }
  /// `ids` may not be chosen; denying every id is a usage_error.
  static TokenSet deny(std::span<const std::int32_t> ids, int vocab) {
    return TokenSet(TokenSetMode::deny, ids, vocab);
  }

  TokenSet(TokenSetMode mode, std::span<const std::int32_t> ids, int vocab)
      : mode_(mode), vocab_(vocab) {
    BATON_CHECK(vocab > 0, usage_error, "token set: vocabulary size must be > 0 (got ", vocab, ")");
    std::vector<std::uint32_t> bits(static_cast<std::size_t>((vocab + 31) / 32), 0u);
    for (std::size_t k = 0; k < ids.size(); ++k) {
      BATON_CHECK(ids[k] >= 0 && ids[k] < vocab, usage_error, "token set: id ", ids[k],
                  " at index ", k, " is outside the vocabulary [0, ", vocab, ")");
      bits[static_cast<std::size_t>(ids[k]) / 32] |= 1u << (ids[k] % 32);
    }
    int members = 0;
    std::int32_t last = -1;
    for (int id = 0; id < vocab; ++id) {
      if (in_bits(bits.data(), id)) {
        ++members;
        last = id;
      }
    }
    const int allowed = mode == TokenSetMode::allow ? members : vocab - members;
    BATON_CHECK(allowed > 0, usage_error, "token set: the ",
                mode == TokenSetMode::allow ? "allow set is empty" : "deny set holds every id",
                ", so no token could ever be chosen");
    if (allowed == 1) {
      if (mode == TokenSetMode::allow) {
        single_ = last;
      } else {
        for (int id = 0; id < vocab && single_ < 0; ++id)
          if (!in_bits(bits.data(), id)) single_ = id;
      }
    }
    bits_ = B::upload(std::span<const std::uint32_t>(bits));
  }

  TokenSetMode mode() const { return mode_; }
  int vocab() const { return vocab_; }

  params_type params() const {
    return {raw_pointer(bits_.data()), vocab_, mode_ == TokenSetMode::allow ? 1 : 0, single_};
  }
  state_type initial_state(const BranchInfo&) const { return {}; }

  /// Whether `id` may be chosen (ids past the set's vocabulary: only under a deny set).
  BATON_HD static bool allows(const params_type& p, std::int32_t id) {
    if (id < 0 || id >= p.vocab) return p.allow == 0;
    return in_bits(p.bits, id) == (p.allow != 0);
  }
  BATON_HD static float transform_logit(const params_type& p, const state_type&, std::int32_t id,
                                        float logit) {
    return allows(p, id) ? logit : -kInfinity;
  }
  BATON_HD static StepAction advance(const params_type&, state_type&, std::int32_t) {
    return StepAction::go_on;
  }
  BATON_HD static std::int32_t forced_token(const params_type& p, const state_type&) {
    return p.single;
  }

 private:
  BATON_HD static bool in_bits(const std::uint32_t* bits, std::int32_t id) {
    return ((bits[id / 32] >> (id % 32)) & 1u) != 0;
  }

  TokenSetMode mode_;
  int vocab_;
  std::int32_t single_ = -1;
  typename B::template buffer<std::uint32_t> bits_;
};

}  // namespace baton
