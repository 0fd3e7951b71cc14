// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief The extension module baton._baton: baton's relay engine, `baton generate`'s run and the
///        batch scheduler, bound for Python (docs/python.md). The package baton re-exports it
///        and adds the prototype's names (python/baton/prototype.py).
#include "bindings.hpp"

NB_MODULE(_baton, m) {
  using namespace baton::python;
  m.doc() = "baton's C++ engine: models, relays, the batch scheduler (docs/python.md)";
  m.attr("__version__") = BATON_PYTHON_VERSION;
  bind_errors(m);
  bind_tokenizer(m);
  bind_results(m);
  bind_model(m);
  bind_relay(m);
  bind_relay_stream(m);
}
