"""`pip install .` into a fresh virtual environment, and the library works there and not from the clone (issue 19):
the examples of docs/python-api.md run and print what the page shows, the command reads the bundled data and
verifies every stored result (package data), only dpcore's pinned dependencies are installed (no dashboard, no
plotly: the figures' extra), and a figure without plotly is refused before any work.

The package is built from a copy of what `pip install .` reads (pyproject.toml, README.md, dpcore/), so the build
never writes into the clone while other tests read it; dependencies come pinned from requirements.txt (constraints)
through the package registry or pip's cache. Marked ``install``: about 30 s with a warm cache."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import pytest
from conftest import ROOT

from dpcore.experiments.stored import stored_names

pytestmark = pytest.mark.install

PIN = re.compile(r"^([A-Za-z0-9_.-]+)==(\S+)$")


def _pins() -> dict[str, str]:
    out = {}
    for line in (ROOT / "requirements.txt").read_text().splitlines():
        found = PIN.match(line.split("#", 1)[0].strip())
        if found:
            out[found.group(1).lower().replace("_", "-")] = found.group(2)
    return out


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """A virtual environment with dpcore installed by pip from a copy of the clone's sources."""
    where = tmp_path_factory.mktemp("install")
    source = where / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, source / name)
    shutil.copytree(ROOT / "dpcore", source / "dpcore", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    venv = where / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    python = venv / "bin" / "python"
    env = {"PATH": f"{venv / 'bin'}:/usr/local/bin:/usr/bin:/bin", "HOME": os.environ.get("HOME", str(where)),
           "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    for key in ("PIP_FIND_LINKS", "PIP_CERT", "PIP_DEFAULT_TIMEOUT", "PIP_INDEX_URL", "SSL_CERT_FILE"):
        if key in os.environ:
            env[key] = os.environ[key]
    # --no-compile: no byte-code for the thousands of files of numpy, scipy and pandas (half of the install's CPU);
    # Python compiles what the checks import when they import it
    done = subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                           "--no-compile", "--require-virtualenv", "-c", str(ROOT / "requirements.txt"), str(source)],
                          capture_output=True, text=True, timeout=840, env=env, cwd=where)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    return python, env, where


def _run(installed, *args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    python, env, where = installed
    return subprocess.run([str(python), "-I", *args], capture_output=True, text=True, timeout=timeout, env=env,
                          cwd=where)


def test_the_python_api_page_runs_from_the_installed_package(installed):
    done = _run(installed, str(ROOT / "tools" / "python_api_doc.py"), str(ROOT / "docs" / "python-api.md"))
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
    used = done.stdout.strip().splitlines()[-1].removeprefix("dpcore: ")
    assert used.startswith(str(installed[0].parents[1])) and "site-packages" in used, used
    assert not used.startswith(str(ROOT))


def test_the_installed_command_reads_the_package_data(installed):
    python, env, where = installed
    done = subprocess.run([str(python.parent / "dpcore"), "pca", "--dataset", "digits", "--sites", "3", "--k", "5",
                           "--runs", "2", "--json"], capture_output=True, text=True, timeout=300, env=env, cwd=where)
    assert done.returncode == 0 and '"algorithm": "cape"' in done.stdout, done.stderr[-3000:]
    stored = _run(installed, "-c", "from dpcore.experiments.stored import stored_names; print(stored_names())")
    assert stored.returncode == 0 and stored.stdout.strip() == str(stored_names()), stored.stderr[-3000:]
    typed = _run(installed, "-c", "import dpcore, pathlib; p = pathlib.Path(dpcore.__file__).parent; "
                 "print((p / 'py.typed').is_file(), (p / '__init__.pyi').is_file(), len(dpcore.__all__))")
    assert typed.stdout.split()[:2] == ["True", "True"], typed.stdout + typed.stderr


def test_only_the_pinned_library_dependencies_are_installed_and_figures_say_what_they_need(installed):
    listed = _run(installed, "-m", "pip", "list", "--format", "freeze")
    versions = dict(line.split("==") for line in listed.stdout.split())
    packages = {name.lower().replace("_", "-") for name in versions} - {"dpcore", "pip", "setuptools"}
    pins = _pins()
    assert {"numpy", "scipy", "pandas", "randomgen"} <= packages <= set(pins), packages - set(pins)
    assert all(versions[name] == pins[name] for name in versions if name in pins)
    assert not packages & {"plotly", "streamlit", "flwr", "altair", "pyarrow"}
    python, env, where = installed
    done = subprocess.run([str(python.parent / "dpcore"), "sweep", "--preset", "fig2a-synthetic-eps", "--quick",
                           "--runs", "1", "--html", str(where / "fig.html")], capture_output=True, text=True,
                          timeout=300, env=env, cwd=where)
    assert done.returncode == 2 and "pip install 'dpcore[figures]'" in done.stderr, done.stderr[-2000:]
    assert not (where / "fig.html").exists()
