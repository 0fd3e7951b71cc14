# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
# cmake -DBATON_BUILD_DIR=... -DCONSUMER_SOURCE_DIR=... -DWORK_DIR=... -DGENERATOR=...
#       -DCXX_COMPILER=... [-DCUDA_CONSUMER_DIR=...] -P run_consumer.cmake
# Installs a built baton tree into WORK_DIR/prefix, builds the consumer against that prefix
# only, and runs it; with CUDA_CONSUMER_DIR, also configures and builds the consumer of the
# `cuda` component (not run: there may be no GPU). Every step's failure fails the test.
foreach(_v BATON_BUILD_DIR CONSUMER_SOURCE_DIR WORK_DIR GENERATOR CXX_COMPILER)
  if(NOT DEFINED ${_v})
    message(FATAL_ERROR "run_consumer.cmake: -D${_v}=... is required")
  endif()
endforeach()

file(REMOVE_RECURSE "${WORK_DIR}")
set(_prefix "${WORK_DIR}/prefix")
set(_build "${WORK_DIR}/build")

execute_process(COMMAND "${CMAKE_COMMAND}" --install "${BATON_BUILD_DIR}" --prefix "${_prefix}"
                OUTPUT_QUIET COMMAND_ERROR_IS_FATAL ANY)

# The package registry and the system could hold another baton; only the fresh prefix counts.
# CUDAToolkit is disabled outright: a host-only consumer must never need it.
execute_process(
  COMMAND "${CMAKE_COMMAND}" -S "${CONSUMER_SOURCE_DIR}" -B "${_build}" -G "${GENERATOR}"
          --no-warn-unused-cli
          "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}" -DCMAKE_BUILD_TYPE=Release
          "-DCMAKE_PREFIX_PATH=${_prefix}" -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF
          -DCMAKE_DISABLE_FIND_PACKAGE_CUDAToolkit=ON
  COMMAND_ERROR_IS_FATAL ANY)
execute_process(COMMAND "${CMAKE_COMMAND}" --build "${_build}" COMMAND_ERROR_IS_FATAL ANY)
execute_process(COMMAND "${_build}/baton_consumer" COMMAND_ERROR_IS_FATAL ANY)

if(DEFINED CUDA_CONSUMER_DIR)
  set(_cuda_build "${WORK_DIR}/build-cuda")
  execute_process(
    COMMAND "${CMAKE_COMMAND}" -S "${CUDA_CONSUMER_DIR}" -B "${_cuda_build}" -G "${GENERATOR}"
            --no-warn-unused-cli
            "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}" -DCMAKE_BUILD_TYPE=Release
            "-DCMAKE_PREFIX_PATH=${_prefix}" -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF
    COMMAND_ERROR_IS_FATAL ANY)
  execute_process(COMMAND "${CMAKE_COMMAND}" --build "${_cuda_build}" COMMAND_ERROR_IS_FATAL ANY)
endif()
