"""Execute every tutorial notebook in notebooks/ and check that the committed copies carry no outputs.

Each notebook runs in a fresh ipykernel of the interpreter running the tests (a kernelspec written to a
temporary JUPYTER_PATH, so no user-level "python3" kernel can shadow it), from a temporary working directory,
with matplotlib's Agg backend and with Python sockets disabled inside the kernel: the notebooks must run
offline. Any cell error fails the test with the cell's traceback.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
kernelspec = pytest.importorskip("ipykernel.kernelspec")

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK_DIR = ROOT / "notebooks"
NOTEBOOKS = sorted(NOTEBOOK_DIR.glob("*.ipynb"))
TUTORIALS = [
    "01_quickstart.ipynb",
    "02_langchain_agent.ipynb",
    "03_llamaindex.ipynb",
    "04_hierarchy_and_decay.ipynb",
    "05_benchmarks.ipynb",
]
CELL_TIMEOUT_S = 180

# Run first in the kernel (not part of the notebooks): no network from Python. The kernel's own ZMQ traffic
# goes through libzmq, not Python sockets; Unix sockets stay allowed for the event loop's self-pipe.
OFFLINE_GUARD = """\
import pytest_socket
pytest_socket.disable_socket(allow_unix_socket=True)
"""

# The kernel's loopback ports are probed and connected from this process, so allow loopback explicitly
# (the suite's addopts already do; the marker keeps this true under a plain --disable-socket).
pytestmark = pytest.mark.allow_hosts(["127.0.0.1", "localhost", "::1"])


@pytest.fixture(scope="module")
def kernel_env(tmp_path_factory):
    """Environment for kernels of this interpreter, isolated from the user's Jupyter and IPython setup."""
    base = tmp_path_factory.mktemp("jupyter")
    # written straight into the prefix (install() stages it in a temporary "*_kernels" directory it leaves behind)
    kernelspec.write_kernel_spec(path=str(base / "share/jupyter/kernels/python3"))  # argv[0] = sys.executable
    spec = json.loads((base / "share/jupyter/kernels/python3/kernel.json").read_text())
    assert spec["argv"][0] == sys.executable
    env = {
        "JUPYTER_PATH": str(base / "share/jupyter"),
        "JUPYTER_RUNTIME_DIR": str(base / "runtime"),
        "JUPYTER_PLATFORM_DIRS": "1",
        "IPYTHONDIR": str(base / "ipython"),
        "MPLBACKEND": "Agg",
        "MPLCONFIGDIR": str(base / "matplotlib"),
        "PYDEVD_DISABLE_FILE_VALIDATION": "1",
    }
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        yield env
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def execute(nb, workdir: Path, *, guard: bool = True):
    if guard:
        nb.cells.insert(0, nbformat.v4.new_code_cell(OFFLINE_GUARD))
    client = nbclient.NotebookClient(
        nb, kernel_name="python3", timeout=CELL_TIMEOUT_S, resources={"metadata": {"path": str(workdir)}}
    )
    client.execute()
    return nb


def stream_text(cell) -> str:
    return "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream" and o.name == "stdout")


def test_tutorials_present():
    names = [p.name for p in NOTEBOOKS]
    assert set(TUTORIALS) <= set(names), f"missing notebooks: {sorted(set(TUTORIALS) - set(names))}"


def test_kernel_is_this_interpreter(kernel_env, tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell("import sys, matplotlib\nprint(sys.prefix)\nprint(matplotlib.get_backend())"),
        nbformat.v4.new_code_cell(
            "import socket\ntry:\n    socket.create_connection(('127.0.0.1', 9))\nexcept Exception as exc:\n"
            "    print(type(exc).__name__)"
        ),
    ]
    execute(nb, tmp_path)
    prefix, backend = stream_text(nb.cells[1]).split()
    assert Path(prefix).resolve() == Path(sys.prefix).resolve()
    assert backend.lower() == "agg"
    assert stream_text(nb.cells[2]).strip() == "SocketBlockedError"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs(path, kernel_env, tmp_path):
    nb = nbformat.read(path, as_version=4)
    started = time.perf_counter()
    execute(nb, tmp_path)
    elapsed = time.perf_counter() - started
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert not errors, errors
    print(f"{path.name}: {elapsed:.1f} s")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_committed_without_outputs(path):
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    dirty = [i for i, c in enumerate(nb.cells)
             if c.cell_type == "code" and (c.outputs or c.execution_count is not None)]
    assert not dirty, f"{path.name}: cells {dirty} have outputs or an execution count; clear them before committing"
    assert nb.metadata.get("kernelspec", {}).get("name") == "python3"
