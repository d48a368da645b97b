"""Each party packaged with only its own code and dependencies (issues 19 and 23): the Flower app's pinned
dependency set excludes the dashboard's and agrees with requirements.txt, the install script builds a party's
environment with nothing more and the installed capefed is the reviewed one (its digest), the service units pass
``systemd-analyze verify`` and keep every API but the gateway's on 127.0.0.1, the container file passes hadolint and
bakes no task secret into the image."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from capefed.ops.worker import DASHBOARD_PACKAGES, installed_digest

ROOT = Path(__file__).resolve().parents[1]
DEPLOY = ROOT / "federated" / "deploy"
UNITS = sorted((DEPLOY / "systemd").glob("*.service"))
_PIN = re.compile(r"^([A-Za-z0-9_.-]+)==(\S+)$")


def _pins(path: Path) -> dict[str, str]:
    out = {}
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line and not line.startswith("-r"):
            found = _PIN.match(line)
            assert found, f"{path.name}: {line!r} is not pinned with =="
            out[found.group(1).lower().replace("_", "-")] = found.group(2)
    return out


def test_a_party_installs_no_dashboard_package_and_the_same_pins_as_the_project():
    party = _pins(ROOT / "federated" / "requirements.txt")
    project = _pins(ROOT / "requirements.txt")
    dashboard = set(project) - set(party)
    assert {"streamlit", "plotly", "altair", "pydeck", "pyarrow", "pillow", "watchdog"} <= dashboard
    assert not set(DASHBOARD_PACKAGES) & set(party)
    assert {"flwr", "cryptography", "numpy", "scipy", "pandas", "randomgen", "pycryptodome"} <= set(party)
    assert set(party) <= set(project), "every party package is one of the project's"
    assert {name: project[name] for name in party} == party, "the same versions as requirements.txt"


def test_every_dependency_of_dpcore_is_in_a_partys_pinned_set():
    """install.sh installs dpcore with --no-deps: whatever dpcore's metadata requires must be a party pin already."""
    declared = dict(_PIN.match(d).groups() for d in tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "dependencies"])
    party = _pins(ROOT / "federated" / "requirements.txt")
    assert declared and all(party.get(name) == version for name, version in declared.items()), declared


def test_the_flower_app_declares_its_own_pinned_dependencies():
    project = tomllib.loads((ROOT / "federated" / "pyproject.toml").read_text())["project"]
    declared = dict(_PIN.match(d).groups() for d in project["dependencies"])
    party = _pins(ROOT / "federated" / "requirements.txt")
    assert set(declared) == {"flwr", "cryptography", "numpy", "scipy", "pandas", "randomgen", "pycryptodome"}
    assert all(party[name] == version for name, version in declared.items())


def _exec_start(unit: Path) -> list[str]:
    (line,) = [x for x in unit.read_text().splitlines() if x.startswith("ExecStart=")]
    return line.removeprefix("ExecStart=").split()


def test_only_the_gateway_listens_beyond_loopback():
    commands = {unit.stem: _exec_start(unit) for unit in UNITS}
    assert set(commands) == {"capefed-superlink", "capefed-gateway", "capefed-supernode", "capefed-worker"}
    link = commands["capefed-superlink"]
    assert link[link.index("--host") + 1] == "127.0.0.1" and "--database" in link and "--insecure" not in link
    assert "--enable-supernode-auth" in link
    node = commands["capefed-supernode"]
    assert node[node.index("--host") + 1] == "127.0.0.1" and node[node.index("--isolation") + 1] == "process"
    assert node[node.index("--superexec-auth-secret-file") + 1] == commands["capefed-worker"][-1]
    gateway = commands["capefed-gateway"]
    assert gateway[gateway.index("--upstream") + 1] == f"127.0.0.1:{link[link.index('--port') + 1]}"
    assert node[node.index("--port") + 1] == commands["capefed-worker"][-3].rpartition(":")[2]


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze is not installed")
def test_the_service_units_verify(tmp_path):
    """``systemd-analyze verify`` with the units' /opt/capefed/venv replaced by this environment (it checks that
    every command exists)."""
    for unit in UNITS:
        (tmp_path / unit.name).write_text(unit.read_text().replace("/opt/capefed/venv", sys.prefix))
    done = subprocess.run(["systemd-analyze", "verify", *[str(tmp_path / u.name) for u in UNITS]],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_container_file_passes_hadolint_and_copies_what_exists():
    dockerfile = DEPLOY / "docker" / "Dockerfile"
    hadolint = Path(sys.prefix) / "bin" / "hadolint"
    done = subprocess.run([str(hadolint), str(dockerfile)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    for line in dockerfile.read_text().splitlines():
        if line.startswith("COPY "):
            for source in line.split()[1:-1]:
                assert (ROOT / source).exists(), source
    (install,) = [line for line in dockerfile.read_text().splitlines() if "install.sh" in line and "RUN" in line]
    # as root (a build is) without it install.sh makes the task secret, which would be in the image for every party
    assert "federated/deploy/install.sh /opt/capefed --environment-only" in install


def test_the_guides_container_task_secret_command_makes_32_private_bytes_once(tmp_path):
    """The container variant's step that makes a site's task secret in its volume (docs/federated.md), run here
    without Docker in the folder the container's working directory would be: 32 bytes, the owner's alone, kept by a
    second run."""
    guide = (ROOT / "docs" / "federated.md").read_text()
    (command,) = re.findall(r"^ +sh -c '(.*task-secret.*)'$", guide, re.M)
    secret, made = tmp_path / "task-secret", []
    for _ in range(2):
        done = subprocess.run(["sh", "-c", command], cwd=tmp_path, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        made.append(secret.read_bytes())
    assert len(made[0]) == 32 and made[1] == made[0]
    assert secret.stat().st_mode & 0o777 == 0o600


@pytest.mark.federated
@pytest.mark.timeout(900)
def test_the_install_script_builds_a_party_environment_with_nothing_of_the_dashboard(tmp_path):
    """federated/deploy/install.sh into a fresh directory (packages from the registry; pip's cache makes a second
    run fast), then a capePCA round with the parties as function calls in that environment. --environment-only: the
    suite may run as root, and the host (its users, /etc, /var/lib, systemd's units) is not the test's to change."""
    prefix = tmp_path / "party"
    # PIP_NO_COMPILE=0 is pip's --no-compile (pip reads a "no-" option's variable as the value of the positive option):
    # no byte-code for the party's 6,700 files, half of the install's CPU; what the round imports is compiled on import
    done = subprocess.run(["sh", str(DEPLOY / "install.sh"), str(prefix), "--environment-only"], capture_output=True,
                          text=True, timeout=840, env={"PATH": "/usr/local/bin:/usr/bin:/bin", "PYTHON": sys.executable,
                                                       "HOME": str(Path.home()), "PIP_NO_COMPILE": "0"})
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    assert "--environment-only: no service user" in done.stderr and "made: user" not in done.stdout
    wrote = [p for p in ("build", "dpcore.egg-info") if (ROOT / p).exists()]
    assert not wrote, f"the install wrote {wrote} into the checkout"
    digest = done.stdout.split()[0]
    assert digest == installed_digest() == (prefix / "capefed.sha256").read_text().split()[0]
    python = prefix / "venv" / "bin" / "python"
    listed = subprocess.run([str(python), "-m", "pip", "list", "--format", "freeze"], capture_output=True, text=True,
                            timeout=120)
    installed = {line.split("==")[0].lower().replace("_", "-") for line in listed.stdout.split()}
    allowed = set(_pins(ROOT / "federated" / "requirements.txt")) | {"dpcore", "capefed", "pip", "setuptools"}
    assert installed <= allowed, installed - allowed
    assert not installed & {"streamlit", "plotly", "altair", "pyarrow"}
    round_in_memory = (
        "import sys\n"
        "from capefed.ops.demo import prepare_demo, run_in_memory\n"
        f"(o,) = run_in_memory(prepare_demo({str(tmp_path / 'data')!r}), ('capePCA',))\n"
        "print(o.status, sorted(m for m in sys.modules if m.split('.')[0] in ('streamlit', 'plotly')))\n")
    ran = subprocess.run([str(python), "-c", round_in_memory], capture_output=True, text=True, timeout=300,
                         cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr[-3000:]
    assert ran.stdout.split("\n")[0] == "released []"


@pytest.mark.parametrize("args", [["--bogus"], ["--environment-only", "more"]])
def test_the_install_script_refuses_an_unknown_option_before_it_does_anything(tmp_path, args):
    prefix = tmp_path / "party"
    done = subprocess.run(["sh", str(DEPLOY / "install.sh"), str(prefix), *args], capture_output=True, text=True,
                          timeout=60, env={"PATH": "/usr/local/bin:/usr/bin:/bin"})
    assert done.returncode == 2 and "usage: install.sh PREFIX [--environment-only]" in done.stderr, done.stderr
    assert done.stderr.count("\n") == 1 and not prefix.exists()
