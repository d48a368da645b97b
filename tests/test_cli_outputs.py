"""The command line's outputs pinned (issue 33: every output byte-identical across the refactor of the run commands,
except where docs/cli.md names a deliberate change). Stored in ``tests/cli_outputs/``:

* every command's ``--help``, byte for byte (argparse at 100 columns);
* the one-line errors of bad flags, byte for byte;
* the text and ``--json`` outputs of small ``pca``, ``otd``, ``lda`` and ``compare`` runs with every number written
  as ``#`` and runs of spaces as one (the numbers depend on the machine's rounding; the words, labels, order, keys,
  guarantee sentences and notes do not).

``python tests/test_cli_outputs.py`` rewrites the files from the ``dpcore`` it imports (to pin a deliberate change,
run it and name the change in docs/cli.md).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import sys
from pathlib import Path

import numpy as np
import pytest

HERE = Path(__file__).resolve().parent
STORED = HERE / "cli_outputs"

SMALL = {
    "pca": ["pca", "--sites", "3", "--site-size", "100", "--dim", "12", "--k", "2", "--runs", "2", "--algorithms",
            "cape", "cape-discrete", "conv", "nonpriv", "--workers", "1"],
    "otd": ["otd", "--model", "mog", "--d", "5", "--k", "2", "--sites", "3", "--ns", "200", "--runs", "1",
            "--algorithms", "cape", "cape-discrete", "conv", "nonpriv", "--workers", "1"],
    "otd_collusion": ["otd", "--model", "stm", "--d", "5", "--k", "2", "--sites", "4", "--ns", "200", "--runs", "1",
                      "--collusion", "1", "--algorithms", "cape", "conv", "--workers", "1"],
    "lda": ["lda", "--docs", "300", "--sites", "3", "--vocab", "20", "--topics", "3", "--doc-length", "20", "--runs",
            "1", "--eps", "30", "--configuration", "cape", "conv", "1", "3", "nonpriv"],
    "lda_curve": ["lda", "--docs", "300", "--sites", "3", "--vocab", "20", "--topics", "3", "--doc-length", "20",
                  "--runs", "1", "--eps", "10", "100", "--configuration", "cape", "pooled"],
    "compare": ["compare", "--family", "otd", "--set", "dim=5", "--set", "k=2", "--sites", "3", "--ns", "200",
                "--runs", "1", "--workers", "1"],
}
HELP = {"help": ["--help"], **{f"help_{c}": [c, "--help"] for c in ("design", "pca", "otd", "lda", "sweep", "plan",
                                                                     "compare")}}
ERRORS = {
    "pca_runs": ["pca", "--runs", "1000000000"],
    "pca_algorithm": ["pca", "--algorithms", "nope"],
    "otd_model": ["otd"],
    "otd_algorithm": ["otd", "--model", "mog", "--algorithms", "nope"],
    "otd_collusion": ["otd", "--model", "mog", "--collusion", "9"],
    "otd_vocabulary": ["otd", "--model", "stm", "--vocabulary", "words.txt"],
    "lda_topics": ["lda", "--topics", "60"],
    "lda_configuration": ["lda", "--configuration", "zz"],
    "lda_corpus": ["lda", "--corpus", "python-docs", "--vocab", "5"],
    "sweep_flag": ["sweep", "--family", "lda", "--dataset", "digits"],
    "sweep_model": ["sweep", "--family", "pca", "--model", "stm"],
    "sweep_preset": ["sweep", "--preset", "fig2b-mnist-eps", "--k", "3"],
}
_NUMBER = re.compile(r"[-+]?(?:(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d*)?|\.\d+)(?:e[-+]?\d+)?")


def masked(text: str) -> str:
    """Every number as ``#`` and every run of spaces as one."""
    return "\n".join(re.sub(r" +", " ", _NUMBER.sub("#", line)).rstrip() for line in text.splitlines()) + "\n"


def _run(argv: list[str]) -> tuple[int, str, str]:
    from dpcore.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:  # --help
            code = exc.code
    return int(code or 0), out.getvalue(), err.getvalue()


def capture(kind: str, name: str) -> str:
    """What is stored for one command: its exit code, stdout and stderr (masked for runs)."""
    argv = {"help": HELP, "error": ERRORS}.get(kind, SMALL)[name] + (["--json"] if kind == "json" else [])
    code, out, err = _run(argv)
    if kind in ("text", "json"):
        out, err = masked(out), masked(err)
    return f"exit {code}\n--- stdout\n{out}--- stderr\n{err}"


CASES = ([("help", n) for n in HELP] + [("error", n) for n in ERRORS] + [("text", n) for n in SMALL]
         + [("json", n) for n in SMALL])


@pytest.fixture(autouse=True)
def _columns(monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    monkeypatch.setenv("DPCORE_WORKERS", "1")


@pytest.mark.parametrize(("kind", "name"), CASES, ids=[f"{k}-{n}" for k, n in CASES])
def test_the_output_is_as_stored(kind, name):
    expected = (STORED / f"{kind}-{name}.txt").read_text(encoding="utf-8")
    assert capture(kind, name) == expected


def test_the_masked_json_still_parses_and_the_named_changes_hold():
    """The stored JSON is JSON once numbers are put back; ``otd --json`` has no hand-written ``privacy`` object and
    ``lda --json``'s rows no ``guarantee`` sentence (docs/cli.md, "Deliberate output changes")."""
    def parsed(name):
        text = (STORED / f"json-{name}.txt").read_text(encoding="utf-8").split("--- stdout\n")[1].split("--- stderr")[0]
        return json.loads(text.replace("#", "0"))

    assert "privacy" not in parsed("otd") and parsed("otd")["guarantees"]
    assert all("guarantee" not in row and "privacy" in row for row in parsed("lda")["results"])
    assert masked("a 1.5e-05 b  -3,000, 2 c") == "a # b #, # c\n" and np.isfinite(1.0)


if __name__ == "__main__":
    os.environ["COLUMNS"], os.environ["DPCORE_WORKERS"] = "100", "1"
    STORED.mkdir(exist_ok=True)
    os.chdir(HERE.parent)
    for kind, name in CASES if len(sys.argv) < 2 else [tuple(a.split("-", 1)) for a in sys.argv[1:]]:
        (STORED / f"{kind}-{name}.txt").write_text(capture(kind, name), encoding="utf-8")
        print(kind, name)
