// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief The host backend's command-line options, shared by `baton generate` and `baton
///        relay`: `--threads N` (the HostContext's pool; 0: every core), `--bf16-products` and
///        `--f32-products` (the bf16 products on AVX512-BF16 / AMX required, or off; unset: on
///        wherever the CPU has them; HostContextOptions says what they cost), `--isa F` (the
///        kernel family: an older CPU's kernels on this one).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "args.hpp"
#include "baton/backend/host_simd.hpp"
#include "baton/relay/config.hpp"

namespace baton::cli {

struct HostChoice {
  std::optional<int> threads;         ///< --threads; unset: the relay file's, else every core
  std::optional<bool> bf16_products;  ///< --bf16-products (true), --f32-products (false)
  std::optional<host_simd::Isa> isa;  ///< --isa avx512|avx2|portable
  bool any() const { return threads.has_value() || bf16_products.has_value() || isa.has_value(); }
  /// Sets the options given on `spec`'s "host" (over the relay file's).
  void apply(HostRunSpec& host) const {
    if (threads) host.threads = *threads;
    if (bf16_products) host.bf16_products = bf16_products;
    if (isa) host.isa = isa;
  }
};

/// Consumes `arg` if it is one of the host options (`value` reads the option's value).
template <class Value>
bool parse_host_option(std::string_view arg, Value&& value, HostChoice& h) {
  if (arg == "--threads") {
    const int n = parse_int<int>(value(), "--threads");
    if (n < 0 || n > ThreadPool::max_threads())
      throw ArgError{"--threads " + std::to_string(n) + " is outside [0, " +
                     std::to_string(ThreadPool::max_threads()) +
                     "] (0: every core; at most 256, or this machine's hardware threads if more)"};
    h.threads = n;
    return true;
  }
  if (arg == "--isa") {
    const std::string name(value());
    h.isa = host_simd::parse_isa(name);
    if (!h.isa) throw ArgError{"--isa " + name + ": the kernel family is avx512, avx2 or portable"};
    if (!host_simd::cpu_supports(*h.isa))
      throw ArgError{"--isa " + name + ": this CPU does not run that kernel family"};
    return true;
  }
  if (arg == "--bf16-products" || arg == "--f32-products") {
    const bool bf16 = arg == "--bf16-products";
    if (h.bf16_products.has_value() && *h.bf16_products != bf16)
      throw ArgError{"--bf16-products and --f32-products contradict each other"};
    h.bf16_products = bf16;
    return true;
  }
  return false;
}

/// Refuses the host options where the run is not on the host.
inline void check_host_options(const HostChoice& h, bool on_host) {
  if (h.any() && !on_host)
    throw ArgError{"--threads, --bf16-products, --f32-products and --isa are host-backend options"};
}

inline std::string host_usage() {
  return "  --threads N       host: the thread pool's size (default: every core)\n"
         "  --bf16-products   host: bf16 weights times the activations split into two bf16 terms\n"
         "                    (AVX512-BF16, AMX; the default where the CPU has them)\n"
         "  --f32-products    host: bf16 weights times f32 activations\n"
         "  --isa F           host: the kernel family, avx512, avx2 or portable (default: the\n"
         "                    best this CPU runs; an older CPU's kernels, to compare engines)\n";
}

}  // namespace baton::cli
