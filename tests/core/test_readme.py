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


def test_readme_time_and_truth(capsys):
    (where, code), = examples("time")
    run(code, where)
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "We finally relocated to Denver!"
    assert "Maya (superseded 10 June 2023): I live in Boston with my sister." in out
    assert "Maya (15 April 2023): I ran my first marathon last Saturday!" in out
    assert out[-3:] == ["2023-01-05 I live in Boston with my sister.",
                        "2023-04-15 I ran my first marathon last Saturday!",
                        "2023-06-10 We finally relocated to Denver!"]
