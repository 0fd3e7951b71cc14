#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
# Installs what building and testing baton needs, if it is missing (Debian/Ubuntu). Idempotent:
# when everything is present it changes nothing and does not touch the network.
set -euo pipefail

packages=(cmake ninja-build g++ pkg-config python3 python3-venv ccache
          doctest-dev nlohmann-json3-dev libpcre2-dev libutf8proc-dev)

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
"${sudo[@]}" apt-get update
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
