# cffi build modules cannot be declared in pyproject.toml; everything else lives there.
from setuptools import setup

setup(cffi_modules=["packages/hippo/_build_native.py:ffibuilder"])
