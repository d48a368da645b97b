"""A consortium follows docs/federated.md's deployment guide, every step, literally (issue 31): an aggregator and three
sites, each host a network namespace with its own files (tests/consortium_hosts.py), every service started as its
unit would start it (only the unit's environment, as ``capefed``, from ``/``). The study is proposed, reviewed and
signed by the three sites, dry-run (the ledgers record nothing) and run; every site ends with the published result,
the audit of its own views, a verified ledger that spent what it released, and a log that says so in words. Then a
run of a study whose digest differs from the one the sites signed is refused by every site, naming the check; no
file the run wrote holds a key, the task secret or a ledger key; every key is readable by ``capefed`` alone."""

from __future__ import annotations

import json
import os
import pwd
import re
import shutil
import stat
import time
from pathlib import Path

import numpy as np
import pytest
from capefed.ops.demo import prepare_demo
from consortium_hosts import ROOT, Block, Host, guide_blocks, mount_points
from cryptography.hazmat.primitives import serialization
from test_federated_hosts import three_hosts

pytestmark = pytest.mark.federated

DOC = ROOT / "docs" / "federated.md"
SITES = {"north": ("b", 800, "1.0"), "east": ("c", 600, "0.5"), "south": ("d", 397, "1.0")}
"""Each site's host, N (capePCA) and eps per round: the values of north's example replaced in its blocks."""
EXAMPLE = "192.0.2.10"
UNITS = re.compile(r"^systemctl enable --now ((?:capefed-[a-z]+ ?)+)$")


def _for_site(text: str, name: str) -> str:
    _, n, eps = SITES[name]
    return text.replace("north", name).replace("pca-n=800", f"pca-n={n}").replace("eps=1.0", f"eps={eps}")


class Consortium:
    """The four hosts and what the test records while it follows the guide."""

    def __init__(self, hosts, tmp: Path):
        self.address = hosts.addresses["a"]
        self.logs = tmp / "logs"
        self.logs.mkdir()
        opt = tmp / "opt"
        opt.mkdir()
        self.hosts = {"aggregator": Host("aggregator", hosts.namespaces["a"], tmp / "aggregator", opt)}
        for name, (letter, _, _) in SITES.items():
            self.hosts[name] = Host(name, hosts.namespaces[letter], tmp / name, opt)
        for host in self.hosts.values():
            for folder in ("etc-capefed", "var-lib-capefed", "srv-capefed", "etc-systemd-system"):
                (host.root / folder).mkdir(parents=True)
        self.outputs: list[tuple[str, str, str]] = []

    def sites(self) -> list[Host]:
        return [self.hosts[name] for name in SITES]

    def run(self, host: Host, text: str) -> None:
        """A block's commands on ``host``; each ``systemctl enable --now`` line starts its units as systemd would."""
        chunk: list[str] = []
        for line in [*text.replace(EXAMPLE, self.address).splitlines(), None]:
            match = UNITS.match(line.strip()) if line is not None else None
            if line is not None and not match:
                chunk.append(line)  # blank lines too: a here-document keeps them
                continue
            if any(chunk):
                self._script(host, "\n".join(chunk) + "\n")
            chunk = []
            for unit in match.group(1).split() if match else []:
                host.start_unit(unit, self.logs)

    def _script(self, host: Host, text: str) -> str:
        if "capefed.ops.nodes list" in text:
            return self._online(host, text)
        done = host.run(text, stdin="yes\n", network="install.sh" not in text)
        self.outputs.append((host.name, text, done.stdout + done.stderr))
        assert done.returncode == 0, f"{host.name}: {text}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        return done.stdout

    def _online(self, host: Host, text: str) -> str:
        """The node list, asked until every site is online by name (the SuperNodes connect within seconds)."""
        deadline = time.monotonic() + 180
        while True:
            done = host.run(text)
            if done.returncode == 0 and all(re.search(rf"^{n}\s+online", done.stdout, re.M) for n in SITES):
                return done.stdout
            if time.monotonic() > deadline:
                raise AssertionError(f"not every site online by name:\n{done.stdout}{done.stderr}\n" + self.tails())
            time.sleep(2)

    def copy(self, line: str) -> None:
        source, target = (part.strip() for part in line.split("->"))
        (src_host, src), (dst_host, dst) = source.split(":", 1), target.split(":", 1)
        destination = self.hosts[dst_host].folder(dst)
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(self.hosts[src_host].folder(src), destination)

    def follow(self, block: Block) -> None:
        if block.where == "copy":
            for line in filter(None, (x.strip() for x in block.text.splitlines())):
                for name in SITES if "north" in line else [None]:
                    self.copy(line if name is None else _for_site(line, name))
        elif block.where == "on-aggregator":
            self.run(self.hosts["aggregator"], block.text)
        elif block.where == "on-each-site":
            for host in self.sites():
                self.run(host, _for_site(block.text, host.name))
        else:
            for host in self.hosts.values():
                self.run(host, block.text)

    def tails(self) -> str:
        out = []
        for path in sorted(self.logs.glob("*.log")):
            out.append(f"--- {path.name}\n" + "\n".join(path.read_text(errors="replace").splitlines()[-15:]))
        return "\n".join(out)

    def stop(self) -> None:
        for host in self.hosts.values():
            host.stop_units()


def _ledgers(consortium: Consortium) -> dict[str, bytes]:
    return {h.name: h.folder("/var/lib/capefed/ledger.json").read_bytes() for h in consortium.sites()}


def _secrets(consortium: Consortium) -> dict[str, bytes]:
    """Every secret this consortium holds that no export, result or log may contain."""
    found = {}
    for host in consortium.hosts.values():
        task = host.folder("/var/lib/capefed/task-secret").read_bytes()
        found[f"{host.name} task secret"], found[f"{host.name} task secret (hex)"] = task, task.hex().encode()
        for key in ("identity.key", "ledger.key", "superlink.key", "node.key"):
            path = host.folder(f"/etc/capefed/{key}")
            if not path.exists():
                continue
            text = path.read_text()
            if "PRIVATE KEY" in text:  # an EC key (PEM or OpenSSH): its private scalar
                loaded = (serialization.load_ssh_private_key if "OPENSSH" in text else
                          serialization.load_pem_private_key)(text.encode(), password=None)
                raw = loaded.private_numbers().private_value.to_bytes(48, "big")
            else:
                raw = bytes.fromhex(text.strip())
            found[f"{host.name} {key}"], found[f"{host.name} {key} (hex)"] = raw, raw.hex().encode()
    return found


def _written_files(consortium: Consortium) -> list[Path]:
    """Every file the services and the operators' commands wrote: the hosts' state folders (the task secret aside)
    and every unit's log."""
    files = list(consortium.logs.glob("*.log"))
    for host in consortium.hosts.values():
        files += [p for p in host.folder("/var/lib/capefed").rglob("*") if p.is_file() and p.name != "task-secret"]
    return files


def _private(path: Path) -> tuple[str, int]:
    info = path.stat()
    return pwd.getpwuid(info.st_uid).pw_name, stat.S_IMODE(info.st_mode)


@pytest.mark.timeout(3600)
@pytest.mark.skipif(os.geteuid() != 0, reason="network and mount namespaces and the service user need root")
@pytest.mark.skipif(not all(map(shutil.which, ("ip", "unshare", "setpriv", "mount", "useradd", "python3.11"))),
                    reason="needs ip, unshare, setpriv, mount, useradd and python3.11 (the hosts and install.sh)")
def test_a_consortium_follows_the_guide_approves_dry_runs_and_runs_a_study(tmp_path):
    demo = prepare_demo(tmp_path / "demo")  # the digits, split 800 / 600 / 397 among north, east and south
    blocks = guide_blocks(DOC)
    assert sum(b.where == "copy" for b in blocks) >= 4 and any("mode=\"dry-run\"" in b.text for b in blocks)
    with mount_points(), three_hosts("abcd") as hosts:
        if hosts.kind != "network namespaces":
            pytest.skip(f"this machine cannot make network namespaces (the hosts would be {hosts.kind})")
        consortium = Consortium(hosts, tmp_path)
        for node in demo.nodes[1:]:
            data = consortium.hosts[node["name"]].folder(f"/srv/capefed/{node['name']}.csv")
            shutil.copy(node["pca-data"], data)
            data.chmod(0o644)
        before_dry = None
        try:
            for block in blocks:
                if 'mode="dry-run"' in block.text:
                    before_dry = _ledgers(consortium)
                consortium.follow(block)
                if 'mode="dry-run"' in block.text:  # the dry run wrote nothing into any ledger
                    assert _ledgers(consortium) == before_dry
            dead = [f"{h.name} {u}" for h in consortium.hosts.values() for u, (p, _) in h.units.items()
                    if p.poll() is not None]
            assert not dead, (dead, consortium.tails())
            _check_results(consortium)
            _a_study_the_sites_did_not_sign(consortium)
        except BaseException:
            print(consortium.tails())
            raise
        finally:
            consortium.stop()
        _check_keys_and_secrets(consortium)


def _check_results(consortium: Consortium) -> None:
    aggregator = consortium.hosts["aggregator"]
    for name in ("dry-run.json", "outcome.json"):
        (outcome,) = json.loads(aggregator.folder(f"/var/lib/capefed/{name}").read_text())["rounds"]
        assert outcome["status"] == "released", outcome["reason"]
        assert outcome["delivered"] == sorted(SITES) and outcome["took_part"] == sorted(SITES)
    components = np.asarray(outcome["outputs"]["components"])
    assert components.shape == (64, 5)
    listed = next(out for host, text, out in consortium.outputs if "capefed.ops.roster show" in text)
    assert all(name in listed for name in SITES)
    for host in consortium.sites():
        results = {json.loads(p.read_text())["mode"]: json.loads(p.read_text())
                   for p in host.folder("/var/lib/capefed/results").glob("*.json")}
        assert set(results) == {"dry-run", "real"}
        real = results["real"]
        assert real["status"] == "released" and np.array_equal(np.asarray(real["outputs"]["components"]), components)
        views = real["audit"]["A"]["views"]
        assert real["audit"]["A"]["released"] and views and all(v["ok"] and v["eps_eff"] <= v["eps"] for v in views)
        assert "aggregator" in {v["view"] for v in views}
        verify = next(out for h, text, out in consortium.outputs if h == host.name and "ledger verify" in text)
        assert "verified (" in verify
        shown = next(out for h, text, out in consortium.outputs if h == host.name and "ledger show" in text)
        assert re.search(r"round \S+/capePCA/0 \(capePCA, study [0-9a-f]{16}\.\.\.\): stage A spent", shown), shown
        assert "approved study" in shown and "1 round(s), 0 not settled" in shown
        log = (consortium.logs / f"{host.name}-capefed-worker.log").read_text()
        assert f"site {host.name}: this round spent eps = " in log and f"site {host.name}: its ledger: eps = " in log
        assert "dry run (synthetic data): its ledger records nothing" in log


def _a_study_the_sites_did_not_sign(consortium: Consortium) -> None:
    """The aggregator's operator changes one field of the approved study (the data's description) and keeps the sites'
    approvals: every site refuses the round, naming the check; the run ends non-zero; no ledger changes."""
    aggregator = consortium.hosts["aggregator"]
    approved = aggregator.folder("/var/lib/capefed/study-approved.json")
    doc = json.loads(approved.read_text())
    doc["study"]["algorithms"]["capePCA"]["data"] += " (and more)"
    (approved.parent / "study-altered.json").write_text(json.dumps(doc))
    before = _ledgers(consortium)
    done = aggregator.run("python -m capefed.ops.runner federated consortium --run-config 'study=\"/var/lib/capefed/"
                          "study-altered.json\" roster=\"/etc/capefed/roster.json\" run=1 "
                          "out=\"/var/lib/capefed/altered.json\"'")
    assert done.returncode == 1, done.stdout[-2000:] + done.stderr[-2000:]
    (outcome,) = json.loads(aggregator.folder("/var/lib/capefed/altered.json").read_text())["rounds"]
    assert outcome["status"] != "released" and outcome["outputs"] == {}
    for name in SITES:
        assert f"site {name}: it did not sign study " in outcome["reason"], outcome["reason"]
    assert _ledgers(consortium) == before


def _check_keys_and_secrets(consortium: Consortium) -> None:
    for host in consortium.hosts.values():
        private = ["/var/lib/capefed/task-secret"]
        private += [f"/etc/capefed/{k}" for k in ("identity.key", "node.key", "ledger.key", "superlink.key")]
        for path in private:
            file = host.folder(path)
            if file.exists():
                owner, mode = _private(file)
                assert owner == "capefed" and mode & 0o077 == 0, (host.name, path, owner, oct(mode))
    secrets = _secrets(consortium)
    assert len(secrets) >= 20
    written = _written_files(consortium)
    assert {"outcome.json", "message-log.json", "dry-run.json", "ledger.json"} <= {p.name for p in written}
    for path in written:
        content = path.read_bytes()
        leaked = [what for what, secret in secrets.items() if secret in content]
        assert not leaked, (path, leaked)
        if path.suffix not in (".log", ".json"):  # the SuperLink's database and cache hold the code package's sources
            continue
        text = content.decode(errors="replace")
        assert not re.search(r"seed\W{0,3}(=|:)\s*\"?[0-9a-f]", text, re.I), (path, "a seed's value")
        if path.suffix == ".json":
            assert not list(_seeds(json.loads(text))), (path, list(_seeds(json.loads(text))))


def _seeds(value, where=""):
    """Every field of a JSON document whose name holds "seed" and whose value is not null (where, value)."""
    if isinstance(value, dict):
        for key, inner in value.items():
            if "seed" in key.lower() and inner not in (None, "", [], {}):
                yield f"{where}/{key}", inner
            yield from _seeds(inner, f"{where}/{key}")
    elif isinstance(value, list):
        for i, inner in enumerate(value):
            yield from _seeds(inner, f"{where}/{i}")
