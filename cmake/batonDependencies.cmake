# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
# Finds the third-party libraries of each baton component and gives them stable imported
# target names (baton::pcre2, baton::utf8proc). Used by the build and,
# installed beside batonConfig.cmake, by consumers: one definition for both.
include_guard(GLOBAL)
include(CMakeFindDependencyMacro)

# In a consumer's find_package(baton), a missing dependency must make baton "not found"
# (find_dependency returns from batonConfig.cmake with the reason). Building baton itself
# (BATON_BUILDING set by the top-level CMakeLists.txt), it must stop the configure with the
# reason instead: find_dependency's return() would end the top-level file silently.
macro(_baton_find_package)
  if(BATON_BUILDING)
    find_package(${ARGV} REQUIRED)
  else()
    find_dependency(${ARGV})
  endif()
endmacro()

macro(baton_find_json)
  _baton_find_package(nlohmann_json 3)
endmacro()

# The host backend needs OpenMP alone (the loops of a workspace bound to no HostContext): its
# matrix products are baton's own (backend/host_gemm.hpp, host_simd.hpp), no BLAS library.
macro(baton_find_host)
  _baton_find_package(OpenMP)
endmacro()

macro(baton_find_text)
  if(NOT TARGET baton::pcre2)
    find_package(PkgConfig REQUIRED)
    pkg_check_modules(BATON_PCRE2 REQUIRED IMPORTED_TARGET libpcre2-8)
    add_library(baton::pcre2 INTERFACE IMPORTED)
    target_link_libraries(baton::pcre2 INTERFACE PkgConfig::BATON_PCRE2)
    target_compile_definitions(baton::pcre2 INTERFACE PCRE2_CODE_UNIT_WIDTH=8)
  endif()
  if(NOT TARGET baton::utf8proc)
    find_package(PkgConfig REQUIRED)
    pkg_check_modules(BATON_UTF8PROC REQUIRED IMPORTED_TARGET libutf8proc)
    add_library(baton::utf8proc INTERFACE IMPORTED)
    target_link_libraries(baton::utf8proc INTERFACE PkgConfig::BATON_UTF8PROC)
  endif()
endmacro()

# The CUDA toolkit's imported targets (CUDA::cudart, CUDA::cublas). CMake 3.25's
# FindCUDAToolkit marks CUDA::nvToolsExt deprecated without checking that the target exists,
# in a branch taken only when the calling project's cmake_minimum_required is 3.25 or newer
# (baton's is); CUDA 12.9 and later ship no nvToolsExt, so the configure stops there ("could
# not find TARGET CUDA::nvToolsExt"). Later CMake checks the target first. Lowering the
# recorded minimum for the duration of the lookup skips only that deprecation mark.
# Arguments are find_package's (QUIET, REQUIRED, ...).
macro(baton_find_cuda_toolkit)
  set(_baton_saved_minimum "${CMAKE_MINIMUM_REQUIRED_VERSION}")
  if(CMAKE_MINIMUM_REQUIRED_VERSION VERSION_GREATER_EQUAL 3.25)
    set(CMAKE_MINIMUM_REQUIRED_VERSION 3.24)
  endif()
  if(BATON_BUILDING)
    find_package(CUDAToolkit ${ARGN})
  else()
    find_dependency(CUDAToolkit ${ARGN})
  endif()
  set(CMAKE_MINIMUM_REQUIRED_VERSION "${_baton_saved_minimum}")
endmacro()
