# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
import os

from conan import ConanFile
from conan.tools.build import can_run
from conan.tools.cmake import CMake, CMakeToolchain, cmake_layout


class BatonTestPackageConan(ConanFile):
    settings = "os", "arch", "compiler", "build_type"
    # PkgConfigDeps: baton's config finds PCRE2/utf8proc
    # through pkg-config; with Conan-built dependencies their .pc files come from here.
    generators = "CMakeDeps", "PkgConfigDeps", "VirtualRunEnv"
    test_type = "explicit"

    def requirements(self):
        self.requires(self.tested_reference_str)

    def layout(self):
        cmake_layout(self)

    def generate(self):
        tc = CMakeToolchain(self)
        # Test the components the package was created with (baton::json always).
        options = self.dependencies[self.tested_reference_str].options
        for name in ("host", "text", "cuda"):
            tc.cache_variables[f"BATON_TEST_{name.upper()}"] = bool(options.get_safe(f"with_{name}"))
        tc.generate()

    def build(self):
        cmake = CMake(self)
        cmake.configure()
        cmake.build()

    def test(self):
        if can_run(self):
            self.run(os.path.join(self.cpp.build.bindir, "test_package"), env="conanrun")
            if self.dependencies[self.tested_reference_str].options.with_cuda:
                self.run(os.path.join(self.cpp.build.bindir, "test_package_cuda"), env="conanrun")
