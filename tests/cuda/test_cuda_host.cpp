// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// The CUDA backend as plain C++ sees it (compiled by g++, linked against cudart and cuBLAS):
// the tag satisfies the Backend concept, device memory cannot be dereferenced on the host, and
// every failure is a baton::device_error, also on a machine with no GPU or driver, and
// cuda_status() names the runtime's own status there (baton/backend/cuda_status.hpp).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "baton/backend/cuda.hpp"
#include "baton/backend/host.hpp"

using baton::DevicePtr;

template <class P>
concept Dereferenceable = requires(P p) {
  *p;
};
template <class P>
concept Indexable = requires(P p) {
  p[0];
};

static_assert(baton::Backend<baton::cuda> && baton::Backend<baton::host>);
static_assert(baton::cuda::name == "cuda" && baton::cuda::is_device);
static_assert(
    std::is_same_v<decltype(std::declval<baton::cuda::buffer<float>&>().data()), DevicePtr<float>>);
static_assert(!Dereferenceable<DevicePtr<float>> && !Indexable<DevicePtr<float>>);
static_assert(Dereferenceable<float*>);
static_assert(std::is_convertible_v<DevicePtr<float>, DevicePtr<const float>>);
static_assert(!std::is_convertible_v<DevicePtr<const float>, DevicePtr<float>>);
static_assert(!std::is_convertible_v<float*, DevicePtr<float>>, "wrapping must be explicit");
static_assert(!std::is_copy_constructible_v<baton::DeviceBuffer<float>>);
static_assert(std::is_nothrow_move_constructible_v<baton::DeviceBuffer<float>>);

TEST_CASE("device pointer arithmetic stays in the wrapper") {
  float storage[8] = {};
  const DevicePtr<float> p(storage);
  CHECK((p + 3).get() == storage + 3);
  CHECK((p + 3) - p == 3);
  CHECK(baton::raw_pointer(p + 1) == storage + 1);
  CHECK_FALSE(DevicePtr<float>{});
}

TEST_CASE("BATON_CUDA_CHECK names the call and the status") {
  // Fails everywhere: no driver (CI), or no such device (a GPU machine).
  try {
    BATON_CUDA_CHECK(cudaSetDevice(1 << 20));
    FAIL("cudaSetDevice(1 << 20) did not fail");
  } catch (const baton::device_error& e) {
    const std::string what = e.what();
    CHECK(what.find("cudaSetDevice(1 << 20) failed: cudaError") != std::string::npos);
    // The call site only where the build asks for source locations in messages.
#ifdef BATON_ERROR_SOURCE_LOCATION
    CHECK(what.find("test_cuda_host.cpp:") != std::string::npos);
#else
    CHECK(what.find("test_cuda_host.cpp") == std::string::npos);
#endif
  }
}

TEST_CASE("BATON_CUBLAS_CHECK names the call and the status") {
  try {
    BATON_CUBLAS_CHECK(cublasSetStream(nullptr, nullptr));
    FAIL("cublasSetStream on a null handle did not fail");
  } catch (const baton::device_error& e) {
    const std::string what = e.what();
    CHECK(what.find("cublasSetStream(nullptr, nullptr) failed: CUBLAS_STATUS_NOT_INITIALIZED") !=
          std::string::npos);
  }
}

TEST_CASE("empty buffers need no device") {
  const baton::DeviceBuffer<float> empty;
  CHECK(empty.empty());
  CHECK_FALSE(empty.data());
  const auto uploaded = baton::cuda::upload(std::span<const float>{});
  CHECK(uploaded.size() == 0);
}

TEST_CASE("allocation reports a missing device as device_error, never a crash") {
  const bool available = baton::cuda_device_available();  // must not throw either way
  if (available) {
    baton::DeviceBuffer<float> b(16);
    CHECK(b.size() == 16);
    std::vector<float> small(4);
    CHECK_THROWS_AS(baton::cuda::download(b, std::span(small)), baton::usage_error);
  } else {
    CHECK_THROWS_AS(baton::DeviceBuffer<float>(16), baton::device_error);
  }
}

TEST_CASE("cuda_status names the runtime's status and both versions") {
  const baton::CudaStatus s = baton::cuda_status();
  CHECK(s.usable() == baton::cuda_device_available());
  // The runtime that was loaded is of the major version this was compiled against (libcudart's
  // soname carries it); the driver's version is 0 only where no driver is installed.
  CHECK(s.runtime_version / 1000 == CUDART_VERSION / 1000);
  CHECK(s.driver_version >= 0);
  const std::string line = s.line();
  INFO(line);
  CHECK(line.find("; driver " + std::to_string(s.driver_version)) != std::string::npos);
  CHECK(line.find(", runtime " + std::to_string(s.runtime_version)) != std::string::npos);
  if (s.usable()) {
    CHECK(s.devices > 0);
    CHECK(line.rfind("CUDA: " + std::to_string(s.devices) + " device", 0) == 0);
  } else {
    // A CI machine (no driver, so cudaErrorInsufficientDriver with driver 0), a driver too old
    // for this runtime, or no GPU: whichever it is, the line names the runtime's own status.
    CHECK(s.error != cudaSuccess);
    CHECK(s.devices == 0);
    const std::string name = s.name(), text = s.text();
    CHECK(name.rfind("cudaError", 0) == 0);
    CHECK_FALSE(text.empty());
    CHECK(line.rfind("no usable CUDA device: " + name + " (" + text + "); driver ", 0) == 0);
  }
}
