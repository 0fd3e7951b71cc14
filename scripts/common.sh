# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
# Sourced by the other scripts: repository root, parallelism, and nvcc on PATH.
# Environment knobs (all optional):
#   BATON_PRESET      configure preset (dev, cuda, asan); default chosen per script
#   BATON_BUILD_DIR   build folder (default build/<preset>)
#   BATON_JOBS        parallel build/test jobs (default: number of CPUs)
#   BATON_SHARED_DIR  the shared/ folder with tokenizers/ (default <repo>/../shared; optional)

baton_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
baton_jobs=${BATON_JOBS:-$(nproc 2>/dev/null || echo 2)}

# The CUDA toolkit installs nvcc outside the default PATH.
if ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH="/usr/local/cuda/bin:$PATH"
fi

# Configure arguments every script passes: the build folder, and the shared folder when the
# environment names one (otherwise CMake's own default, <repo>/../shared, applies).
baton_configure_args() {
  local preset=$1 build_dir=$2
  printf '%s\n' "--preset=$preset" "-B" "$build_dir"
  if [ -n "${BATON_SHARED_DIR:-}" ]; then printf '%s\n' "-DBATON_SHARED_DIR=$BATON_SHARED_DIR"; fi
}

baton_say() { printf '\n== %s\n' "$*"; }
