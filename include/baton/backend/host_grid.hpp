// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief The host-grid backend: host memory, and the forward run as the CUDA backend runs
///        it — the same phased kernels, launch shapes and scratch — on the host grid
///        (grid/host_grid.hpp). Slow on purpose (one thread at a time); it exists so the
///        device forward's composition is tested on machines without a GPU.
#pragma once

#include <span>
#include <string_view>

#include "baton/backend/backend.hpp"
#include "baton/backend/host.hpp"
#include "baton/grid/forward_scratch.hpp"

namespace baton {

/// What a Workspace<host_grid> keeps beside the activations.
struct HostGridExtras {
  grid::GridScratch<host> s;
  grid::GridScratch<host>& scratch() { return s; }
};

/// Backend tag: host memory (HostBuffer, as baton::host), forward through phased kernels on
/// the host grid. Include model/host_grid_forward.hpp for its operations.
struct host_grid {
  static constexpr std::string_view name = "host-grid";
  static constexpr bool is_device = false;
  template <class T>
  using buffer = HostBuffer<T>;
  using workspace_extras = HostGridExtras;
  template <class T>
  static buffer<T> upload(std::span<const T> src) {
    return host::upload(src);
  }
  template <class T>
  static void download(const buffer<T>& src, std::span<T> dst) {
    host::download(src, dst);
  }
};

static_assert(Backend<host_grid>);

}  // namespace baton
