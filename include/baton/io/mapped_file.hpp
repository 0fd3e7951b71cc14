// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief MappedFile: an RAII, read-only memory map of a whole file (POSIX mmap).
#pragma once

#if !defined(__unix__) && !defined(__APPLE__)
#error "baton/io/mapped_file.hpp needs POSIX mmap"
#endif

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <filesystem>
#include <span>
#include <string>
#include <system_error>
#include <utility>

#include "baton/core/error.hpp"

namespace baton::io {

/// A whole file mapped read-only (MAP_PRIVATE). Move-only; unmaps on destruction. An empty
/// file is allowed and gives an empty span (mmap cannot map zero bytes).
///
/// Assumption: nobody truncates the file while it is mapped. A mapped file that shrinks
/// raises SIGBUS on access to the lost pages; model files are treated as immutable inputs,
/// and callers copy what they keep (read_tensor copies into owned memory).
class MappedFile {
 public:
  MappedFile() = default;

  /// Maps `path`; io_error naming the path and the OS reason if open/fstat/mmap fails or the
  /// path is not a regular file.
  static MappedFile open(const std::filesystem::path& path) {
    MappedFile m;
    m.path_ = path;
    // O_NONBLOCK: opening a FIFO for reading would otherwise block until a writer appears,
    // before fstat could tell that it is not a regular file. No effect on regular files.
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) fail_errno("cannot open ", path);
    // Closes the descriptor on every exit; the mapping stays valid without it.
    struct FdCloser {
      int fd;
      ~FdCloser() { ::close(fd); }
    } closer{fd};
    struct stat st {};
    if (::fstat(fd, &st) != 0) fail_errno("cannot stat ", path);
    BATON_CHECK(S_ISREG(st.st_mode), io_error, "cannot map ", path.string(),
                ": not a regular file");
    m.size_ = static_cast<std::size_t>(st.st_size);
    if (m.size_ == 0) return m;
    void* addr = ::mmap(nullptr, m.size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (addr == MAP_FAILED) fail_errno("cannot mmap ", path);
    m.addr_ = addr;
    return m;
  }

  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  MappedFile(MappedFile&& other) noexcept
      : addr_(std::exchange(other.addr_, nullptr)),
        size_(std::exchange(other.size_, 0)),
        path_(std::move(other.path_)) {}
  MappedFile& operator=(MappedFile&& other) noexcept {
    if (this != &other) {
      unmap();
      addr_ = std::exchange(other.addr_, nullptr);
      size_ = std::exchange(other.size_, 0);
      path_ = std::move(other.path_);
    }
    return *this;
  }
  ~MappedFile() { unmap(); }

  /// The file's bytes; no alignment beyond the page start is implied for any offset.
  std::span<const std::byte> bytes() const {
    return {static_cast<const std::byte*>(addr_), addr_ ? size_ : 0};
  }
  std::size_t size() const { return size_; }
  const std::filesystem::path& path() const { return path_; }

 private:
  [[noreturn]] static void fail_errno(const char* what, const std::filesystem::path& path) {
    const int err = errno;
    BATON_FAIL(io_error, what, path.string(), ": ", std::generic_category().message(err));
  }
  void unmap() noexcept {
    if (addr_) ::munmap(addr_, size_);
    addr_ = nullptr;
    size_ = 0;
  }

  void* addr_ = nullptr;
  std::size_t size_ = 0;
  std::filesystem::path path_;
};

}  // namespace baton::io
