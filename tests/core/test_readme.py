"""The README's opening example runs as written."""

import os

from tests.readme_examples import examples, run


def test_readme_quickstart(tmp_path, capsys):
    (where, code), = examples("quickstart")
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        run(code, where)
    finally:
        os.chdir(cwd)
    out = capsys.readouterr().out
    assert "Atlas Removals" in out and "Oren" in out
    assert (tmp_path / "agent.db").exists()
