"""Serving a class (issue 25): what keeps a burst of sessions cheap stays switched on, and the proxy configuration
of tools/serve_class.py is one nginx accepts. The burst itself is measured by benchmarks/bench_classroom.py."""

from __future__ import annotations

import gc
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from dpcore.limits import MAX_UPLOAD_MB
from pages.shared import navigation

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

import serve_class  # noqa: E402


def test_no_full_collection_after_every_run():
    """Streamlit's post-run full collection walked every open session's state on every run: switched off."""
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert config["runner"]["postScriptGC"] is False


def test_a_run_that_imported_modules_freezes_them_and_a_later_run_does_not(monkeypatch):
    monkeypatch.setattr(navigation, "_frozen_modules", 0)
    gc.unfreeze()
    try:
        garbage = [[]]
        garbage[0].append(garbage)  # a reference cycle: collected first, not frozen
        del garbage
        navigation._freeze_new_imports()
        frozen = gc.get_freeze_count()
        assert frozen > 10_000  # every module, function and class imported so far
        assert navigation._frozen_modules == len(sys.modules)
        young = [object.__new__(type("Young", (), {}))]  # created after the freeze: still in the collector's sight
        assert any(obj is young for obj in gc.get_objects())
        navigation._freeze_new_imports()  # nothing imported since: no second freeze
        assert gc.get_freeze_count() == frozen
    finally:
        gc.unfreeze()  # leave the test process as it was


def test_the_proxy_configuration_routes_every_process_and_keeps_the_upload_limit(tmp_path):
    conf = serve_class.nginx_config(tmp_path, tmp_path / "static", [40001, 40002, 40003], 8501)
    assert conf.count("server 127.0.0.1:400") == 3
    assert "hash $cookie__streamlit_xsrf consistent;" in conf  # a session's websocket and uploads stay together
    assert f"client_max_body_size {MAX_UPLOAD_MB}m;" in conf
    assert "proxy_set_header Upgrade $http_upgrade;" in conf


@pytest.mark.skipif(shutil.which("nginx") is None and not Path(serve_class.NGINX).exists(),
                    reason="nginx is not installed (Debian's package; only tools/serve_class.py needs it)")
def test_nginx_accepts_the_proxy_configuration(tmp_path):
    (tmp_path / "static").mkdir()
    conf = tmp_path / "nginx.conf"
    conf.write_text(serve_class.nginx_config(tmp_path, tmp_path / "static", [40001, 40002], 8501))
    check = subprocess.run([serve_class.NGINX, "-t", "-c", str(conf), "-p", str(tmp_path)], capture_output=True,
                           text=True, timeout=60)
    assert check.returncode == 0, check.stderr


def test_too_many_or_no_servers_are_refused_before_anything_starts():
    for n in (0, serve_class.MAX_SERVERS + 1):
        with pytest.raises(ValueError, match="--servers must be from 1 to"):
            serve_class.ClassServers(n)
