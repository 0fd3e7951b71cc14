# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
# Finds the third-party libraries of each baton component and gives them stable imported
# target names (baton::openblas, baton::pcre2, baton::utf8proc). Used by the build and,
# installed beside batonConfig.cmake, by consumers: one definition for both.
include_guard(GLOBAL)
include(CMakeFindDependencyMacro)

macro(baton_find_json)
  find_dependency(nlohmann_json 3)
endmacro()

# OpenBLAS: prefer its CMake config (Debian, vcpkg), fall back to pkg-config. The OpenMP
# build is the one to install: it shares threads with baton's own OpenMP loops.
macro(baton_find_host)
  find_dependency(OpenMP)
  if(NOT TARGET baton::openblas)
    find_package(OpenBLAS CONFIG QUIET)
    if(TARGET OpenBLAS::OpenBLAS)
      add_library(baton::openblas INTERFACE IMPORTED)
      target_link_libraries(baton::openblas INTERFACE OpenBLAS::OpenBLAS)
    elseif(OpenBLAS_FOUND AND OpenBLAS_LIBRARIES)
      add_library(baton::openblas INTERFACE IMPORTED)
      target_include_directories(baton::openblas INTERFACE ${OpenBLAS_INCLUDE_DIRS})
      target_link_libraries(baton::openblas INTERFACE ${OpenBLAS_LIBRARIES})
    else()
      find_package(PkgConfig REQUIRED)
      pkg_check_modules(BATON_OPENBLAS REQUIRED IMPORTED_TARGET openblas)
      add_library(baton::openblas INTERFACE IMPORTED)
      target_link_libraries(baton::openblas INTERFACE PkgConfig::BATON_OPENBLAS)
    endif()
  endif()
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
