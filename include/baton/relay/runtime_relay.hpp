// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief A relay built at run time from a RelaySpec on the host backend: `build_relay(spec)`
///        and `build_relay_as<S, D, F>(spec)` (relay/runtime_relay_on.hpp has the generic part).
#pragma once

#include <memory>

#include "baton/model/host_forward.hpp"
#include "baton/relay/runtime_relay_on.hpp"

namespace baton {

/// The host relay's execution context: one HostContext (thread pool, kernels) for all its
/// stages, sized by the spec's "host" field (every core by default). Without it the stages'
/// workspaces would run on OpenMP, whose spinning barriers stall when a core is busy.
template <>
struct RelayExecution<host> {
  explicit RelayExecution(const RelaySpec& spec) : context(options_for(spec)) {}
  HostContext context;
  void bind(Workspace<host>& ws) { ws.extras.bind(context); }

 private:
  static HostContextOptions options_for(const RelaySpec& spec) {
    // Checked here too so the error names the file; the context's own check would not.
    BATON_CHECK(!spec.host.isa || host_simd::cpu_supports(*spec.host.isa), config_error,
                spec.source.string(), ": field 'host': 'isa' = \"",
                host_simd::isa_name(spec.host.isa.value_or(host_simd::Isa::portable)),
                "\", but this CPU does not run that kernel family");
    BATON_CHECK(!spec.host.bf16_products.value_or(false) ||
                    spec.host.isa.value_or(host_simd::Isa::avx512) == host_simd::Isa::avx512,
                config_error, spec.source.string(),
                ": field 'host': 'bf16_products' needs 'isa' \"avx512\"");
    BATON_CHECK(!spec.host.bf16_products.value_or(false) || host_simd::cpu_supports_bf16_products(),
                config_error, spec.source.string(),
                ": field 'host': 'bf16_products' needs a CPU with AVX-512 and AVX512-BF16 "
                "(vdpbf16ps), and this one lacks them");
    return HostContextOptions{.threads = spec.host.threads,
                              .isa = spec.host.isa,
                              .bf16_products = spec.host.bf16_products};
  }
};

/// build_relay_as_on on the host backend: one (storage type, head_dim, family) instantiation,
/// so a program made for one model compiles in a fraction of build_relay's time
/// (Batching::without leaves the scheduler out as well).
template <WeightStorage S, int D, ModelFamily F = family::Qwen2,
          Batching W = Batching::with_scheduler>
std::unique_ptr<RuntimeRelay> build_relay_as(const RelaySpec& spec) {
  return build_relay_as_on<host, S, D, F, W>(spec);
}

/// Builds (but does not pre-warm) the relay a spec describes, on the host backend.
/// A template (B is never given: `build_relay(spec)`) so that only the units that call it
/// instantiate its dispatch over every family, storage type and head_dim; as an inline function
/// every unit including this header would compile that whole dispatch, called or not (tens of
/// seconds each).
template <Backend B = host>
std::unique_ptr<RuntimeRelay> build_relay(const RelaySpec& spec) {
  return build_relay_on<B>(spec);
}

}  // namespace baton
