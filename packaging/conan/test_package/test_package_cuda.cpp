// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// Built only for a with_cuda=True package: baton::cuda compiles with the host compiler and links
// the CUDA runtime and cuBLAS. It runs on machines without a GPU too (it only asks).
#include <baton/backend/cuda.hpp>

#include <cstdio>

int main() {
  std::printf("baton test_package_cuda: OK (CUDA device %s)\n",
              baton::cuda_device_available() ? "available" : "not available");
  return 0;
}
