// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// Compiles and links against baton::cuda (CUDA runtime + cuBLAS) from an install.
#include <baton/backend/cuda.hpp>

#include <cstdio>

int main() {
  int devices = 0;
  const cudaError_t rc = cudaGetDeviceCount(&devices);
  std::printf("CUDA devices: %d (%s)\n", rc == cudaSuccess ? devices : 0, cudaGetErrorString(rc));
  return 0;
}
