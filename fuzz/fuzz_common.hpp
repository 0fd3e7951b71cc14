// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// Shared by the fuzz targets: the rule is that a parser may reject any input, but only with
// a baton::error. Any other exception escapes the target and libFuzzer reports it as a crash,
// as it does sanitizer findings, timeouts and memory blow-ups.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

/// A target's entry point: `BATON_FUZZ_TARGET(name) { ... return 0; }` in fuzz_<name>.cpp. The
/// targets are one program, fuzz_targets.cpp, which includes every target's file so that the
/// headers they share are compiled once (nine programs took about 190 s of clang time); it runs
/// the target it is started as (the build links fuzz_<name> to it).
#define BATON_FUZZ_TARGET(name) int baton_fuzz_##name(const std::uint8_t* data, std::size_t size)

namespace baton::fuzz {

inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

/// The input as a file that the path-taking loaders can open: an anonymous memory file
/// (memfd), reached through /proc/self/fd. No disk traffic, nothing left behind.
class MemFile {
 public:
  MemFile(const std::uint8_t* data, std::size_t size) {
    fd_ = ::memfd_create("baton-fuzz", MFD_CLOEXEC);
    if (fd_ < 0) throw std::runtime_error("memfd_create failed");
    std::size_t done = 0;
    while (done < size) {
      const ssize_t n = ::write(fd_, data + done, size - done);
      if (n <= 0) throw std::runtime_error("write to memfd failed");
      done += static_cast<std::size_t>(n);
    }
  }
  MemFile(const MemFile&) = delete;
  MemFile& operator=(const MemFile&) = delete;
  ~MemFile() { ::close(fd_); }
  std::string path() const { return "/proc/self/fd/" + std::to_string(fd_); }

 private:
  int fd_ = -1;
};

}  // namespace baton::fuzz
