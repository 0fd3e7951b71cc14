// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief The grammar constraint, a device interceptor: the sampling step masks the logits
/// to the tokens the grammar allows in the request's state (budget-aware) and advances the
/// state by the chosen token, from tables in backend memory; no host round trip per step.
/// With StepSkip (intercept/step_skip.hpp) in the same chain, steps where the grammar allows
/// exactly one token skip the model forward.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <utility>

#include "baton/backend/backend.hpp"
#include "baton/core/error.hpp"
#include "baton/grammar/grammar_tables.hpp"
#include "baton/grammar/token_grammar.hpp"
#include "baton/intercept/interceptor.hpp"

namespace baton {

/// Output constrained to a grammar (regex or JSON Schema subset; grammar/grammar.hpp).
/// The grammar's vocabulary must name the stage's stop ids as its end-of-sequence ids: they
/// are allowed exactly where the output so far is a complete match. A generation whose
/// max_new is below the grammar's shortest completion is refused when its branch starts.
/// @tparam Backend  where the tables live (baton::host; a device backend's sampling kernel
///                  reads the same GrammarTables)
template <class Backend>
class GrammarConstraint {
 public:
  static constexpr std::string_view plugin_id = "baton.grammar";
  static constexpr bool distribution_altering = true;
  static constexpr bool graph_safe = true;
  using params_type = grammar::GrammarTables;
  using state_type = grammar::GrammarCursor;

  explicit GrammarConstraint(std::shared_ptr<const grammar::TokenGrammar> g)
      : tables_(std::make_shared<const Uploaded>(std::move(g))) {}

  params_type params() const { return tables_->view; }
  state_type initial_state(const BranchInfo& info) const {
    const auto& g = *tables_->grammar;
    BATON_CHECK(g.distance(0) <= info.max_new, grammar_error, "stage '", info.stage,
                "': its grammar needs at least ", g.distance(0),
                " tokens to complete, but max_new is ", info.max_new);
    return {0, info.max_new};
  }

  BATON_HD static float transform_logit(const params_type& p, const state_type& s, std::int32_t id,
                                        float logit) {
    return grammar::grammar_allows(p, s, id) ? logit : -kInfinity;
  }
  BATON_HD static StepAction advance(const params_type& p, state_type& s, std::int32_t token) {
    return grammar::grammar_advance(p, s, token) ? StepAction::stop : StepAction::go_on;
  }
  BATON_HD static std::int32_t forced_token(const params_type& p, const state_type& s) {
    return grammar::grammar_forced(p, s);
  }
  /// The output may end (another member's stop is honoured) only where it is a complete
  /// match, or where the grammar was already left (nothing is left to protect).
  BATON_HD static bool may_end(const params_type& p, const state_type& s) {
    return s.state < 0 || p.accepting[s.state] != 0;
  }
  /// A grammar that matches only the empty string: the generation ends before its first step.
  bool complete_at_start() const { return tables_->grammar->complete(0); }

  const grammar::TokenGrammar& grammar() const { return *tables_->grammar; }

 private:
  // The tables copied into backend memory once; copies of the interceptor share them.
  struct Uploaded {
    explicit Uploaded(std::shared_ptr<const grammar::TokenGrammar> g) : grammar(std::move(g)) {
      const auto& t = *grammar;
      const auto& d = t.dfa();
      next = Backend::upload(std::span<const std::int32_t>(d.next));
      accepting = Backend::upload(std::span<const std::uint8_t>(d.accepting));
      complete = Backend::upload(t.complete_flags());
      dist = Backend::upload(t.distances());
      slack = Backend::upload(t.slacks());
      forced = Backend::upload(t.forced_tokens());
      mask_row = Backend::upload(t.mask_rows());
      masks = Backend::upload(t.all_masks());
      offsets = Backend::upload(t.token_offsets());
      bytes = Backend::upload(nonempty(t.token_bytes()));
      eos = Backend::upload(t.eos_flags());
      view = {raw_pointer(next.data()),
              raw_pointer(accepting.data()),
              raw_pointer(complete.data()),
              raw_pointer(dist.data()),
              raw_pointer(slack.data()),
              raw_pointer(forced.data()),
              raw_pointer(mask_row.data()),
              raw_pointer(masks.data()),
              raw_pointer(offsets.data()),
              raw_pointer(bytes.data()),
              raw_pointer(eos.data()),
              static_cast<std::uint32_t>(t.mask_words()),
              t.vocab_size()};
    }
    // A vocabulary of empty tokens only still needs a valid pointer.
    static std::span<const std::uint8_t> nonempty(std::span<const std::uint8_t> b) {
      static constexpr std::uint8_t kNone[1] = {0};
      return b.empty() ? std::span<const std::uint8_t>(kNone) : b;
    }
    std::shared_ptr<const grammar::TokenGrammar> grammar;
    typename Backend::template buffer<std::int32_t> next, dist, slack, forced, mask_row;
    typename Backend::template buffer<std::uint8_t> accepting, complete, bytes, eos;
    typename Backend::template buffer<std::uint32_t> masks, offsets;
    params_type view;
  };
  std::shared_ptr<const Uploaded> tables_;
};

}  // namespace baton
