# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
# baton_cuda_program(<target>): settings every nvcc-built program of this project shares.
#   - C++20 for nvcc (baton::baton's cxx_std_20 covers g++ only);
#   - an RPATH to the toolkit's lib folder: nvcc links the CUDA runtime from a directory CMake
#     treats as implicit, so without it a machine whose loader does not know that folder
#     fails to start the program instead of running (or skipping) it;
#   - what scripts/gpu-check.sh ships to a GPU machine that has the CUDA 13 runtime and cuBLAS
#     and nothing else: the C++ runtime linked statically, and libraries the program does not
#     use (OpenMP comes with baton::host; device code needs neither) dropped.
function(baton_cuda_program target)
  set_target_properties(${target} PROPERTIES CUDA_STANDARD 20 CUDA_STANDARD_REQUIRED ON
                                             BUILD_RPATH "${CUDAToolkit_LIBRARY_DIR}")
  target_link_options(${target} PRIVATE -static-libstdc++ -static-libgcc "LINKER:--as-needed")
endfunction()
