"""The privacy-utility page's live sweep: run in a background thread of the session (dpcore's run_sweep with its worker
processes), its progress in a job record the page's fragment polls every POLL_SECONDS, and Stop."""

from __future__ import annotations

import threading
import time
from typing import Any

import streamlit as st

from dpcore.experiments import SweepSpec, cached_result, run_sweep
from dpcore.validation import InputError
from dpcore.workers import worker_count

__all__ = ["JOB_KEY", "POLL_SECONDS", "duration", "request_stop", "start_job"]

JOB_KEY = "pu_job"
POLL_SECONDS = 1.0


def duration(seconds: float) -> str:
    if seconds < 1:
        return "under a second"
    if seconds < 90:
        return f"{seconds:.0f} s"
    return f"{seconds / 60:.1f} min"


def _sweep_thread(job: dict[str, Any], spec: SweepSpec, workers: int) -> None:
    """Runs in a background thread: the sweep, reporting every step into ``job`` (no Streamlit calls here)."""

    def progress(done: int, total: int, label: str) -> None:
        job.update(done=done, total=total, label=label, last=time.perf_counter())

    try:
        job["result"] = run_sweep(spec, progress=progress, should_stop=lambda: job["stopped"], workers=workers)
    except InputError as exc:
        job["error"] = exc
    except Exception as exc:  # noqa: BLE001 - shown as an internal error by show_error, never a traceback
        job["error"] = exc
    finally:
        job["seconds"] = time.perf_counter() - job["start"]
        job["finished"] = True


def start_job(spec: SweepSpec, estimate: float | None) -> None:
    """Start ``spec`` in a background thread (a complete cached result is taken at once)."""
    workers = worker_count(spec.runs)
    job: dict[str, Any] = {"spec": spec.to_json(), "done": 0, "total": 0, "label": "starting", "stopped": False,
                           "finished": False, "result": None, "error": None, "start": time.perf_counter(),
                           "seconds": 0.0, "estimate": estimate, "workers": workers}
    hit = cached_result(spec)
    if hit is not None:
        job.update(result=hit, finished=True, seconds=hit.seconds, done=1, total=1)
    else:
        threading.Thread(target=_sweep_thread, args=(job, spec, workers), daemon=True,
                         name="privacy-utility sweep").start()
    st.session_state[JOB_KEY] = job


def request_stop() -> None:
    job = st.session_state.get(JOB_KEY)
    if job is not None:
        job["stopped"] = True
