// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief decode_bench's GEMV report (decode_bench_cuda.cu): for each matrix shape a decode
///        step multiplies, what its GEMV launch keeps in flight per SM and the fraction of the
///        streaming bandwidth Little's law predicts from that, next to the fraction measured by
///        timing that GEMV alone over every layer's matrix.
///
/// The prediction: a launch of B blocks on `sms` SMs keeps min(B / sms, resident) blocks per
/// SM (resident: the occupancy calculator's limit), each of 256 threads with
/// GemvKernel::loads_in_flight 16-byte loads outstanding; at a latency L the memory system
/// then delivers at most bytes_in_flight_per_sm x sms / L, so the predicted fraction is that
/// over the measured streaming rate, capped at 1. It is a bound from the launch shape alone
/// (it ignores the tail of a last partial wave and x's loads), to set beside the measurement.
#pragma once

#if !defined(__CUDACC__)
#error "decode_bench_gemv.cuh needs nvcc"
#endif

#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "baton/backend/cuda.hpp"
#include "baton/grid/device_grid.cuh"
#include "baton/kernels/phased/gemv.hpp"
#include "cuda_event_timer.cuh"

namespace baton::bench {

/// The memory latency the prediction assumes. Not measured here: pointer-chasing measurements
/// of Hopper's HBM put an unloaded access at roughly 0.5-0.6 us, and queueing at close to peak
/// bandwidth (what a decode step runs at) lengthens it; 0.8 us is a round figure above the
/// unloaded one, so the prediction errs towards asking for more bytes in flight.
inline constexpr double kAssumedLatencyS = 0.8e-6;

/// One matrix shape of a decode step and where its instances are (one per layer, or the head).
template <class S>
struct GemvShape {
  const char* name;
  int rows;
  int cols;
  std::vector<const S*> matrices;
};

/// Seconds per pass of `shape`'s GEMVs (one launch per matrix, back to back: as many bytes as
/// a decode step reads for it, so a matrix is never still in L2 when it is read again),
/// median of `runs` after a warm-up pass, timed with events on the context's stream.
template <class S>
double gemv_pass_seconds(const GemvShape<S>& shape, const float* x, float* y, CudaContext& ctx,
                         int runs) {
  using K = kernels::GemvKernel<S>;
  return median_event_seconds(ctx, runs, [&] {
    for (const S* w : shape.matrices) {
      const int vec = K::can_vectorize(w, x, shape.cols);
      grid::launch_on_device<K>(K::config(shape.rows),
                                {w, x, y, nullptr, shape.rows, shape.cols, 0, vec}, ctx.stream());
    }
  });
}

/// The report for `model`'s decode-step matrices (see the file comment); `stream_bytes_per_s`
/// is the streaming kernel's rate measured in the same run.
template <class Model>
nlohmann::json gemv_report(const Model& model, CudaContext& ctx, double stream_bytes_per_s,
                           int runs) {
  using S = typename Model::storage;
  using K = kernels::GemvKernel<S>;
  const ModelConfig& c = model.config();
  const int H = c.hidden_size, F = c.intermediate_size, qd = c.q_dim();
  std::vector<GemvShape<S>> shapes = {{"qkv", qd + 2 * c.kv_dim(), H, {}},
                                      {"o_proj", H, qd, {}},
                                      {"gate_up", 2 * F, H, {}},
                                      {"down_proj", H, F, {}},
                                      {"lm_head", c.vocab_size, H, {}}};
  for (int l = 0; l < c.num_layers; ++l) {
    const auto& L = model.layer(l);
    shapes[0].matrices.push_back(raw_pointer(L.wqkv.data()));
    shapes[1].matrices.push_back(raw_pointer(L.wo.data()));
    shapes[2].matrices.push_back(raw_pointer(L.wgate_up.data()));
    shapes[3].matrices.push_back(raw_pointer(L.wdown.data()));
  }
  shapes[4].matrices.push_back(raw_pointer(model.head().data()));

  int device = 0, sms = 0;
  BATON_CUDA_CHECK(cudaGetDevice(&device));
  BATON_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  const int resident = grid::resident_blocks_per_sm<K>();
  const double needed = stream_bytes_per_s * kAssumedLatencyS;  // bytes in flight, whole GPU
  // x's values do not matter for the time (a new DeviceBuffer is zeroed).
  DeviceBuffer<float> x(static_cast<std::size_t>(std::max({H, F, qd})));
  DeviceBuffer<float> y(
      static_cast<std::size_t>(std::max({c.vocab_size, 2 * F, qd + 2 * c.kv_dim()})));

  nlohmann::json rows = nlohmann::json::array();
  double bytes_step = 0, predicted_s = 0, measured_s = 0;
  bool predictable = true;  // the scalar path's loads are not counted: no prediction for it
  for (const GemvShape<S>& sh : shapes) {
    const grid::LaunchConfig cfg = K::config(sh.rows);
    const bool vec = K::can_vectorize(sh.matrices.front(), x.data().get(), sh.cols);
    const int loads = K::loads_in_flight(sh.cols, vec);
    const double blocks_per_sm =
        std::min(static_cast<double>(cfg.grid_x) / sms, static_cast<double>(resident));
    const double in_flight_per_sm = blocks_per_sm * K::kThreads * loads * 16.0;
    const double predicted = std::min(1.0, in_flight_per_sm * sms / needed);
    const double bytes = static_cast<double>(sh.rows) * sh.cols * sizeof(S) * sh.matrices.size();
    const double seconds = gemv_pass_seconds(sh, x.data().get(), y.data().get(), ctx, runs);
    const double measured = bytes / seconds / stream_bytes_per_s;
    bytes_step += bytes;
    measured_s += seconds;
    predictable = predictable && vec;
    if (vec) predicted_s += bytes / (predicted * stream_bytes_per_s);
    rows.push_back({{"matrix", sh.name},
                    {"rows", sh.rows},
                    {"cols", sh.cols},
                    {"per_step", sh.matrices.size()},
                    {"blocks", cfg.grid_x},
                    {"rounds", grid::rounds_of<K>(cfg, {nullptr, nullptr, nullptr, nullptr, sh.rows,
                                                        sh.cols, 0, vec})},
                    {"threads_per_block", K::kThreads},
                    {"vectorized", vec},
                    {"loads_in_flight_per_lane", loads},
                    {"blocks_per_sm", blocks_per_sm},
                    {"bytes_in_flight_per_sm", in_flight_per_sm},
                    {"predicted_fraction", vec ? nlohmann::json(predicted) : nlohmann::json()},
                    {"measured_ms_per_step", seconds * 1e3},
                    {"measured_fraction", measured}});
  }
  return {{"sms", sms},
          {"resident_blocks_per_sm_max", resident},
          {"assumed_latency_ns", kAssumedLatencyS * 1e9},
          {"bytes_in_flight_needed", needed},
          {"matrices", rows},
          // Over the whole step's GEMVs: bytes over the sum of each shape's time.
          {"predicted_fraction", predictable
                                     ? nlohmann::json(bytes_step / predicted_s / stream_bytes_per_s)
                                     : nlohmann::json()},
          {"measured_fraction", bytes_step / measured_s / stream_bytes_per_s}};
}

}  // namespace baton::bench
