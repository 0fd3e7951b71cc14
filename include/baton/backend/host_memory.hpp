// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief Host allocations for weights, caches and activations: 64-byte aligned, and large
///        ones aligned to 2 MiB and offered to the kernel as transparent huge pages.
///
/// Why huge pages: decode streams every weight once per token. With 4 KiB pages the stream
/// takes a TLB miss every 4 KiB and the hardware prefetcher restarts at every page boundary.
/// On the 2-core development machine (Zen, THP in `madvise` mode, the usual distribution
/// default) one f32 GEMV stream read 21-22 GB/s from 4 KiB pages and 28-31 GB/s from 2 MiB
/// pages; two threads 23-29 against 33-35 (docs/performance.md). Under `madvise` mode the
/// kernel backs anonymous memory with huge pages only where asked, so a library has to ask.
/// The advice is a hint: where THP is off, or on a system without madvise, nothing changes.
#pragma once

#include <cstddef>
#include <new>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace baton::host_memory {

/// Every host allocation is at least this aligned (one cache line; the widest SIMD load).
inline constexpr std::size_t kCacheLine = 64;
/// The x86-64 huge page. Allocations of at least this size are aligned to it and advised.
inline constexpr std::size_t kHugePage = std::size_t{2} << 20;

/// The alignment an allocation of `bytes` gets; `release` recomputes it from the same size.
constexpr std::size_t alignment_for(std::size_t bytes) noexcept {
  return bytes >= kHugePage ? kHugePage : kCacheLine;
}

/// `bytes` of uninitialised memory (throws std::bad_alloc). Large blocks are advised as huge
/// pages before they are touched, so the first write faults them in as 2 MiB pages.
inline void* allocate(std::size_t bytes) {
  const std::size_t align = alignment_for(bytes);
  void* p = ::operator new (bytes, std::align_val_t{align});
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  // Only the whole 2 MiB pages inside the block can be huge; the advice covers those.
  if (align == kHugePage) (void)::madvise(p, bytes / kHugePage * kHugePage, MADV_HUGEPAGE);
#endif
  return p;
}

/// Frees a block from `allocate(bytes)` (same `bytes`).
inline void release(void* p, std::size_t bytes) noexcept {
  if (p != nullptr) ::operator delete (p, std::align_val_t{alignment_for(bytes)});
}

}  // namespace baton::host_memory
