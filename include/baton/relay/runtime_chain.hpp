// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief The interceptor chain of a stage built from a relay file: each built-in present or
///        absent as the stage's "interceptors" say, checked against the stage's card
///        ("exact", "graph_captured") with errors naming file, stage, field and interceptor.
///
/// The members sit in one fixed order whatever order the file lists them in: the stage's
/// grammar ("grammar", docs/grammar.md) and the token set (masks first), stop sequences, the
/// request's own stop strings (absent in the chain, present in a request's branch that brings
/// them: intercept/request_stops.hpp), the trace recorder, step-skip (which jumps over the
/// grammar's forced tokens).
#pragma once

#include <string>
#include <vector>

#include "baton/core/error.hpp"
#include "baton/intercept/builtins.hpp"
#include "baton/intercept/grammar_constraint.hpp"
#include "baton/intercept/maybe.hpp"
#include "baton/intercept/request_stops.hpp"
#include "baton/relay/config.hpp"

namespace baton {

template <Backend B>
using RuntimeChain = Chain<MaybeInterceptor<GrammarConstraint<B>>, MaybeInterceptor<TokenSet<B>>,
                           MaybeInterceptor<StopSequences<B>>, MaybeInterceptor<RequestStops<B>>,
                           MaybeInterceptor<TraceRecorder>, MaybeInterceptor<StepSkip>>;

/// The capabilities of the built-in an InterceptorSpec names.
template <Backend B>
InterceptorCaps interceptor_caps(InterceptorSpec::Kind k) {
  switch (k) {
    case InterceptorSpec::Kind::stop_sequences:
      return caps_of<StopSequences<B>>();
    case InterceptorSpec::Kind::allow_tokens:
    case InterceptorSpec::Kind::deny_tokens:
      return caps_of<TokenSet<B>>();
    case InterceptorSpec::Kind::trace:
      return caps_of<TraceRecorder>();
    case InterceptorSpec::Kind::step_skip:
      return caps_of<StepSkip>();
  }
  BATON_FAIL(config_error, "unknown interceptor kind");
}

/// Checks `stage`'s interceptors against its card and builds its chain. `vocab` is the model's
/// vocabulary; `spec` supplies the token byte table stop sequences need. config_error names
/// the file, stage and interceptor field for every problem.
template <Backend B>
RuntimeChain<B> build_runtime_chain(const StageSpec& stage, const RelaySpec& spec, int vocab) {
  const StageCard card{stage.exact, stage.graph_captured};
  MaybeInterceptor<GrammarConstraint<B>> grammar;
  if (stage.compiled_grammar) {
    check_card(card, stage.name, caps_of<GrammarConstraint<B>>(),
               spec.source.string() + ": stage '" + stage.name + "'.grammar");
    grammar = MaybeInterceptor<GrammarConstraint<B>>(GrammarConstraint<B>(stage.compiled_grammar));
  }
  MaybeInterceptor<TokenSet<B>> token_set;
  MaybeInterceptor<StopSequences<B>> stops;
  MaybeInterceptor<TraceRecorder> trace;
  MaybeInterceptor<StepSkip> skip;
  for (const InterceptorSpec& i : stage.interceptors) {
    check_card(card, stage.name, interceptor_caps<B>(i.kind), i.where);
    // The built-ins' own usage_errors (bad ids, empty sets) become config_errors here.
    try {
      switch (i.kind) {
        case InterceptorSpec::Kind::allow_tokens:
        case InterceptorSpec::Kind::deny_tokens: {
          BATON_CHECK(i.token_texts.empty(), config_error, i.where,
                      " holds text; resolve it with a tokenizer (resolve_text) first");
          const auto mode = i.kind == InterceptorSpec::Kind::allow_tokens ? TokenSetMode::allow
                                                                          : TokenSetMode::deny;
          token_set = MaybeInterceptor<TokenSet<B>>(TokenSet<B>(mode, i.token_ids, vocab));
          break;
        }
        case InterceptorSpec::Kind::stop_sequences: {
          BATON_CHECK(spec.token_bytes != nullptr, config_error, i.where,
                      ": stop sequences match decoded bytes, so they need the relay's tokenizer "
                      "(field 'tokenizer', or a tokenizer.json beside the model)");
          std::vector<std::string> texts;
          for (std::size_t k = 0; k < i.stops.size(); ++k) {
            if (i.stops[k].text) {
              texts.push_back(*i.stops[k].text);
              continue;
            }
            std::string t;
            for (const std::int32_t id : i.stops[k].ids) {
              BATON_CHECK(id >= 0 && id < vocab, config_error, i.where, "[", k, "] holds id ", id,
                          ", outside the model's vocabulary [0, ", vocab, ")");
              if (id < spec.token_bytes->vocab()) {
                const auto b = spec.token_bytes->token(id);
                t.append(b.begin(), b.end());
              }
            }
            texts.push_back(std::move(t));
          }
          stops = MaybeInterceptor<StopSequences<B>>(StopSequences<B>(*spec.token_bytes, texts));
          break;
        }
        case InterceptorSpec::Kind::trace:
          trace = MaybeInterceptor<TraceRecorder>(TraceRecorder{});
          break;
        case InterceptorSpec::Kind::step_skip:
          skip = MaybeInterceptor<StepSkip>(StepSkip{});
          break;
      }
    } catch (const usage_error& e) {
      BATON_FAIL(config_error, i.where, ": ", e.what());
    }
  }
  return RuntimeChain<B>(std::move(grammar), std::move(token_set), std::move(stops),
                         MaybeInterceptor<RequestStops<B>>{}, std::move(trace), std::move(skip));
}

}  // namespace baton
