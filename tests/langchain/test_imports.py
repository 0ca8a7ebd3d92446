"""Layering: hippo never imports a framework; each adapter imports only the framework it adapts."""

from __future__ import annotations

import subprocess
import sys

import pytest


def _modules_after(code: str) -> set[str]:
    out = subprocess.run([sys.executable, "-c", code + "\nimport sys\nprint('\\n'.join(sys.modules))"],
                         check=True, capture_output=True, text=True, timeout=120).stdout
    return {name.split(".")[0] for name in out.split()}


def test_hippo_imports_no_framework():
    loaded = _modules_after("import hippo")
    assert not loaded & {"langchain", "langchain_core", "langgraph", "llama_index", "langchain_hippo",
                         "llamaindex_hippo"}


@pytest.mark.parametrize("module, forbidden", [
    ("langchain_hippo.retrievers", {"langgraph", "langchain", "llama_index", "langchain_classic"}),
    ("langchain_hippo.chat_history", {"langgraph", "langchain", "llama_index", "langchain_classic"}),
    ("langchain_hippo.store", {"langchain", "llama_index", "langchain_classic"}),
    ("llamaindex_hippo", {"langchain", "langchain_core", "langgraph", "langchain_hippo"}),
])
def test_adapters_import_only_their_framework(module, forbidden):
    assert not _modules_after(f"import {module}") & forbidden


def test_lazy_package_exports():
    import langchain_hippo

    assert set(langchain_hippo.__all__) == {"HippoRetriever", "HippoStore", "HippoMemoryMiddleware", "HippoContextMiddleware",
                                            "make_memory_tools", "HippoChatMessageHistory", "HippoMemory"}
    assert langchain_hippo.HippoStore.__module__ == "langchain_hippo.store"
    with pytest.raises(AttributeError):
        langchain_hippo.Nope  # noqa: B018
