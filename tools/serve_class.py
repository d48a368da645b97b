"""Serve the dashboard to a large class: several Streamlit processes behind nginx, which also serves the browser's
scripts itself. See docs/dashboard.md "Serving a class" for when this is worth it and what it buys (measured by
benchmarks/bench_classroom.py --servers N).

Run: ``.venv/bin/python tools/serve_class.py --servers 2 --port 8501 [--address 0.0.0.0]`` (needs nginx: Debian's
``apt-get install nginx``; this starts its own nginx with its own configuration and leaves the system's alone).
Ctrl-C stops everything it started.

* ``--servers`` processes of ``streamlit run app.py`` on free loopback ports, one core each at most (a script run
  holds its process's interpreter lock, so one process uses about one core however many visitors it has);
* nginx on ``--port``: the scripts, style sheets and fonts of Streamlit's front end (``/static/``, about 60 files
  and 2 MB compressed for a first visit) straight from disk, compressed once at start (``gzip_static``), so the
  Streamlit processes never serve them; everything else (the page, the health check, the websocket, uploads) to
  one of the processes, chosen by the browser's ``_streamlit_xsrf`` cookie (``hash ... consistent``): a
  visitor's session, its reconnections and its uploads all reach the process that holds its session state.
  The processes share one cookie secret, so the cookie every one of them sets is valid at all of them.
"""

from __future__ import annotations

import argparse
import gzip
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
NGINX = shutil.which("nginx") or "/usr/sbin/nginx"
MAX_SERVERS = 16  # more processes than a teaching machine has cores only adds memory (about 0.25 GB each)
COMPRESSED_SUFFIXES = (".js", ".css", ".json", ".svg", ".html", ".txt", ".map", ".ttf", ".wasm")
HEALTHY_WITHIN_S = 120.0

NGINX_CONF = """\
worker_processes {workers};
pid {tmp}/nginx.pid;
error_log {tmp}/error.log warn;
daemon off;
events {{ worker_connections 4096; }}
http {{
    include /etc/nginx/mime.types;
    default_type application/octet-stream;
    access_log off;
    sendfile on;
    client_body_temp_path {tmp}/body;
    proxy_temp_path {tmp}/proxy;
    fastcgi_temp_path {tmp}/fastcgi;
    uwsgi_temp_path {tmp}/uwsgi;
    scgi_temp_path {tmp}/scgi;
    client_max_body_size {upload_mb}m;
    map $http_upgrade $connection_upgrade {{ default upgrade; '' close; }}
    upstream cape {{
        hash $cookie__streamlit_xsrf consistent;
{servers}
    }}
    server {{
        listen {address}:{port};
        location /static/ {{
            alias {static}/;
            gzip_static on;
            expires 7d;
        }}
        location / {{
            proxy_pass http://cape;
            proxy_http_version 1.1;
            proxy_set_header Host $host;
            proxy_set_header Upgrade $http_upgrade;
            proxy_set_header Connection $connection_upgrade;
            proxy_read_timeout 1d;
            proxy_buffering off;
        }}
    }}
}}
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def compressed_static(into: Path) -> Path:
    """A copy of Streamlit's front-end folder ``static/static`` in ``into``: every file linked, and a ``.gz`` beside
    each compressible one (nginx's ``gzip_static`` sends it to browsers that accept gzip; compressing once here
    instead of per request)."""
    import streamlit

    source = Path(streamlit.__file__).parent / "static" / "static"
    for path in source.rglob("*"):
        if path.is_dir():
            continue
        target = into / path.relative_to(source)
        target.parent.mkdir(parents=True, exist_ok=True)
        os.symlink(path, target)
        if path.suffix in COMPRESSED_SUFFIXES:
            Path(f"{target}.gz").write_bytes(gzip.compress(path.read_bytes(), compresslevel=6, mtime=0))
    return into


def nginx_config(tmp: Path, static: Path, ports: list[int], port: int, address: str = "127.0.0.1",
                 workers: int = 1) -> str:
    """The nginx configuration of :data:`NGINX_CONF` for Streamlit processes on ``ports`` (loopback)."""
    from dpcore.limits import MAX_UPLOAD_MB

    servers = "\n".join(f"        server 127.0.0.1:{p};" for p in ports)
    return NGINX_CONF.format(tmp=tmp, static=static, servers=servers, port=port, address=address, workers=workers,
                             upload_mb=MAX_UPLOAD_MB)


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(url + "/_stcore/health", timeout=2) as r:
            return r.status == 200
    except OSError:
        return False


class ClassServers:
    """``n`` Streamlit processes of ``app`` and nginx in front of them on ``port``; a context manager that starts
    them and waits until the proxy answers, and stops all of them (by the process ids it started) on exit."""

    def __init__(self, n: int, port: int | None = None, *, app: Path = ROOT / "app.py", address: str = "127.0.0.1",
                 quiet: bool = True) -> None:
        if not 1 <= n <= MAX_SERVERS:
            raise ValueError(f"--servers must be from 1 to {MAX_SERVERS} (got {n})")
        if not os.path.exists(NGINX):
            raise FileNotFoundError("nginx not found: apt-get install nginx (Debian's package)")
        self.n, self.port, self.app, self.address, self.quiet = n, port or free_port(), app, address, quiet
        self.processes: list[subprocess.Popen] = []
        self.url = f"http://127.0.0.1:{self.port}"

    @property
    def streamlit_pids(self) -> list[int]:
        return [p.pid for p in self.processes[:-1]]

    def __enter__(self) -> ClassServers:
        self._tmp = tempfile.TemporaryDirectory(prefix="cape-class-")
        tmp = Path(self._tmp.name)
        tmp.chmod(0o755)  # nginx's workers (user nobody when started as root) read the static files from here
        out = subprocess.DEVNULL if self.quiet else None
        env = dict(os.environ, PYTHONPATH=str(ROOT), OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1",
                   STREAMLIT_SERVER_COOKIE_SECRET=secrets.token_hex(32))  # (Streamlit refuses it as a flag)
        ports = [free_port() for _ in range(self.n)]
        try:
            for port in ports:
                self.processes.append(subprocess.Popen(
                    [sys.executable, "-m", "streamlit", "run", str(self.app), "--server.headless", "true",
                     "--server.port", str(port), "--server.address", "127.0.0.1",
                     "--browser.gatherUsageStats", "false",
                     "--server.fileWatcherType", "none"],
                    cwd=ROOT, env=env, stdout=out, stderr=out))
            static = compressed_static(tmp / "static")
            conf = tmp / "nginx.conf"
            conf.write_text(nginx_config(tmp, static, ports, self.port, self.address, workers=min(self.n, 4)))
            self.processes.append(subprocess.Popen([NGINX, "-c", str(conf), "-p", str(tmp)], stdout=out,
                                                   stderr=out))
            deadline = time.monotonic() + HEALTHY_WITHIN_S
            for port in ports:
                while not _healthy(f"http://127.0.0.1:{port}"):
                    if time.monotonic() > deadline:
                        raise RuntimeError(f"a Streamlit process did not become healthy within {HEALTHY_WITHIN_S} s")
                    time.sleep(0.25)
            while not _healthy(self.url):
                if time.monotonic() > deadline or self.processes[-1].poll() is not None:
                    raise RuntimeError(f"nginx did not answer (see {tmp}/error.log)")
                time.sleep(0.1)
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc) -> None:
        for proc in reversed(self.processes):
            proc.terminate()
        for proc in self.processes:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        self.processes.clear()
        self._tmp.cleanup()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--servers", type=int, default=os.cpu_count() or 1,
                        help=f"Streamlit processes (1-{MAX_SERVERS}; default: one per core)")
    parser.add_argument("--port", type=int, default=8501, help="the port the class opens")
    parser.add_argument("--address", default="127.0.0.1", help="where nginx listens (0.0.0.0: every interface)")
    args = parser.parse_args()
    try:
        signal.signal(signal.SIGTERM, signal.default_int_handler)  # stop as on Ctrl-C, with the clean-up
        with ClassServers(args.servers, args.port, address=args.address, quiet=False):
            print(f"serving {args.servers} Streamlit processes behind nginx on http://{args.address}:{args.port} "
                  f"(Ctrl-C stops them)", flush=True)
            while True:
                time.sleep(3600)
    except KeyboardInterrupt:
        pass
    except (ValueError, FileNotFoundError, RuntimeError) as exc:
        print(f"serve_class: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
