"""Builds the `kiln` module: kiln/_kiln.c, kiln/_tensor.c and kiln/_strings.c with Kiln's C runtime compiled in
(runtime/src of this repository), so the module needs no other Kiln file.
`pip install ./python` from the repository's root. Needs Python's headers
(Debian: python3-dev), oneDNN's headers (libdnnl-dev) and GCC's OpenMP;
the runtime loads oneDNN itself with dlopen when a model calls it."""
import glob
import os

from setuptools import Extension, setup

here = os.path.dirname(os.path.abspath(__file__))
runtime = os.path.join(os.path.dirname(here), "runtime")
if not os.path.isdir(os.path.join(runtime, "src")):
    raise SystemExit(f"Kiln's runtime sources are not at {runtime}: install from the repository")
# Relative to this folder: setuptools wants relative source paths.
sources = ["kiln/_kiln.c", "kiln/_tensor.c", "kiln/_strings.c"] + sorted(
    os.path.relpath(p, here) for p in glob.glob(os.path.join(runtime, "src", "**", "*.c"),
                                                recursive=True))

setup(ext_modules=[Extension(
    "kiln._kiln",
    sources=sources,
    include_dirs=[os.path.join(runtime, "include"), os.path.join(runtime, "src")],
    extra_compile_args=["-std=gnu11", "-O2", "-fopenmp", "-Wno-unused-parameter"],
    extra_link_args=["-fopenmp"],
    libraries=["dl", "m", "pthread"],
)])
