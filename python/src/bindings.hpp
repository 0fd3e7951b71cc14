// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief The parts of the extension module baton._baton, one function per file that binds it;
///        module.cpp calls them in order (errors first: every later part may raise them).
#pragma once

#include <nanobind/nanobind.h>

namespace baton::python {

namespace nb = nanobind;

void bind_errors(nb::module_& m);        ///< errors.cpp: baton.Error and its subclasses
void bind_tokenizer(nb::module_& m);     ///< tokenizer.cpp: baton.Tokenizer
void bind_results(nb::module_& m);       ///< convert.cpp: TokenLogprob, StageRun, RelayResult
void bind_model(nb::module_& m);         ///< model.cpp: baton.Model, baton.Generation
void bind_relay(nb::module_& m);         ///< relay.cpp: baton.Relay
void bind_relay_stream(nb::module_& m);  ///< relay_stream.cpp: Relay.stream's iterator

}  // namespace baton::python
