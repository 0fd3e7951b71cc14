#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
# Installs what building and testing baton needs, if it is missing (Debian/Ubuntu). Idempotent:
# when everything is present it changes nothing and does not touch the network.
#   scripts/setup.sh                the build and the tests (g++)
#   scripts/setup.sh --sanitizers   the same, and clang 16 with its sanitizer, libFuzzer and
#                                   OpenMP runtimes:
#                                   the `asan` preset and scripts/fuzz.sh (Debian 12's clang 14
#                                   cannot compile baton with libstdc++ 12: no source_location)
set -euo pipefail

# python3-dev: the headers the Python package's extension compiles against (python/).
packages=(cmake ninja-build g++ pkg-config python3 python3-venv python3-dev ccache
          doctest-dev nlohmann-json3-dev libpcre2-dev libutf8proc-dev)
case "${1:-}" in
  "") ;;
  --sanitizers) packages+=(clang-16 libclang-rt-16-dev libomp-16-dev) ;;
  *) echo "setup.sh: unknown option '$1' (none, or --sanitizers)" >&2; exit 2 ;;
esac

if ! command -v dpkg-query >/dev/null 2>&1; then
  echo "setup.sh: not a Debian-based system; make sure these (or equivalents) are installed:"
  echo "  ${packages[*]}"
  exit 0
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup.sh: all build dependencies are installed"
  exit 0
fi

sudo=()
if [ "$(id -u)" -ne 0 ]; then sudo=(sudo); fi
echo "setup.sh: installing ${missing[*]}"
# Another apt beside this one (CI installs the sanitizer packages beside its first phase) holds
# dpkg's lock for a while: wait for it rather than fail.
lock=(-o DPkg::Lock::Timeout=600)
"${sudo[@]}" apt-get "${lock[@]}" update
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get "${lock[@]}" install -y --no-install-recommends "${missing[@]}"
