# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
"""Conan 2 recipe for baton, in the shape of conan-center-index's header_only template.

The recipe sits in the repository, so it packages the working tree it belongs to
(`conan create packaging/conan`) instead of downloading a release archive. Components mirror
the CMake package: baton::baton (core), baton::json, baton::host, baton::text, baton::cuda.
"""
import os

from conan import ConanFile
from conan.tools.build import check_min_cppstd
from conan.tools.files import copy
from conan.tools.layout import basic_layout

required_conan_version = ">=2.0"


class BatonConan(ConanFile):
    name = "baton"
    version = "0.1.0"
    description = ("Header-only C++20/CUDA library that runs a relay of LoRA adapters on one "
                   "frozen Qwen2/Llama transformer")
    license = "MIT"
    homepage = "https://example.invalid/baton"
    topics = ("llm", "lora", "inference", "cuda", "header-only")
    package_type = "header-library"
    settings = "os", "arch", "compiler", "build_type"
    options = {
        "with_host": [True, False],
        "with_text": [True, False],
        "with_cuda": [True, False],
    }
    default_options = {
        "with_host": True,
        "with_text": True,
        # The CUDA toolkit is not a Conan package: opting in means it is installed on the system.
        "with_cuda": False,
    }
    no_copy_source = True

    @property
    def _repo_root(self):
        return os.path.join(self.recipe_folder, os.pardir, os.pardir)

    def export_sources(self):
        copy(self, "LICENSE", self._repo_root, self.export_sources_folder)
        copy(self, "*.hpp", os.path.join(self._repo_root, "include"),
             os.path.join(self.export_sources_folder, "include"))
        copy(self, "*.cuh", os.path.join(self._repo_root, "include"),
             os.path.join(self.export_sources_folder, "include"))

    def configure(self):
        if self.options.with_cuda:
            # The CUDA backend builds on the host backend (loading, reference paths).
            self.options.with_host = True

    def layout(self):
        basic_layout(self, src_folder=".")

    def requirements(self):
        # Header-only: every dependency is used from public headers, so all are transitive.
        self.requires("nlohmann_json/[>=3.11 <4]")
        if self.options.with_host:
            self.requires("openblas/[>=0.3.20 <1]")
        if self.options.with_text:
            self.requires("pcre2/[>=10.40 <11]")
            self.requires("utf8proc/[>=2.8 <3]")

    def package_id(self):
        self.info.clear()

    def validate(self):
        check_min_cppstd(self, 20)

    def build(self):
        pass

    def package(self):
        copy(self, "LICENSE", self.source_folder, os.path.join(self.package_folder, "licenses"))
        for pattern in ("*.hpp", "*.cuh"):
            copy(self, pattern, os.path.join(self.source_folder, "include"),
                 os.path.join(self.package_folder, "include"))

    def package_info(self):
        self.cpp_info.set_property("cmake_file_name", "baton")
        self.cpp_info.bindirs = []
        self.cpp_info.libdirs = []

        def component(name, requires=()):
            c = self.cpp_info.components[name]
            c.set_property("cmake_target_name", f"baton::{name}")
            c.bindirs = []
            c.libdirs = []
            c.requires = list(requires)
            return c

        component("baton")
        component("json", ["baton", "nlohmann_json::nlohmann_json"])
        if self.options.with_host:
            host = component("host", ["json", "openblas::openblas"])
            if self.settings.compiler in ("gcc", "clang"):
                # OpenMP comes with the compiler (libgomp / libomp), not from a package.
                host.cxxflags = ["-fopenmp"]
                host.sharedlinkflags = ["-fopenmp"]
                host.exelinkflags = ["-fopenmp"]
        if self.options.with_text:
            text = component("text", ["json", "pcre2::pcre2-8", "utf8proc::utf8proc"])
            text.defines = ["PCRE2_CODE_UNIT_WIDTH=8"]
        if self.options.with_cuda:
            cuda = component("cuda", ["host"])
            cuda.system_libs = ["cudart", "cublas"]
