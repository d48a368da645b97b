"""The Protocol walk-through's section on a real federated run: load the message log a run wrote
(``make federated`` -> ``federated-run/message-log.json``, or an uploaded one) and show every message beside the
one the protocol lists for the same design, differences highlighted. Reading, checking and comparing the log is
``dpcore.federation`` (``parse_message_log``, ``round_protocol``, ``compare_with_protocol``); this module only
draws."""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd
import streamlit as st

from dpcore.federation import LoggedRound, MessageLog, compare_with_protocol, parse_message_log, round_protocol
from dpcore.limits import MAX_MESSAGE_LOG_BYTES
from dpcore.textio import MissingFile, read_file
from dpcore.validation import InputError
from pages.shared.widgets import show_error

__all__ = ["DEPLOYMENT_LOG_VARIABLE", "LOCAL_LOG", "show_run_log"]

LOCAL_LOG = Path(__file__).resolve().parents[2] / "federated-run" / "message-log.json"
"""Where ``make federated`` writes the message log of its run."""
DEPLOYMENT_LOG_VARIABLE = "CAPEFED_MESSAGE_LOG"
"""A deployment's message log: the file its aggregator writes (run configuration ``log=``, docs/federated.md), read
when the dashboard runs with this environment variable set to its path."""
_SOURCES = ("the last local run", "an uploaded message log")
_DEPLOYMENT = "the deployment's log"
_STATUS_COLOURS = {"same": "", "different": "background-color: #fde2c4",
                   "only in the run": "background-color: #f8d0d0", "only in the protocol": "background-color: #f8d0d0"}


def _sources() -> tuple[str, ...]:
    return ((_DEPLOYMENT,) if os.environ.get(DEPLOYMENT_LOG_VARIABLE) else ()) + _SOURCES


def _read(path: Path, missing: str) -> bytes | None:
    """A message log file's bytes (a regular file of at most MAX_MESSAGE_LOG_BYTES, read as every file input is:
    :func:`dpcore.textio.read_file`), or None with a message when it is missing, not a regular file or too large."""
    try:
        return read_file(path, MAX_MESSAGE_LOG_BYTES, "the message log")
    except MissingFile:
        st.info(missing, icon=":material/info:")
    except InputError as exc:
        show_error(exc)
    return None


def _shape(shape: tuple[int, ...] | None) -> str:
    if shape is None:
        return "-"
    return " x ".join(map(str, shape)) if shape else "scalar"


def _load(source: str) -> MessageLog | None:
    """The chosen message log, parsed; None (with a message) when there is none or it is not usable."""
    if source == _DEPLOYMENT:
        path = Path(os.environ.get(DEPLOYMENT_LOG_VARIABLE, ""))
        content = _read(path, f"No message log at `{path}` ({DEPLOYMENT_LOG_VARIABLE}) yet: the aggregator writes "
                              "it when a run ends (run configuration `log=`).")
        if content is None:
            return None
    elif source == _SOURCES[0]:
        content = _read(LOCAL_LOG, "No local run yet: `make federated` runs a SuperLink, a helper and three sites on "
                                   f"this machine and writes its message log to `{LOCAL_LOG.parent.name}/"
                                   f"{LOCAL_LOG.name}`.")
        if content is None:
            return None
    else:
        upload = st.file_uploader("Message log (JSON)", type=["json"], key="pr_log_upload",
                                  help="The message-log.json a federated run wrote (format capefed-message-log-v1).")
        if upload is None:
            return None
        if upload.size > MAX_MESSAGE_LOG_BYTES:
            show_error(InputError(f"{upload.name} has {upload.size:,} bytes, more than the "
                                  f"{MAX_MESSAGE_LOG_BYTES:,} a message log may have"))
            return None
        content = upload.getvalue()
    try:
        return parse_message_log(content)
    except InputError as exc:
        show_error(exc, "message log")
        return None


def _comparison_frame(logged: LoggedRound) -> pd.DataFrame | None:
    try:
        expected = round_protocol(logged)
    except InputError as exc:
        st.info(str(exc), icon=":material/info:")
        return None
    rows = compare_with_protocol(logged.entries, expected)
    return pd.DataFrame([{
        "step": r.step, "from": r.sender, "to": r.receiver, "carries": r.content,
        "shape (run)": _shape(r.run_shape), "shape (protocol)": _shape(r.protocol_shape),
        "unique (run)": r.run_unique, "unique (protocol)": r.protocol_unique,
        "sent (run)": r.run_count, "listed (protocol)": r.protocol_count, "status": r.status,
    } for r in rows])


def _show_round(logged: LoggedRound) -> None:
    status = {"released": st.success, "refused": st.warning, "stopped": st.error}[logged.status]
    status(f"{logged.algorithm}: {logged.status} after {logged.seconds:.1f} s"
           + (f": {logged.reason}" if logged.reason else ""))
    frame = _comparison_frame(logged)
    if frame is None:
        return
    differing = int((frame["status"] != "same").sum())
    a, b, c = st.columns(3)
    a.metric("Protocol messages in the run", int(frame["sent (run)"].sum()))
    b.metric("Messages the protocol lists", int(frame["listed (protocol)"].sum()))
    c.metric("Kinds of message that differ", differing,
             help="Same step, sender, receiver and content, compared by shape, unique entries and how often sent.")
    styled = frame.style.apply(lambda row: [_STATUS_COLOURS.get(row["status"], "")] * len(row), axis=1)
    st.dataframe(styled, hide_index=True, width="stretch", height=min(38 + 35 * len(frame), 420))
    control = [e for e in logged.entries if not e.protocol]
    with st.expander(f"Control messages of the real flow ({len(control)}): hello, design for the helper, requests"):
        st.dataframe(pd.DataFrame([{"from": e.sender, "to": e.receiver, "what": e.content, "bytes": e.bytes}
                                   for e in control]), hide_index=True, width="stretch")


def show_run_log() -> None:
    """The section: where the log comes from, which round, and the comparison."""
    st.subheader("A real run, message by message")
    st.markdown("`make federated` runs the same rounds with every party in its own process (Flower: a SuperLink, a "
                "helper and three sites) and logs every message. Load that log to see it beside the round the "
                "protocol lists for the same design: same steps, parties, shapes and counts, or the difference "
                "highlighted. Control messages of the real flow (hello, the design sent to the helper) are listed "
                "separately. How to run it across real machines: docs/federated.md.")
    if not st.toggle("Load a message log", key="pr_log_show",
                     help="The last local run (federated-run/message-log.json) or an uploaded one."):
        return
    sources = _sources()
    default = 0 if sources[0] == _DEPLOYMENT or LOCAL_LOG.is_file() else 1
    source = st.radio("Message log", sources, index=default, key="pr_log_source", horizontal=True)
    log = _load(source)
    if log is None:
        return
    labels = [f"{i + 1}. {r.algorithm} ({r.status})" for i, r in enumerate(log.rounds)]
    choice = st.selectbox("Round", labels, key="pr_log_round")
    _show_round(log.rounds[labels.index(choice) if choice in labels else 0])
