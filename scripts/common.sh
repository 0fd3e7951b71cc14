# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
# Sourced by the other scripts: repository root, parallelism, and nvcc on PATH.
# Environment knobs (all optional):
#   BATON_PRESET      configure preset (dev, cuda, asan); default chosen per script
#   BATON_BUILD_DIR   build folder (default build/<preset>)
#   BATON_JOBS        parallel build/test jobs (default: number of CPUs)
#   BATON_SHARED_DIR  the shared/ folder with tokenizers/ (default <repo>/../shared; optional)
#   BATON_CCACHE_DIR  the compiler cache (default ~/.cache/baton/ccache, outside the clone);
#                     BATON_CCACHE=0 builds without it

baton_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
baton_jobs=${BATON_JOBS:-$(nproc 2>/dev/null || echo 2)}

# The CUDA toolkit installs nvcc outside the default PATH.
if ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH="/usr/local/cuda/bin:$PATH"
fi

# The compiler cache (ccache, a Debian package setup.sh installs): every build of every clone
# shares one cache outside the clone, so a second build of the same code, in another folder
# or another clone, compiles nothing again. Paths are hashed relative to the clone (base_dir),
# and -Werror is left out of the hash (CI's -Werror build and a user's plain build of the same
# file are one entry; .ci/run fails phase 1 on any warning its build log shows, cached or not).
# Called again by the scripts after setup.sh, which may just have installed ccache.
# baton_ccache_dir is where the cache is (or will be), whether ccache is installed yet or not.
baton_ccache_dir=${BATON_CCACHE_DIR:-${CCACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/baton/ccache}}
baton_ccache_setup() {
  if [ "${BATON_CCACHE:-1}" != 0 ] && command -v ccache >/dev/null 2>&1; then
    export CCACHE_DIR=$baton_ccache_dir
    export CCACHE_BASEDIR=$baton_root
    # Neither the build folder (only compiles with -g would hash it: the asan preset) nor the
    # locale (it only translates diagnostics; the clean room's differs from a CI shell's).
    export CCACHE_NOHASHDIR=1
    case ",${CCACHE_SLOPPINESS:-}," in
      *,locale,*) ;;
      *) export CCACHE_SLOPPINESS="locale${CCACHE_SLOPPINESS:+,$CCACHE_SLOPPINESS}" ;;
    esac
    case " ${CCACHE_IGNOREOPTIONS:-} " in
      *" -Werror "*) ;;
      *) export CCACHE_IGNOREOPTIONS="-Werror -Xcompiler=-Werror${CCACHE_IGNOREOPTIONS:+ $CCACHE_IGNOREOPTIONS}" ;;
    esac
    export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-8G}
    baton_launcher=ccache
  else
    baton_launcher=
  fi
}
baton_ccache_setup

# Configure arguments every script passes: the build folder, the compiler cache, and the
# shared folder when the environment names one (otherwise CMake's own default,
# <repo>/../shared, applies).
baton_configure_args() {
  local preset=$1 build_dir=$2
  printf '%s\n' "--preset=$preset" "-B" "$build_dir"
  # Always given, so that a build folder configured with ccache loses it when ccache is gone.
  printf '%s\n' "-DCMAKE_CXX_COMPILER_LAUNCHER=$baton_launcher" \
    "-DCMAKE_CUDA_COMPILER_LAUNCHER=$baton_launcher"
  if [ -n "${BATON_SHARED_DIR:-}" ]; then printf '%s\n' "-DBATON_SHARED_DIR=$BATON_SHARED_DIR"; fi
}

baton_say() { printf '\n== %s\n' "$*"; }
