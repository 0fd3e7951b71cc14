// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief baton.Error and one subclass per baton::error subclass (core/error.hpp), and the
///        translator that raises the matching one with the C++ message.
#include <Python.h>

#include <array>
#include <string>

#include "baton/core/error.hpp"
#include "bindings.hpp"

namespace baton::python {

namespace {

// Every subclass of baton::error (core/error.hpp), its Python name and what it means. A new C++
// subclass goes here too; test_errors.py checks the two lists agree.
#define BATON_PYTHON_ERRORS(X)                                                                   \
  X(format_error, "FormatError",                                                                 \
    "A file (safetensors, config.json, adapter, tokenizer.json, relay JSON) is malformed.")      \
  X(config_error, "ConfigError",                                                                 \
    "A configuration asks for something unsupported or inconsistent.")                           \
  X(shape_error, "ShapeError", "Tensor shapes or dtypes disagree with what is required.")        \
  X(position_error, "PositionError", "A KV write would not land at the slot's write position.")  \
  X(capacity_error, "CapacityError", "A prefix, prompt or append does not fit the KV capacity.") \
  X(usage_error, "UsageError", "A token id, argument or call sequence is invalid.")              \
  X(wiring_error, "WiringError", "A relay's wiring is invalid.")                                 \
  X(tokenizer_error, "TokenizerError",                                                           \
    "Tokenizer input or tokenizer.json content baton cannot handle.")                            \
  X(grammar_error, "GrammarError",                                                               \
    "A grammar outside the supported subset, or one that cannot be compiled.")                   \
  X(numeric_error, "NumericError", "A computation produced a non-finite value.")                 \
  X(device_error, "DeviceError", "A CUDA or cuBLAS call failed.")                                \
  X(io_error, "IoError", "An operating-system call failed (open, mmap, read).")

#define BATON_PYTHON_COUNT_(type, name, doc) +1
constexpr int kSubclasses = 0 BATON_PYTHON_ERRORS(BATON_PYTHON_COUNT_);

/// The Python exception types, owned by the module (a capsule attribute holds them), handed to
/// the translator as its payload.
struct ErrorTypes {
  PyObject* base = nullptr;
  std::array<PyObject*, kSubclasses> subclasses{};

  /// The type raised for `e`: its own subclass's, else the base.
  PyObject* for_error(const error& e) const {
    int k = 0;
#define BATON_PYTHON_MATCH_(type, name, doc)        \
  if (dynamic_cast<const type*>(&e) != nullptr) {   \
    return subclasses[static_cast<std::size_t>(k)]; \
  }                                                 \
  ++k;
    BATON_PYTHON_ERRORS(BATON_PYTHON_MATCH_)
#undef BATON_PYTHON_MATCH_
    return base;
  }
};

/// A new exception type `baton.<name>` under `base`, added to the module.
PyObject* add_type(nb::module_& m, const char* name, const char* doc, PyObject* base) {
  const std::string qualified = std::string("baton.") + name;
  PyObject* type = PyErr_NewExceptionWithDoc(qualified.c_str(), doc, base, nullptr);
  if (type == nullptr) throw nb::python_error();
  m.attr(name) = nb::borrow(type);
  return type;
}

void translate(const std::exception_ptr& p, void* payload) {
  try {
    std::rethrow_exception(p);
  } catch (const error& e) {
    PyErr_SetString(static_cast<const ErrorTypes*>(payload)->for_error(e), e.what());
  }
  // Anything else propagates to nanobind's own translators.
}

}  // namespace

void bind_errors(nb::module_& m) {
  auto* types = new ErrorTypes;
  // RuntimeError as the base: baton::error is a std::runtime_error, and code that caught
  // RuntimeError around baton before keeps working.
  types->base = add_type(m, "Error", "Base of every error baton raises (baton::error in C++).",
                         PyExc_RuntimeError);
  int k = 0;
#define BATON_PYTHON_ADD_(type, name, doc) \
  types->subclasses[static_cast<std::size_t>(k++)] = add_type(m, name, doc, types->base);
  BATON_PYTHON_ERRORS(BATON_PYTHON_ADD_)
#undef BATON_PYTHON_ADD_
  // The module owns the table (the types themselves are module attributes too).
  m.attr("_error_types") =
      nb::capsule(types, [](void* p) noexcept { delete static_cast<ErrorTypes*>(p); });
  nb::register_exception_translator(translate, types);
}

}  // namespace baton::python
