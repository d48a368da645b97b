"""The hardened deployment (issue 23): what a stranger holding only the CA certificate can do against the SuperLink's
public address (nothing: no runs or nodes listed, no node registered, no Runtime API, a SuperNode with an
unregistered key refused), that sites answer only for the code they reviewed (a run whose code package differs
in one file is refused by every node and ends ``finished:failed``), that the SuperLink's database keeps the
registered nodes across a restart, and the operator's exit status (``capefed.ops.runner``).

Real processes on loopback: the SuperLink on 127.0.0.1 behind ``capefed.ops.gateway`` (also on 127.0.0.1 here; the
three-host test, tests/test_federated_hosts.py, puts it on another host's address)."""

from __future__ import annotations

import contextlib
import io
import json
import os
import pwd
import shutil
import ssl
import stat
import subprocess
import zipfile
from pathlib import Path

import httpx
import pytest
from capefed.ops import runner
from capefed.ops.certificates import make_security_files
from capefed.ops.demo import prepare_demo
from capefed.ops.deployment import (
    LOOPBACK,
    Tls,
    connection_text,
    gateway_command,
    superlink_command,
    supernode_command,
    worker_command,
    write_secret,
)
from capefed.ops.federation import APP_DIR, CONNECTION, Federation, _free_port, tagged_processes
from capefed.ops.gateway import REFUSAL
from capefed.ops.worker import code_problem, installed_files
from hypothesis import given
from hypothesis import strategies as st

RUN_TIMEOUT = 300.0


def _fab(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def test_a_site_answers_only_for_its_reviewed_code():
    """The code package must be exactly the reviewed release: every capefed source and the app's pyproject.toml,
    Flower's manifest aside; a changed, extra (anywhere in the package) or missing file is refused, naming it."""
    mine = installed_files()
    assert "capefed/app/siteflow.py" in mine and "capefed/ops/worker.py" in mine and "pyproject.toml" in mine
    same = dict(mine, **{".info/CONTENT": b"manifest"})
    assert code_problem(_fab(same)) is None
    changed = dict(same, **{"capefed/app/siteflow.py": mine["capefed/app/siteflow.py"] + b"\n# one more line\n"})
    assert "differs from this site's reviewed release in capefed/app/siteflow.py" in code_problem(_fab(changed))
    for extra in ("capefed/backdoor.py", "backdoor.py", "README.md", "capefed/data.bin", "tests/attack.py"):
        assert f"carries {extra}, which" in code_problem(_fab(dict(same, **{extra: b"print(1)\n"}))), extra
    pyproject = dict(same, **{"pyproject.toml": mine["pyproject.toml"].replace(b"capefed.app.server_app:app",
                                                                              b"backdoor:app")})
    assert "differs from this site's reviewed release in pyproject.toml" in code_problem(_fab(pyproject))
    missing = {k: v for k, v in same.items() if k != "capefed/app/checks.py"}
    assert "lacks capefed/app/checks.py" in code_problem(_fab(missing))
    assert "cannot be read" in code_problem(b"not a zip archive")


def _zip_variants(content: bytes) -> list[bytes]:
    """A valid archive cut, with a flipped byte, an unknown compression method and an encryption flag."""
    out = [content[: len(content) // 2], content[:-1]]
    flipped = bytearray(content)
    flipped[len(content) // 3] ^= 0xFF
    out.append(bytes(flipped))
    local = bytearray(content)
    local[8:10] = (99).to_bytes(2, "little")  # compression method of the first local header
    out.append(bytes(local))
    central = bytearray(content)
    at = central.find(b"PK\x01\x02")
    central[at + 8:at + 10] = (1).to_bytes(2, "little")  # the "encrypted" flag in the central directory
    out.append(bytes(central))
    return out


def test_unusual_archives_give_a_reason_not_an_error():
    for content in _zip_variants(_fab({"capefed/ops/worker.py": b"x" * 3000, "pyproject.toml": b"[project]"})):
        assert isinstance(code_problem(content), str)


@given(st.binary(max_size=4096))
def test_any_bytes_as_a_code_package_give_a_reason_not_an_error(content):
    assert isinstance(code_problem(content), str)


@given(st.dictionaries(st.from_regex(r"([a-z]{1,8}/)?[a-z_]{1,12}(\.py|\.toml|\.md)?", fullmatch=True),
                       st.binary(max_size=64), max_size=6))
def test_a_code_package_is_accepted_only_with_the_reviewed_files(files):
    mine = installed_files()
    problem = code_problem(_fab({**mine, **files}))
    changed = any(mine.get(name) != data for name, data in files.items())
    assert (problem is None) == (not changed), problem


def test_the_superlink_listens_on_loopback_and_the_gateway_alone_on_the_public_address(tmp_path):
    tls = Tls(ca=tmp_path / "ca.crt", certificate=tmp_path / "link.pem", key=tmp_path / "link.key")
    link = superlink_command(Path("/opt/capefed/venv/bin"), port=9092, tls=tls, database=tmp_path / "state.db")
    assert link[link.index("--host") + 1] == LOOPBACK and "--insecure" not in link
    assert "--enable-supernode-auth" in link and link[link.index("--database") + 1] == str(tmp_path / "state.db")
    assert "--disable-runtime-dependency-installation" in link
    gateway = gateway_command("python", listen="192.0.2.10:9093", upstream_port=9092, tls=tls)
    assert gateway[gateway.index("--upstream") + 1] == f"{LOOPBACK}:9092"
    node = supernode_command(Path("/bin"), superlink="192.0.2.10:9093", runtime_port=9094, node_config='role="site"',
                             ca=tls.ca, node_key=tmp_path / "key", secret_file=tmp_path / "secret")
    assert node[node.index("--isolation") + 1] == "process" and node[node.index("--host") + 1] == LOOPBACK
    assert "--superexec-auth-secret-file" in node and "--insecure" not in node
    worker = worker_command("python", runtime_port=9094, secret_file=tmp_path / "secret")
    assert worker[-4:] == ["--runtime", f"{LOOPBACK}:9094", "--secret-file", str(tmp_path / "secret")]


def test_trial_certificates_name_the_public_address_and_loopback(tmp_path, capsys):
    from capefed.ops.certificates import main  # noqa: PLC0415
    from cryptography import x509  # noqa: PLC0415

    me = pwd.getpwuid(os.geteuid()).pw_name
    assert main(["--host", "198.18.0.1", "--out", str(tmp_path), "--owner", me, "north", "east"]) == 0
    assert all(stat.S_IMODE((tmp_path / f).stat().st_mode) == 0o600 for f in ("superlink.key", "node-north"))
    certificate = x509.load_pem_x509_certificate((tmp_path / "superlink.pem").read_bytes())
    names = certificate.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert {str(a) for a in names.get_values_for_type(x509.IPAddress)} == {"198.18.0.1", "127.0.0.1"}
    assert (tmp_path / "node-north.pub").read_text().startswith("ecdsa-sha2-nistp384 ")
    assert "superlink.pem" in capsys.readouterr().out


def test_keys_and_secrets_are_private_from_the_moment_their_files_exist(tmp_path, monkeypatch):
    """With every later chmod made a no-op and a umask that lets anyone read, the demo's identity and ledger keys, the
    trial CA's private keys and a task secret are still their owner's alone: each file was created private, never
    written while others could open it (a reader that opened it then would keep its descriptor after a chmod)."""
    monkeypatch.setattr(os, "chmod", lambda *args, **kwargs: None)
    umask = os.umask(0)
    try:
        prepare_demo(tmp_path / "demo", noise="helper-free", dropouts=0, ledger_rounds=10)
        make_security_files(tmp_path / "security", ["north"])
        secret = write_secret(tmp_path / "homes" / "north" / "task-secret")
    finally:
        os.umask(umask)
    private = [*(tmp_path / "demo" / "keys").glob("*.key"), *(tmp_path / "demo" / "ledgers").glob("*.key"),
               tmp_path / "security" / "superlink.key", tmp_path / "security" / "node-north", secret]
    assert len(private) == 10
    modes = {p.relative_to(tmp_path).as_posix(): oct(stat.S_IMODE(p.stat().st_mode)) for p in private}
    assert set(modes.values()) == {"0o600"}, modes
    assert stat.S_IMODE((tmp_path / "security" / "ca.crt").stat().st_mode) == 0o666  # the umask was in force


def test_a_replaced_file_others_could_read_is_private_before_its_new_contents_go_in(tmp_path, monkeypatch):
    from capefed.ops.opsfiles import write_private  # noqa: PLC0415

    path = tmp_path / "task-secret"
    path.write_bytes(b"old")
    path.chmod(0o644)
    modes, write = [], os.write

    def recording(fd: int, data: bytes) -> int:  # the file's mode at the moment its new bytes go in
        modes.append(stat.S_IMODE(os.fstat(fd).st_mode))
        return write(fd, data)

    monkeypatch.setattr(os, "write", recording)
    write_private(path, b"new secret", None, replace=True)
    assert modes == [0o600] and path.read_bytes() == b"new secret"


def _fake_flwr(tmp_path: Path, status: str) -> Path:
    """A stand-in for the flwr command: ``run`` prints what flwr prints, ``ls`` the run's status as JSON."""
    script = tmp_path / "flwr"
    script.write_text("#!/bin/sh\n"
                      'if [ "$1" = run ]; then echo "Successfully started run 42"; echo "capePCA: done"; exit 0; fi\n'
                      f"echo '{json.dumps({'success': True, 'runs': [{'run-id': '42', 'status': status}]})}'\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return script


@pytest.mark.parametrize(("status", "code"), [("finished:completed", 0), ("finished:failed", 1),
                                              ("finished:stopped", 1)])
def test_the_operators_run_exits_non_zero_unless_the_run_completed(tmp_path, status, code, capsys):
    flwr = _fake_flwr(tmp_path, status)
    assert runner.main(["app", "link", "--flwr", str(flwr)]) == code
    assert f"capefed.ops.runner: run 42 {status}" in capsys.readouterr().out


def _flwr(federation: Federation, home: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(federation.bin_dir / "flwr"), *args], env=federation.env(home), capture_output=True,
                          text=True, timeout=120)


def _node_ids(federation: Federation) -> set[str]:
    listed = _flwr(federation, federation.workdir / "homes" / "flwr-run", "supernode", "list", CONNECTION,
                   "--format", "json")
    assert listed.returncode == 0, listed.stdout + listed.stderr
    nodes = json.loads(listed.stdout)["nodes"]
    return {str(n["node-id"]) for n in nodes}


def _tampered_app(tmp_path: Path) -> Path:
    """The Flower app with one line added to the site's code: what an operator might upload."""
    app = tmp_path / "tampered-app"
    shutil.copytree(APP_DIR, app, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    with open(app / "capefed" / "app" / "siteflow.py", "a") as file:
        file.write("\n# a change the sites did not review\n")
    return app


@pytest.mark.federated
@pytest.mark.timeout(3 * RUN_TIMEOUT)
def test_a_stranger_with_the_ca_certificate_is_refused_and_state_survives_a_restart(tmp_path):
    demo = prepare_demo(tmp_path / "data")
    names = [str(n["name"]) for n in demo.nodes]
    security = make_security_files(tmp_path / "security", [*names, "stranger"])
    federation = Federation(tmp_path, demo.nodes, security=security)
    with contextlib.ExitStack() as stack:
        stack.callback(federation.stop)
        federation.start()
        registered = _node_ids(federation)
        assert len(registered) == len(names)

        # a stranger holding the CA certificate, pointing flwr at the public address
        home = tmp_path / "homes" / "stranger-cli"
        home.mkdir(parents=True)
        (home / "config.toml").write_text(connection_text("outside", federation.fleet_address,
                                                          security.ca_certificate))
        for args in (["ls", "outside"], ["supernode", "list", "outside"],
                     ["supernode", "register", str(security.node_keys["stranger"][1]), "outside"]):
            done = _flwr(federation, home, *args)
            assert done.returncode != 0 and "404" in done.stdout + done.stderr, (args, done.stdout, done.stderr)
        verify = ssl.create_default_context(cafile=str(security.ca_certificate))
        with httpx.Client(base_url=f"https://{federation.fleet_address}", verify=verify, timeout=30) as client:
            for path in ("/v1/control/list-runs", "/v1/runtime/acquire-task", "/v1/runtime/pull-task-input",
                         "/v1/fleet/../control/list-runs", "/health"):
                reply = client.post(path, content=b"")
                assert reply.status_code == 404 and reply.text == REFUSAL, path
            assert client.get("/docs").status_code == 404
        assert _node_ids(federation) == registered  # nothing was registered

        # a stranger's SuperNode: its key was never registered
        stranger = federation._start("stranger", supernode_command(
            federation.bin_dir, superlink=federation.fleet_address, runtime_port=_free_port(),
            node_config='role="site" name="stranger"', ca=security.ca_certificate,
            node_key=security.node_keys["stranger"][0], worker=False))
        assert stranger.wait(timeout=120) != 0
        assert "Failed to activate SuperNode" in (tmp_path / "logs" / "stranger.log").read_text()
        assert _node_ids(federation) == registered

        # a run whose code package differs from the sites' reviewed capefed in one line: every node refuses it
        out = tmp_path / "outcome.json"
        federation.run_app(dict(demo.run_config, algorithms="capePCA", out=str(out), timeout=60.0),
                           RUN_TIMEOUT, app_dir=_tampered_app(tmp_path))
        (outcome,) = json.loads(out.read_text())["rounds"]
        assert outcome["status"] != "released" and outcome["aggregates"] == {}
        assert "differs from this site's reviewed release in capefed/app/siteflow.py" in json.dumps(outcome)
        assert federation.run_status == "finished:failed"
        worker_log = (tmp_path / "logs" / "north-worker.log").read_text()
        assert "refused run" in worker_log and "capefed/app/siteflow.py" in worker_log

        # the SuperLink restarts (as after a reboot): the registered nodes are still there
        federation.restart_superlink()
        assert _node_ids(federation) == registered
    assert tagged_processes(federation.tag) == []
    assert os.path.exists(tmp_path / "state" / "superlink.db")
