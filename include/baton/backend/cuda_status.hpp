// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief What the CUDA runtime says about this machine: the status of asking it for devices
/// (its name and text), how many it counts, and the driver's and the runtime's versions.
///
/// A program that cannot use a device prints `cuda_status().line()`, so that a driver too old
/// for the runtime (`cudaErrorInsufficientDriver`, driver 12020 under runtime 13000) or a
/// machine without any driver (the same status, driver 0) reads as what it is, not as "no GPU".
/// Plain C++ (only the C header of the CUDA runtime), like baton/backend/cuda.hpp, which
/// includes it.
#pragma once

#include <cuda_runtime_api.h>

#include <string>

namespace baton {

/// One look at the CUDA runtime (cuda_status()). Versions are CUDA's encoding,
/// 1000 * major + 10 * minor (13000 is CUDA 13.0).
struct CudaStatus {
  cudaError_t error = cudaSuccess;  ///< what cudaGetDeviceCount returned
  int devices = 0;                  ///< the devices it counted (0 when it failed)
  int driver_version = 0;           ///< cudaDriverGetVersion: 0 where no driver is installed
  int runtime_version = 0;          ///< cudaRuntimeGetVersion: the runtime this program loaded

  /// A device can be used: the runtime started and counted at least one.
  bool usable() const noexcept { return error == cudaSuccess && devices > 0; }
  /// The status's name and text, as the runtime spells them (`cudaErrorInsufficientDriver`).
  const char* name() const noexcept { return cudaGetErrorName(error); }
  const char* text() const noexcept { return cudaGetErrorString(error); }

  /// The status and both versions: `cudaErrorNoDevice (no CUDA-capable device is detected);
  /// driver 12080, runtime 13000`, or `1 device; driver 12080, runtime 13000`.
  std::string reason() const {
    std::string s;
    if (error != cudaSuccess) {
      s = std::string(name()) + " (" + text() + ")";
    } else {
      s = std::to_string(devices) + (devices == 1 ? " device" : " devices");
    }
    s += "; driver " + std::to_string(driver_version);
    if (driver_version == 0) s += " (no CUDA driver installed)";
    return s + ", runtime " + std::to_string(runtime_version);
  }
  /// The one line a program prints: `no usable CUDA device: <reason()>` or `CUDA: <reason()>`.
  std::string line() const { return (usable() ? "CUDA: " : "no usable CUDA device: ") + reason(); }
};

/// Asks the CUDA runtime for its devices and both versions. Never throws; clears the runtime's
/// last error after a failed call (a failed initialization stays: the runtime reports it again
/// on every later call, cudaGetLastError() included).
inline CudaStatus cuda_status() noexcept {
  CudaStatus s;
  s.error = cudaGetDeviceCount(&s.devices);
  bool failed = s.error != cudaSuccess;
  if (failed) s.devices = 0;
  if (cudaDriverGetVersion(&s.driver_version) != cudaSuccess) {
    s.driver_version = 0;
    failed = true;
  }
  if (cudaRuntimeGetVersion(&s.runtime_version) != cudaSuccess) {
    s.runtime_version = 0;
    failed = true;
  }
  if (failed) (void)cudaGetLastError();
  return s;
}

}  // namespace baton
