# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
# vcpkg port for baton, in the shape of ports/mdspan: a header-only CMake package installed
# with its own install rules (tests, tools, examples and benchmarks off).
vcpkg_from_github(
    OUT_SOURCE_PATH SOURCE_PATH
    REPO baton-project/baton  # placeholder: baton has no public repository yet
    REF "v${VERSION}"
    SHA512 0
    HEAD_REF main
)

# Header-only: one configuration is enough.
set(VCPKG_BUILD_TYPE release)

# Without the cuda feature the CUDA component must not be described even where a toolkit
# happens to be installed, so the exported package never refers to it.
vcpkg_check_features(OUT_FEATURE_OPTIONS FEATURE_OPTIONS
    INVERTED_FEATURES
        cuda CMAKE_DISABLE_FIND_PACKAGE_CUDAToolkit
)

vcpkg_cmake_configure(
    SOURCE_PATH "${SOURCE_PATH}"
    OPTIONS
        ${FEATURE_OPTIONS}
        -DBATON_BUILD_TESTS=OFF
        -DBATON_BUILD_TOOLS=OFF
        -DBATON_BUILD_EXAMPLES=OFF
        -DBATON_BUILD_BENCHMARKS=OFF
        -DBATON_ENABLE_CUDA=OFF  # builds baton's own CUDA tests only; the headers are installed regardless
)

vcpkg_cmake_install()

vcpkg_cmake_config_fixup(CONFIG_PATH share/cmake/baton)

file(REMOVE_RECURSE "${CURRENT_PACKAGES_DIR}/lib" "${CURRENT_PACKAGES_DIR}/debug"
                    "${CURRENT_PACKAGES_DIR}/share/doc")

vcpkg_install_copyright(FILE_LIST "${SOURCE_PATH}/LICENSE")
