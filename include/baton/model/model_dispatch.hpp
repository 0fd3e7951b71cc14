// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief The one place a model folder's run-time facts become template parameters: its family
///        (config.json "architectures"), storage type (the safetensors dtype, or the storage a
///        relay file or the CLI asks for: core/storage.hpp) and head_dim.
///        `build_relay`, `baton generate`, the CUDA program and the tests all dispatch here.
///
/// Each (family, storage, head_dim) triple instantiates a whole forward, so the lists are
/// X-macros a program may shorten before including any baton header (and the explicit-instance
/// headers, relay/runtime_relay_instances.hpp and tools/generate_instances.hpp, expand the same
/// lists, so what is dispatched to is exactly what is compiled):
///   BATON_RUNTIME_FAMILIES(X, A)   X(A, family)       the built-in families (this header)
///   BATON_RUNTIME_STORAGE_TYPES(X) X(storage)         f32, bf16, f16, q8_0, q4_0 (this header)
///   BATON_RUNTIME_HEAD_DIMS(X, A)  X(A, head_dim)     kv/head_dims.hpp
/// A program may also exclude triples without editing the lists: `dispatch_model<Builds>` asks
/// `Builds::template value<F, S, D>` and reports a triple it leaves out as a config_error
/// naming the program (the CUDA program leaves out f16 and Qwen3 to save nvcc time).
///
/// Adding a built-in family: its header in model/family/, included below, and one entry in
/// BATON_RUNTIME_FAMILIES. Its `architectures` names are what selects it (docs/model-family.md).
#pragma once

#include <filesystem>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "baton/core/dtype.hpp"
#include "baton/core/error.hpp"
#include "baton/core/model_config.hpp"
#include "baton/core/storage.hpp"
#include "baton/io/hf_config.hpp"
#include "baton/kv/head_dims.hpp"
#include "baton/model/base_model.hpp"
#include "baton/model/family/qwen2.hpp"
#include "baton/model/family/qwen3.hpp"

#ifndef BATON_RUNTIME_FAMILIES
#define BATON_RUNTIME_FAMILIES(X, A) X(A, ::baton::family::Qwen2) X(A, ::baton::family::Qwen3)
#endif
#ifndef BATON_RUNTIME_STORAGE_TYPES
#define BATON_RUNTIME_STORAGE_TYPES(X) X(f32) X(bf16) X(f16) X(q8_0) X(q4_0)
#endif

namespace baton {

/// Builds everything the lists name (the host programs).
struct BuildEveryModel {
  template <class F, WeightStorage S, int D>
  static constexpr bool value = true;
};

namespace detail {

template <class First, class...>
struct first_family {
  using type = First;
};
#define BATON_FAMILY_ITEM_(unused, F) F,
/// The list's first family (the trailing void closes the macro's trailing comma).
using FirstRuntimeFamily = first_family<BATON_RUNTIME_FAMILIES(BATON_FAMILY_ITEM_, ~) void>::type;
#undef BATON_FAMILY_ITEM_

/// What dispatch_model returns: fn's result at the lists' first family, f32 and first head_dim
/// (fn is asked for its type only; every triple must return the same).
template <class Fn>
using ModelDispatchResult =
    decltype(std::declval<Fn&>()
                 .template operator()<FirstRuntimeFamily, f32, kRuntimeHeadDims[0]>());

template <ModelFamily F>
bool family_claims(std::string_view architecture) {
  for (std::string_view a : F::architectures)
    if (a == architecture) return true;
  return false;
}

inline std::string family_architecture_list() {
  std::string out;
#define BATON_FAMILY_NAMES_(unused, F)                 \
  for (std::string_view a : F::architectures) {        \
    out += (out.empty() ? "" : ", ") + std::string(a); \
  }
  BATON_RUNTIME_FAMILIES(BATON_FAMILY_NAMES_, ~)
#undef BATON_FAMILY_NAMES_
  return out;
}

}  // namespace detail

/// Every architecture name the built-in families claim (config.json "architectures"), given to
/// io::load_model_config as accepted names: a family registered in BATON_RUNTIME_FAMILIES
/// needs no edit of the config parser (unless its config.json has rules of its own there).
inline std::vector<std::string_view> runtime_architectures() {
  std::vector<std::string_view> out;
#define BATON_FAMILY_ARCHS_(unused, F) \
  out.insert(out.end(), std::begin(F::architectures), std::end(F::architectures));
  BATON_RUNTIME_FAMILIES(BATON_FAMILY_ARCHS_, ~)
#undef BATON_FAMILY_ARCHS_
  return out;
}

/// `dir`/config.json, accepting every built-in family's architecture.
inline ModelConfig load_runtime_config(const std::filesystem::path& dir) {
  const auto names = runtime_architectures();
  return io::load_model_config(dir, names);
}

/// Calls `fn.template operator()<F>()` with the built-in family whose `architectures` names
/// `cfg.architecture_name`; a config_error names `dir`, the architecture and the supported ones.
template <class Fn>
decltype(auto) dispatch_family(const std::filesystem::path& dir, const ModelConfig& cfg, Fn&& fn) {
  using R = decltype(fn.template operator()<detail::FirstRuntimeFamily>());
#define BATON_FAMILY_CASE_(unused, F) \
  if (detail::family_claims<F>(cfg.architecture_name)) return R(fn.template operator()<F>());
  BATON_RUNTIME_FAMILIES(BATON_FAMILY_CASE_, ~)
#undef BATON_FAMILY_CASE_
  BATON_FAIL(config_error, dir.string(), ": architecture '", cfg.architecture_name,
             "' (config.json \"architectures\") is not a built-in family of this program; "
             "supported: ",
             detail::family_architecture_list());
}

/// Calls `fn.template operator()<F, S, D>()` for the model folder `dir` with config `cfg`:
/// family F from its architecture, storage S from `storage` when set (the weights converted or
/// quantized at load) and from its weights' dtype otherwise, D = its head_dim. A triple that
/// `Builds` leaves out is a config_error naming `program` (e.g. "the cuda program") and what
/// it builds instead.
template <class Builds = BuildEveryModel, class Fn>
detail::ModelDispatchResult<Fn> dispatch_model(const std::filesystem::path& dir,
                                               const ModelConfig& cfg, Fn&& fn,
                                               std::string_view program = "this program",
                                               std::optional<Storage> storage = std::nullopt) {
  using R = detail::ModelDispatchResult<Fn>;
  const Storage chosen = storage ? *storage : storage_of_dtype(stored_dtype(dir));
  return dispatch_family(dir, cfg, [&]<class F>() -> R {
    return dispatch_head_dim(cfg.head_dim, [&](auto d) -> R {
      constexpr int D = decltype(d)::value;
#define BATON_STORAGE_CASE_(S)                                                                     \
  if (chosen == storage_of<S>) {                                                                   \
    if constexpr (Builds::template value<F, S, D>) {                                               \
      return fn.template operator()<F, S, D>();                                                    \
    } else {                                                                                       \
      BATON_FAIL(config_error, dir.string(), ": ", F::name, " models with ", storage_name(chosen), \
                 " weights and head_dim ", D, " are not built into ", program);                    \
    }                                                                                              \
  }
      BATON_RUNTIME_STORAGE_TYPES(BATON_STORAGE_CASE_)
#undef BATON_STORAGE_CASE_
      BATON_FAIL(config_error, dir.string(), ": ", storage_name(chosen),
                 " weights are not built into ", program);
    });
  });
}

}  // namespace baton
