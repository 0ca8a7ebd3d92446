"""cffi (API mode) build of the C core into ``hippo._hippo_c``.

Used by ``setup.py`` (``cffi_modules``), so both ``python setup.py build_ext --inplace`` and
``pip install -e .`` compile every ``core_c/*.c`` file. Flags are portable on purpose: no
``-march=native``; the SIMD kernels are compiled per function with target attributes and chosen at
run time. API-mode calls release the GIL.
"""

from __future__ import annotations

import glob
import os
import re
import sys

from cffi import FFI

_HERE = os.path.dirname(os.path.abspath(__file__))
_ROOT = os.path.dirname(os.path.dirname(_HERE))
_CORE = os.path.join(_ROOT, "core_c")


def _rel(path: str) -> str:
    """Paths relative to the working directory when it is the repository root (setuptools prefers
    relative source paths); absolute otherwise."""
    try:
        rel = os.path.relpath(path)
    except ValueError:  # different drive on Windows
        return path
    return path if rel.startswith("..") else rel


def _cdef_from_header() -> str:
    """The public header minus preprocessor lines and comments: cffi parses plain declarations."""
    with open(os.path.join(_CORE, "hippo_core.h"), encoding="utf-8") as fh:
        text = fh.read()
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    out = []
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("#define"):
            parts = stripped.split()
            if len(parts) >= 3 and parts[1] not in ("HIPPO_CORE_H",):
                out.append(f"#define {parts[1]} ...")
            continue
        if stripped.startswith("#") or stripped in ('extern "C" {', "}") or not stripped:
            continue
        out.append(line)
    return "\n".join(out)


ffibuilder = FFI()
ffibuilder.cdef(_cdef_from_header())

_sources = sorted(glob.glob(os.path.join(_CORE, "*.c")))
_compile_args = ["-O3", "-std=c99", "-fvisibility=hidden", "-fno-strict-aliasing"]
if sys.platform == "win32":  # MSVC: keep it simple
    _compile_args = ["/O2"]

ffibuilder.set_source(
    "hippo._hippo_c",
    '#include "hippo_core.h"',
    sources=[_rel(p) for p in _sources],
    include_dirs=[_rel(_CORE)],
    extra_compile_args=_compile_args,
    depends=[_rel(p) for p in glob.glob(os.path.join(_CORE, "*.h")) + glob.glob(os.path.join(_CORE, "*.inc"))],
)

if __name__ == "__main__":
    ffibuilder.compile(verbose=True)
