"""A long-running ClientApp process for one SuperNode: ``python -m capefed.ops.worker --runtime 127.0.0.1:9094``.

Flower 1.41 starts a fresh ``flwr-clientapp`` process for every message a SuperNode receives (about 2.5 CPU seconds
of imports: flwr, numpy, scipy, dpcore), unless the SuperNode runs with ``--isolation process``: then it starts no
executor of its own and waits for one to ask its Runtime API for tasks (``AcquireTask``, the call ``flower-superexec``
makes). This worker is that executor, and it answers every task in its own process, with the imports done once:
acquire a task, pull its message and context (``flwr.supernode.runtime.run_clientapp.pull_task_input``, what
``flwr-clientapp`` calls), answer with the ClientApp, push the reply and the context, ask again.

It runs the site's own code: the ``capefed`` installed beside it (the reviewed package the site installed), never
the code package (FAB) the aggregator's operator uploaded with the run. Before it answers a run it checks that the
FAB carries exactly the reviewed release, file by file (:func:`code_problem`): every file of the package (Flower's own
manifest ``.info/CONTENT`` aside) must be one of the reviewed files with the same SHA-256 - the installed capefed
sources and the app's ``pyproject.toml`` - and none may be missing; an extra module anywhere, a changed configuration
or a data file is refused, naming the file. (Flower's own ``--trusted-entities`` needs FABs signed through the Flower
platform, which a self-hosted SuperLink does not provide: a SuperNode with it refuses every run of ``flwr run``.)

``python -m capefed.ops.worker`` is a small supervisor: the worker itself runs in a child process (``--serve``), and a
child that dies (killed in the middle of a reply, out of memory) is started again after a pause, so the node answers
again without anyone restarting it by hand. The task the dead child had claimed is answered by the SuperNode with
Flower's "ClientApp crashed" error once its heartbeat lapses (``capefed.ops.supernode`` makes that 20 s, and drops a
reply the child handed over without its contents); the aggregator has counted the site as silent by then (its own
deadline). A task ends only after its last heartbeat was answered, and a call the SuperNode refuses ends the task, never
the worker (:func:`_task_retries`).

The Runtime API's ``AcquireTask`` can be protected by a shared secret (``--superexec-auth-secret-file`` on the
SuperNode, ``--secret-file`` here): without it any local process could take the SuperNode's tasks.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import io
import json
import logging
import os
import signal
import struct
import subprocess
import sys
import threading
import time
import tomllib
import zipfile
import zlib
from collections.abc import Callable, Mapping
from pathlib import Path

from ..app.pacing import pause

__all__ = ["APP_PYPROJECT", "CODE_PACKAGE", "DASHBOARD_PACKAGES", "FAB_METHODS", "MAX_FAB_BYTES", "MAX_FAB_MEMBERS",
           "POLL_SECONDS", "FabError", "check_install", "code_digests", "code_problem", "fab_files", "installed_digest",
           "installed_files", "main", "secret_from_file", "serve", "supervise"]

POLL_SECONDS = 0.25
"""The worker's shortest wait between its requests for a task when none is waiting (Flower's SuperExec asks every
1 s); it grows with the time since the last task (:func:`capefed.app.pacing.pause`) up to POLL_LONGEST."""
POLL_LONGEST = 1.0
"""The worker's longest wait between requests for a task (reached after 10 s without one)."""
HEARTBEAT_SECONDS = 3.0
"""Seconds between a running task's heartbeats: well inside the 10 s a claimed task first lives and the 2 x 10 s each
heartbeat extends it by under ``capefed.ops.supernode`` (2 x 30 s under ``flower-supernode``)."""
RESTART_SECONDS = 1.0
"""Pause before the supervisor starts a worker that died; doubled (up to MAX_RESTART_SECONDS) while it keeps dying
within STABLE_SECONDS of its start."""
MAX_RESTART_SECONDS = 30.0
STABLE_SECONDS = 30.0
HEARTBEAT_CALL_SECONDS = 5.0
"""Longest wait for one heartbeat's answer (the task's end waits for it)."""
TASK_CALL_SECONDS = 60.0
"""How long one Runtime API call of a task is tried again while the SuperNode cannot be reached."""
RETRY_STATUS = frozenset({502, 503, 504})
"""HTTP statuses of a task's call that are tried again (as Flower's own retries do); any other error ends the call."""
STOP_SECONDS = 10.0
"""Seconds the supervisor gives its worker to stop after SIGTERM before it kills it."""
MAX_FAB_BYTES = 8 * 1024 * 1024
"""A code package larger than this is refused before it is unpacked."""
MAX_FAB_MEMBERS = 2000
"""Members of a code package (the app has about 40 files), counted from the archive's end record before its central
directory is parsed."""
FAB_METHODS = {zipfile.ZIP_STORED: "stored", zipfile.ZIP_DEFLATED: "deflated"}
"""Compression methods a code package may use (``flwr build`` writes deflated members); bzip2, LZMA and unknown
methods are refused before anything is decompressed."""
MAX_SECRET_BYTES = 4096
"""Largest ``--secret-file`` (the SuperNode's shared secret for AcquireTask)."""
CODE_PACKAGE = "capefed"
"""The package whose sources a run's code package must carry unchanged."""
PACKAGE_DIR = Path(__file__).resolve().parents[1]
"""Where the installed ``capefed`` is (this module is ``capefed/ops/worker.py``)."""
APP_PYPROJECT = "app-pyproject.toml"
"""The app's pyproject.toml as installed inside the package (federated/pyproject.toml's wheel force-include): the
reviewed copy of the FAB's ``pyproject.toml``."""
FLOWER_MANIFEST = ".info/CONTENT"
"""The one file of a FAB that is Flower's, not the app's: its list of the app's files and their hashes."""

log = logging.getLogger("capefed.ops.worker")


def _canonical(name: str, data: bytes) -> bytes:
    """What a file's digest is taken of: its bytes, except for ``pyproject.toml``, which ``flwr run`` parses and writes
    again into the code package (without its comments): there the canonical JSON of its parsed content, so a changed
    value is a changed file and a comment is not."""
    if name != "pyproject.toml":
        return data
    try:
        return json.dumps(tomllib.loads(data.decode("utf-8")), sort_keys=True).encode()
    except (UnicodeDecodeError, tomllib.TOMLDecodeError, TypeError, ValueError, RecursionError):
        return data


def code_digests(files: Mapping[str, bytes]) -> dict[str, str]:
    """SHA-256 of every file (:func:`_canonical`), by its path inside the code package."""
    return {name: hashlib.sha256(_canonical(name, data)).hexdigest() for name, data in files.items()}


def installed_files() -> dict[str, bytes]:
    """The reviewed release, by the path each file has in a code package: every Python source of the installed
    ``capefed`` (``capefed/<path>``) and the app's ``pyproject.toml`` (the copy installed in the package, or, run from
    a checkout, ``federated/pyproject.toml``)."""
    package = PACKAGE_DIR
    files = {f"{CODE_PACKAGE}/{p.relative_to(package).as_posix()}": p.read_bytes()
             for p in sorted(package.rglob("*.py")) if "__pycache__" not in p.parts}
    for pyproject in (package / APP_PYPROJECT, package.parent / "pyproject.toml"):
        if pyproject.is_file():
            files["pyproject.toml"] = pyproject.read_bytes()
            break
    return files


def installed_digest() -> str:
    """One SHA-256 over the reviewed release (each file's path and digest, in order): what the parties of a consortium
    compare after installing (``python -m capefed.ops.worker --check-install``)."""
    lines = "".join(f"{name} {digest}\n" for name, digest in sorted(code_digests(installed_files()).items()))
    return hashlib.sha256(lines.encode()).hexdigest()


DASHBOARD_PACKAGES = ("streamlit", "plotly", "altair", "pydeck", "pyarrow")
"""Packages of the dashboard that a party's environment must not hold."""


def check_install() -> str:
    """Import every party's entry point (worker, ClientApp, ServerApp, gateway, runner) and refuse an environment
    with a dashboard package or without the app's reviewed pyproject.toml; returns the line ``install.sh`` prints."""
    import importlib  # noqa: PLC0415
    import importlib.util  # noqa: PLC0415

    present = [name for name in DASHBOARD_PACKAGES if importlib.util.find_spec(name) is not None]
    if present:
        raise SystemExit(f"this environment holds dashboard packages a party does not need: {', '.join(present)}")
    for module in ("app.client_app", "app.server_app", "ops.gateway", "ops.runner"):
        importlib.import_module(f"{CODE_PACKAGE}.{module}")
    files = installed_files()
    if "pyproject.toml" not in files:
        raise SystemExit(f"the installed {CODE_PACKAGE} has no {APP_PYPROJECT} (the app's reviewed pyproject.toml)")
    return f"{installed_digest()}  {CODE_PACKAGE} ({len(files)} files in {PACKAGE_DIR})"


class FabError(ValueError):
    """A code package that cannot be read; the message names the check that failed."""


_END = b"PK\x05\x06"
_END_SIZE = 22


def _member_count(content: bytes) -> int:
    """The number of members the archive's end-of-central-directory record declares (the last one; ZIP64 archives
    declare 0xFFFF and are refused: no code package needs 65,535 members)."""
    at = content.rfind(_END, max(0, len(content) - _END_SIZE - 0xFFFF))
    if at < 0 or len(content) < at + _END_SIZE:
        raise FabError("the code package is not a zip archive (no end-of-central-directory record: not a zip, or "
                       "truncated)")
    entries, directory = struct.unpack("<HI", content[at + 10:at + 16])
    if entries == 0xFFFF or directory > len(content):
        raise FabError("the code package's central directory is damaged or ZIP64 (it declares "
                       f"{entries:,} members in {directory:,} bytes)")
    return entries


def _checked_members(archive: zipfile.ZipFile) -> list[zipfile.ZipInfo]:
    """The archive's members after the checks that need no decompression: count, names, encryption, method,
    declared sizes."""
    members = archive.infolist()
    if len(members) > MAX_FAB_MEMBERS:
        raise FabError(f"the code package has {len(members):,} members; at most {MAX_FAB_MEMBERS:,} are accepted")
    seen: set[str] = set()
    total = 0
    for info in members:
        name = info.filename[:120]
        if info.filename in seen:
            raise FabError(f"the code package holds the member {name!r} twice")
        seen.add(info.filename)
        if info.flag_bits & 0x1:
            raise FabError(f"the code package's member {name!r} is encrypted; a code package is not")
        if info.compress_type not in FAB_METHODS:
            raise FabError(f"the code package's member {name!r} uses compression method {info.compress_type}; "
                           f"only {' and '.join(FAB_METHODS.values())} members are accepted")
        total += info.file_size
        if total > MAX_FAB_BYTES:
            raise FabError(f"the code package unpacks to more than {MAX_FAB_BYTES:,} bytes (a zip bomb or not a "
                           "code package)")
    return members


def fab_files(content: bytes) -> dict[str, bytes]:
    """The files of a FAB (a zip archive), bounded by MAX_FAB_BYTES (compressed and unpacked) and MAX_FAB_MEMBERS;
    raises FabError naming the check for anything a code package cannot be: not a zip, truncated or damaged (a CRC
    that does not match), a zip bomb, too many members, a name that is not UTF-8 where the archive says it is, an
    encrypted member, a compression method other than stored or deflated."""
    if not isinstance(content, (bytes, bytearray)):
        raise FabError(f"the code package must be bytes (got {type(content).__name__})")
    if len(content) > MAX_FAB_BYTES:
        raise FabError(f"the code package has {len(content):,} bytes; at most {MAX_FAB_BYTES:,} are accepted")
    count = _member_count(bytes(content))
    if count > MAX_FAB_MEMBERS:
        raise FabError(f"the code package declares {count:,} members; at most {MAX_FAB_MEMBERS:,} are accepted")
    out: dict[str, bytes] = {}
    try:
        with zipfile.ZipFile(io.BytesIO(content)) as archive:
            for info in _checked_members(archive):
                if info.is_dir():
                    continue
                with archive.open(info) as handle:
                    data = handle.read(MAX_FAB_BYTES + 1)
                if len(data) != info.file_size:
                    raise FabError(f"the code package's member {info.filename[:120]!r} does not unpack to the size "
                                   "the archive declares")
                out[info.filename] = data
    except FabError:
        raise
    except UnicodeDecodeError as exc:
        raise FabError(f"the code package has a member name that is not UTF-8 although the archive says it is "
                       f"({exc.reason} at byte {exc.start})") from None
    except (zipfile.BadZipFile, EOFError, zlib.error) as exc:
        raise FabError(f"the code package is damaged or truncated: {str(exc)[:200]}") from None
    except Exception as exc:  # noqa: BLE001 - zipfile parses hostile bytes; any failure of it is a refusal
        raise FabError(f"the code package cannot be unpacked ({type(exc).__name__}: {str(exc)[:200]})") from None
    return out


def code_problem(fab_content: bytes, installed: Mapping[str, bytes] | None = None) -> str | None:
    """Why this site refuses to answer for a run whose code package is ``fab_content``, or None: the package must
    unpack (:func:`fab_files`; every failure a refusal naming the check), every file of the package but Flower's
    manifest must be a file of the reviewed release with the same SHA-256, and no reviewed file may be missing."""
    try:
        shipped = code_digests({k: v for k, v in fab_files(fab_content).items() if k != FLOWER_MANIFEST})
    except FabError as exc:
        return f"the run's code package cannot be read: {exc}"
    mine = code_digests(dict(installed_files() if installed is None else installed))
    for name in sorted(set(shipped) | set(mine)):
        shown = name if name.isprintable() else repr(name)
        if name not in mine:
            return f"the run's code package carries {shown[:200]}, which this site's reviewed release does not have"
        if name not in shipped:
            return f"the run's code package lacks {shown} of this site's reviewed release"
        if shipped[name] != mine[name]:
            return (f"the run's code package differs from this site's reviewed release in {shown} "
                    f"(SHA-256 {shipped[name][:16]}... instead of {mine[name][:16]}...)")
    return None


def _client(runtime: str, interceptors: list, retry_invoker: object | None = None) -> object:
    from flwr.supercore.retry import make_simple_http_retry_invoker  # noqa: PLC0415
    from flwr.supercore.runtime import RuntimeHttpClient  # noqa: PLC0415

    return RuntimeHttpClient.from_server_address(server_address=runtime, insecure=True, root_certificates=None,
                                                 interceptors=interceptors,
                                                 retry_invoker=retry_invoker or make_simple_http_retry_invoker())


def _task_retries() -> object:
    """Retries for the calls of one task: a lost connection or a 502/503/504 is tried again for TASK_CALL_SECONDS;
    any other refusal ends the call with its error. Flower's own HTTP retries (``make_simple_http_retry_invoker``)
    answer a 401 by sending SIGINT to the whole process: for a task whose claim the SuperNode has just ended (a
    heartbeat that crossed the task's end, a claim that lapsed) that stopped the worker 3 s later, wherever it was in
    its next task."""
    import httpx  # noqa: PLC0415
    from flwr.supercore.retry import RetryInvoker, exponential  # noqa: PLC0415

    def give_up(exc: Exception) -> bool:
        return isinstance(exc, httpx.HTTPStatusError) and exc.response.status_code not in RETRY_STATUS

    return RetryInvoker(lambda: exponential(max_delay=4), (httpx.TransportError, httpx.HTTPStatusError),
                        max_tries=None, max_time=TASK_CALL_SECONDS, should_giveup=give_up)


def _heartbeats(runtime: str, token: str, stop: threading.Event) -> threading.Thread:
    """Send the task's heartbeat every HEARTBEAT_SECONDS until ``stop``, each a single call of at most
    HEARTBEAT_CALL_SECONDS on its own connection, never tried again and never a reason to stop the worker (a claim
    whose heartbeats keep failing lapses by itself). The caller joins the thread before it ends the task: a heartbeat
    still under way when the SuperNode ends the task would be refused."""
    from flwr.proto.runtime_pb2 import SendTaskHeartbeatRequest  # noqa: PLC0415
    from flwr.supercore.interceptors import RuntimeTokenHttpInterceptor  # noqa: PLC0415
    from flwr.supercore.runtime import RuntimeHttpClient  # noqa: PLC0415

    def beat() -> None:
        # plain HTTP to the SuperNode on this host: verify=False spares httpx building a certificate store for each
        # task's heartbeat client (about 20 ms of CPU per task with Flower's default verify=True), never used
        with RuntimeHttpClient(f"http://{runtime}", interceptors=[RuntimeTokenHttpInterceptor(token)],
                               timeout=HEARTBEAT_CALL_SECONDS, verify=False) as client:
            while not stop.wait(HEARTBEAT_SECONDS):
                with contextlib.suppress(Exception):
                    client.SendTaskHeartbeat(SendTaskHeartbeatRequest())

    thread = threading.Thread(target=beat, daemon=True)
    thread.start()
    return thread


def run_task(runtime: str, token: str, app: Callable, checked: dict[str, str | None]) -> str:
    """Answer one task: pull its message, check the run's code package (once per FAB), answer with ``app``, push
    the reply and the context. Returns a line saying what happened."""
    from flwr.app import Error, Message  # noqa: PLC0415
    from flwr.common.constant import ErrorCode, SubStatus  # noqa: PLC0415
    from flwr.supercore.interceptors import RuntimeTokenHttpInterceptor  # noqa: PLC0415
    from flwr.supernode.runtime.run_clientapp import (  # noqa: PLC0415
        pull_task_input,
        push_message,
        push_task_output,
    )

    client = _client(runtime, [RuntimeTokenHttpInterceptor(token)], _task_retries())
    stop = threading.Event()
    context = None
    status, details, line = SubStatus.FAILED, "the task failed before its message was read", "failed"
    done = SubStatus.FAILED  # what the task ends with once its reply is pushed: FAILED unless the ClientApp answered
    beating = _heartbeats(runtime, token, stop)
    try:
        message, context, run, fab = pull_task_input(client)
        if fab.hash_str not in checked:
            checked[fab.hash_str] = code_problem(fab.content)
            if checked[fab.hash_str] is None:
                log.info("run %d: checked its code package (FAB %s...): every file is the reviewed release installed "
                         "here (digest %s...)", run.run_id, fab.hash_str[:12], installed_digest()[:16])
        problem = checked[fab.hash_str]
        if problem is not None:
            reply = Message(Error(code=ErrorCode.INVALID_FAB, reason=problem), reply_to=message)
            details, line = problem, f"refused run {run.run_id}: {problem}"
        else:
            try:
                reply = app(message=message, context=context)
                done, details = SubStatus.COMPLETED, ""
                line = f"answered {message.metadata.message_type} of run {run.run_id}"
            except Exception as exc:  # the ClientApp failed: the aggregator gets an Error naming it
                reason = f"{type(exc).__name__}: {exc}"
                reply = Message(Error(code=ErrorCode.CLIENT_APP_RAISED_EXCEPTION, reason=reason),
                                reply_to=message)
                details, line = reason, f"the ClientApp failed on run {run.run_id}: {reason}"
        push_message(client, reply, context)
        status = done
    except Exception as exc:  # a Runtime API failure: the task ends FAILED, which capefed.ops.supernode answers
        status = SubStatus.FAILED  # with Flower's "ClientApp stopped responding" if no reply reached it
        details, line = f"{type(exc).__name__}: {exc}", f"task failed: {type(exc).__name__}: {exc}"
    finally:
        stop.set()
        beating.join()  # no heartbeat may reach the SuperNode after the task's end
        push_task_output(client=client, context=context, sub_status=status, details=details)
        client.close()
    return line


def serve(runtime: str, *, secret: bytes | None = None, poll: float = POLL_SECONDS,
          stop: threading.Event | None = None, app: Callable | None = None) -> None:
    """Ask the SuperNode's Runtime API at ``runtime`` for ClientApp tasks and answer them with ``app`` (default: the
    installed, reviewed ClientApp; :mod:`capefed.ops.dropout` wraps it), until ``stop`` is set."""
    from flwr.proto.runtime_pb2 import AcquireTaskRequest  # noqa: PLC0415
    from flwr.supercore.constant import TaskType  # noqa: PLC0415
    from flwr.supercore.interceptors import SuperExecAuthHttpInterceptor  # noqa: PLC0415

    if app is None:
        from ..app.client_app import app  # noqa: PLC0415  (the installed, reviewed ClientApp)

    stop = stop or threading.Event()
    interceptors = [] if secret is None else [
        SuperExecAuthHttpInterceptor(master_secret=secret, protected_methods={"/flwr.proto.Runtime/AcquireTask"})]
    client = _client(runtime, interceptors)
    checked: dict[str, str | None] = {}
    log.info("worker ready: answering the SuperNode at %s with capefed from %s", runtime,
             PACKAGE_DIR)
    news = time.monotonic()  # the end of the last task: the wait between requests grows with the quiet since
    try:
        while not stop.is_set():
            try:
                res = client.AcquireTask(AcquireTaskRequest(supported_task_types=[TaskType.CLIENT_APP]))
            except Exception as exc:  # the SuperNode is starting or restarting: ask again
                log.debug("no Runtime API yet: %s", exc)
                stop.wait(max(poll, 1.0))
                continue
            if res.HasField("task") and res.token:
                log.info("task %d: %s", res.task.task_id, run_task(runtime, res.token, app, checked))
                news = time.monotonic()
                continue
            stop.wait(pause(time.monotonic() - news, poll, max(poll, POLL_LONGEST)))
    finally:
        client.close()


def supervise(argv: list[str], stop: threading.Event) -> int:
    """Run ``python -m capefed.ops.worker --serve ARGV`` and start it again whenever it dies, until ``stop`` is set."""
    pause = RESTART_SECONDS
    while not stop.is_set():
        started = time.monotonic()
        child = subprocess.Popen([sys.executable, "-m", "capefed.ops.worker", "--serve", *argv])
        while child.poll() is None and not stop.wait(0.2):
            pass
        if stop.is_set():
            child.terminate()
            try:
                child.wait(timeout=STOP_SECONDS)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()
            return 0
        pause = RESTART_SECONDS if time.monotonic() - started > STABLE_SECONDS else min(2 * pause,
                                                                                         MAX_RESTART_SECONDS)
        how = f"signal {-child.returncode}" if child.returncode < 0 else f"exit code {child.returncode}"
        log.warning("the worker (pid %d) ended with %s; starting it again in %g s", child.pid, how, pause)
        stop.wait(pause)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m capefed.ops.worker", description=__doc__.split("\n\n")[0])
    parser.add_argument("--runtime",
                        help="the SuperNode's Runtime API, host:port (its --host and --port; keep it on 127.0.0.1)")
    parser.add_argument("--check-install", action="store_true",
                        help="check this environment (every party's imports, no dashboard package) and print the "
                             "SHA-256 digest of the reviewed release installed here")
    parser.add_argument("--secret-file", help="the SuperNode's --superexec-auth-secret-file")
    parser.add_argument("--poll", type=float, default=POLL_SECONDS,
                        help="seconds between requests for a task (default: %(default)s)")
    parser.add_argument("--serve", action="store_true",
                        help="answer tasks in this process (what the supervisor runs); without it this process "
                             "supervises one that does and starts it again if it dies")
    raw = list(sys.argv[1:] if argv is None else argv)
    args = parser.parse_args(raw)
    if args.check_install:
        print(check_install())
        return 0
    if not args.runtime:
        parser.error("--runtime is required")
    if not 0.01 <= args.poll <= 60:
        parser.error(f"--poll {args.poll}: between 0.01 and 60 seconds")
    secret = secret_from_file(parser, args.secret_file)
    logging.basicConfig(level=logging.INFO, stream=sys.stdout, format="%(asctime)s %(name)s: %(message)s")
    logging.getLogger("httpx").setLevel(logging.WARNING)  # not a line per request for a task
    stop = threading.Event()
    if not args.serve:
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, lambda *_: stop.set())
        return supervise([a for a in raw if a != "--serve"], stop)
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: _stopping(stop))
    serve(args.runtime, secret=secret, poll=args.poll, stop=stop)
    return 0


def secret_from_file(parser: argparse.ArgumentParser, path: str | None) -> bytes | None:
    """The Runtime API's shared secret from ``--secret-file`` (None without one); a missing, oversized or empty file
    ends the command with one line naming the flag (``parser.error``)."""
    if not path:
        return None
    from ..app.dp import InputError, read_file  # noqa: PLC0415

    try:
        secret = read_file(path, MAX_SECRET_BYTES, "the secret file")
    except InputError as exc:
        parser.error(f"--secret-file: {exc}")
    if not secret:
        parser.error("--secret-file: the secret is empty")
    return secret


def _stopping(stop: threading.Event) -> None:
    """Stop asking for tasks; if the worker is still inside Flower's retries (its SuperNode already gone) after
    STOP_SECONDS / 3, end the process."""
    stop.set()
    timer = threading.Timer(STOP_SECONDS / 3, os._exit, args=(0,))
    timer.daemon = True
    timer.start()


if __name__ == "__main__":
    raise SystemExit(main())
