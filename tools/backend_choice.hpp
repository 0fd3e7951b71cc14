// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief `--backend host|cuda`: parsing the option, the build's default and the checks that
///        turn a backend this program cannot run into a clear message.
///
/// The default is a build-time switch, BATON_DEFAULT_BACKEND (CMake cache, docs/cli.md):
/// `host` (today's default: no GPU check has passed yet) or `auto` (cuda when this program was
/// built with the CUDA backend and a device is visible, else host).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "args.hpp"
#include "baton/core/error.hpp"
#include "cuda_entry.hpp"

namespace baton::cli {

enum class BackendChoice { host, cuda };

inline std::string_view backend_name(BackendChoice b) {
  return b == BackendChoice::host ? "host" : "cuda";
}

/// True when this program was linked with the CUDA translation unit (tools/cuda/).
inline constexpr bool kCudaBuilt = BATON_CLI_CUDA != 0;
/// BATON_DEFAULT_BACKEND=auto at configure time (tools/CMakeLists.txt).
inline constexpr bool kDefaultAuto = BATON_DEFAULT_BACKEND_AUTO != 0;

/// The usage line every subcommand prints for the option.
inline std::string backend_usage() {
  return std::string("  --backend B       host or cuda (default: ") +
         (kDefaultAuto ? "cuda where built in and a GPU is visible, else host" : "host") +
         "; docs/cli.md)\n";
}

/// Whether a CUDA device can be used: never in a build without the CUDA backend.
inline bool cuda_device_visible() {
#if BATON_CLI_CUDA
  return cuda_device_present();
#else
  return false;
#endif
}

/// `--backend`'s value. A cuda request in a build without CUDA is a command-line error
/// (status 2): the program cannot do it, whatever the inputs.
inline BackendChoice parse_backend(std::string_view value) {
  if (value == "host") return BackendChoice::host;
  if (value == "cuda") {
    if (!kCudaBuilt)
      throw ArgError{
          "--backend cuda: this baton was built without the CUDA backend (configure with "
          "-DBATON_ENABLE_CUDA=ON, e.g. `cmake --preset cuda`)"};
    return BackendChoice::cuda;
  }
  throw ArgError{"--backend must be host or cuda, got '" + detail::excerpt(value) + "'"};
}

/// Why no CUDA device can be used, in the runtime's words: its status, the driver's and the
/// runtime's versions (a driver too old for the runtime is not a missing GPU).
inline std::string cuda_device_absence() {
#if BATON_CLI_CUDA
  return cuda_device_status();
#else
  return "this baton was built without the CUDA backend";
#endif
}

/// The backend a run uses: the one asked for, else the build's default. Asking for cuda
/// where no device is visible is a device_error (status 1) before anything is loaded; the
/// message carries the runtime's status and versions.
inline BackendChoice resolve_backend(std::optional<BackendChoice> asked) {
  const bool device = cuda_device_visible();
  if (!asked) return kDefaultAuto && device ? BackendChoice::cuda : BackendChoice::host;
  BATON_CHECK(
      *asked != BackendChoice::cuda || device, device_error,
      "--backend cuda: no CUDA device is visible (the CUDA runtime says: ", cuda_device_absence(),
      "); run on a machine with an NVIDIA GPU and a driver for the CUDA runtime, or use "
      "--backend host");
  return *asked;
}

/// The backend `baton relay` runs a relay file on. The rule, in order:
///   1. `--backend` when given: it overrides the file's "backend" field;
///   2. else the file's "backend" ("host" or "cuda", checked by load_relay_spec): "cuda" in a
///      build without CUDA is a config_error naming the file and the field (status 1; pass
///      --backend host to run it on the host), "cuda" without a visible device the same
///      device_error as --backend cuda;
///   3. else the build's default (resolve_backend).
/// The caller then sets the spec's field to the result, so the builder agrees with it.
inline BackendChoice resolve_relay_backend(std::optional<BackendChoice> asked,
                                           const std::optional<std::string>& file_backend,
                                           const std::string& file) {
  if (asked || !file_backend) return resolve_backend(asked);
  if (*file_backend == "host") return BackendChoice::host;
  BATON_CHECK(kCudaBuilt, config_error, file, ": field 'backend' = \"", *file_backend,
              "\": this baton was built without the CUDA backend (configure with "
              "-DBATON_ENABLE_CUDA=ON, e.g. `cmake --preset cuda`), or pass --backend host to "
              "run the relay on the host");
  return resolve_backend(BackendChoice::cuda);
}

}  // namespace baton::cli
