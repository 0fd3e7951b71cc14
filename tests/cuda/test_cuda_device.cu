// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// The CUDA backend on a real GPU: buffers, a kernel and a cuBLAS product, each checked against
// the same computation on the host. Exits 77 (ctest: Skipped) when no GPU is usable, so a
// machine without one never reports these as passing.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "baton/backend/cuda_kernels.cuh"
#include "baton/core/dtype.hpp"

using baton::CudaContext;
using baton::DeviceBuffer;

TEST_CASE("upload and download round-trip bit-exactly") {
  std::vector<baton::bf16> host(1000);
  for (std::size_t i = 0; i < host.size(); ++i) host[i] = baton::to_bf16(0.25f * i - 100.0f);
  const auto dev = baton::cuda::upload(std::span<const baton::bf16>(host));
  CHECK(dev.size() == host.size());
  std::vector<baton::bf16> back(host.size());
  baton::cuda::download(dev, std::span(back));
  for (std::size_t i = 0; i < host.size(); ++i) REQUIRE(back[i].bits == host[i].bits);
}

TEST_CASE("a new buffer is zeroed and fill writes exactly its range") {
  CudaContext ctx;
  // Not a multiple of the block size, so the tail of the grid-stride loop is exercised.
  constexpr std::size_t n = 100'003;
  DeviceBuffer<float> buf(n);
  baton::fill(buf.data() + 10, 1000, 2.5f, ctx.stream());
  ctx.synchronize();
  std::vector<float> got(n, -1.0f);
  baton::cuda::download(buf, std::span(got));
  for (std::size_t i = 0; i < n; ++i) {
    const float want = (i >= 10 && i < 1010) ? 2.5f : 0.0f;
    REQUIRE(got[i] == want);
  }
  baton::fill(buf, -7.0f, ctx.stream());
  ctx.synchronize();
  baton::cuda::download(buf, std::span(got));
  for (float v : got) REQUIRE(v == -7.0f);
}

TEST_CASE("cuBLAS sgemm matches a host matrix product") {
  // Row-major C[m,n] = A[m,k] * B[k,n]. cuBLAS is column-major, and a row-major matrix is its
  // transpose in column-major, so it computes C^T = B^T * A^T with the operands swapped.
  constexpr int m = 37, n = 29, k = 53;
  std::mt19937 rng(1234);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> a(m * k), b(k * n);
  for (float& x : a) x = dist(rng);
  for (float& x : b) x = dist(rng);

  CudaContext ctx;
  // Pedantic math: no TF32, so the result is comparable with an f32 host product.
  BATON_CUBLAS_CHECK(cublasSetMathMode(ctx.blas(), CUBLAS_PEDANTIC_MATH));
  const auto da = baton::cuda::upload(std::span<const float>(a));
  const auto db = baton::cuda::upload(std::span<const float>(b));
  DeviceBuffer<float> dc(m * n);
  const float alpha = 1.0f, beta = 0.0f;
  BATON_CUBLAS_CHECK(cublasSgemm(ctx.blas(), CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &alpha,
                                 db.data().get(), n, da.data().get(), k, &beta, dc.data().get(),
                                 n));
  ctx.synchronize();
  std::vector<float> c(m * n);
  baton::cuda::download(dc, std::span(c));

  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < n; ++j) {
      double want = 0.0;
      for (int p = 0; p < k; ++p) want += double(a[i * k + p]) * double(b[p * n + j]);
      // |terms| <= 1, k of them: f32 accumulation error stays far below 1e-4 * k.
      REQUIRE(std::fabs(c[i * n + j] - want) <= 1e-4 * k);
    }
  }
}

TEST_CASE("device errors surface as baton::device_error") {
  CHECK_THROWS_AS(BATON_CUDA_CHECK(cudaSetDevice(1 << 20)), baton::device_error);
  // The failed call must not leave a sticky error behind for the next check.
  CHECK_NOTHROW(BATON_CUDA_CHECK(cudaGetLastError()));
}

// `test_cuda_device --cuda-status` prints the CUDA runtime's status and versions (and device
// 0's name and architecture) and exits 0 when a device is usable, 77 otherwise: the GPU check's
// run.sh heads its summary with it. Without a usable device the tests are skipped (exit 77),
// and the same line, last, names the runtime's status (a driver too old for the runtime is
// cudaErrorInsufficientDriver, not "no GPU").
int main(int argc, char** argv) {
  const baton::CudaStatus status = baton::cuda_status();
  if (argc == 2 && std::string_view(argv[1]) == "--cuda-status") {
    std::string line = status.line();
    cudaDeviceProp prop{};
    if (status.usable() && cudaGetDeviceProperties(&prop, 0) == cudaSuccess) {
      line += "; device 0: " + std::string(prop.name) + " (sm_" + std::to_string(prop.major) +
              std::to_string(prop.minor) + ")";
    }
    std::puts(line.c_str());
    return status.usable() ? 0 : 77;
  }
  if (!status.usable()) {
    std::puts("test_cuda_device: the device tests are skipped (exit 77):");
    std::puts(status.line().c_str());
    return 77;
  }
  doctest::Context context(argc, argv);
  return context.run();
}
