"""The SuperLink's public face: ``python -m capefed.ops.gateway --listen 0.0.0.0:9093 --upstream 127.0.0.1:9092 ...``.

Flower 1.41's SuperLink serves every API on one HTTP(S) address (``--host``/``--port``): the Fleet API the
SuperNodes call (``/v1/fleet/...``), the Control API of the ``flwr`` command (``/v1/control/...``: start and list
runs, register and list nodes; no authentication without Flower's enterprise plugins) and the Runtime API of the
ServerApp (``/v1/runtime/...``). On the node-facing address only the first may be reachable: the SuperLink runs on
127.0.0.1 and this gateway, on the public address with the SuperLink's certificate, forwards ``POST /v1/fleet/...``
to it over TLS (verifying the SuperLink's certificate against the CA) and answers everything else 404 without
forwarding it. SuperNode authentication is unchanged: every Fleet request carries the node's signature headers,
which the SuperLink checks against the registered keys.

Written with the HTTP libraries Flower itself runs on (uvicorn, starlette, httpx: pinned in requirements.txt), so
the aggregator's host needs nothing more; a site's IT department may put any reverse proxy with the same rule
(only ``POST /v1/fleet/``) in its place.
"""

from __future__ import annotations

import argparse
import logging
import ssl
import sys
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

__all__ = ["ALLOWED_PREFIX", "MAX_BODY_BYTES", "REFUSAL", "UPSTREAM_TIMEOUT_SECONDS", "create_app", "main"]

ALLOWED_PREFIX = "/v1/fleet/"
"""The only paths forwarded (with POST): Flower 1.41's Fleet API, every call a SuperNode makes."""
MAX_BODY_BYTES = 256 * 1024 * 1024
"""A request body larger than this is refused (413) before it is read further; Flower sends arrays as objects of at
most a few megabytes, a capeAGN round on the projected path (D = 2,000) W of 2,000 x K numbers."""
UPSTREAM_TIMEOUT_SECONDS = 60.0
"""Seconds the gateway waits for the SuperLink's answer to one request."""
REFUSAL = "this address serves only Flower's Fleet API (POST /v1/fleet/...)"
_HOP_BY_HOP = frozenset({"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailer",
                         "transfer-encoding", "upgrade", "host", "content-length"})

log = logging.getLogger("capefed.ops.gateway")

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]


async def _answer(send: Send, status: int, body: bytes, headers: list[tuple[bytes, bytes]] | None = None) -> None:
    headers = headers or [(b"content-type", b"text/plain; charset=utf-8")]
    await send({"type": "http.response.start", "status": status,
                "headers": [*headers, (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


def create_app(upstream: str, ca_certificate: str | None):
    """The ASGI application: forward ``POST /v1/fleet/...`` to ``https://<upstream>`` (``http://`` without a CA
    certificate, for tests on loopback only), refuse everything else."""
    import httpx  # noqa: PLC0415

    verify: ssl.SSLContext | bool = False
    if ca_certificate:
        verify = ssl.create_default_context(cafile=ca_certificate)
    base = f"{'https' if ca_certificate else 'http'}://{upstream}"
    client = httpx.AsyncClient(base_url=base, verify=verify, timeout=UPSTREAM_TIMEOUT_SECONDS)

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            while True:
                event = await receive()
                if event["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif event["type"] == "lifespan.shutdown":
                    await client.aclose()
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        if scope["type"] != "http":
            return
        path, method = scope["path"], scope["method"]
        where = scope.get("client") or ("?", "?")
        peer = f"{where[0]}:{where[1]}"
        if method != "POST" or not path.startswith(ALLOWED_PREFIX) or ".." in path:
            log.warning("refused %s %s from %s: not the Fleet API", method, path, peer)
            await _answer(send, 404, REFUSAL.encode())
            return
        body = bytearray()
        more = True
        while more:
            event = await receive()
            body += event.get("body", b"")
            more = event.get("more_body", False)
            if len(body) > MAX_BODY_BYTES:
                log.warning("refused %s from %s: body over %d bytes", path, peer, MAX_BODY_BYTES)
                await _answer(send, 413, f"request body over {MAX_BODY_BYTES} bytes".encode())
                return
        headers = [(k, v) for k, v in scope["headers"] if k.decode("latin-1").lower() not in _HOP_BY_HOP]
        try:
            reply = await client.post(path, content=bytes(body), headers=headers)
        except httpx.HTTPError as exc:
            log.warning("the SuperLink did not answer %s from %s: %s", path, peer, exc)
            await _answer(send, 502, b"the SuperLink behind this gateway did not answer")
            return
        out = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in reply.headers.items()
               if k.lower() not in _HOP_BY_HOP]
        await _answer(send, reply.status_code, reply.content, out)

    return app


def _address(text: str) -> tuple[str, int]:
    host, _, port = text.rpartition(":")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise argparse.ArgumentTypeError(f"{text!r}: expected host:port with a port between 1 and 65535")
    return host.strip("[]"), int(port)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m capefed.ops.gateway", description=__doc__.split("\n\n")[0])
    parser.add_argument("--listen", type=_address, required=True, help="public address, host:port")
    parser.add_argument("--upstream", type=_address, required=True,
                        help="the SuperLink's --host:--port (127.0.0.1:port)")
    parser.add_argument("--ssl-certfile", help="the certificate served on --listen (the SuperLink's)")
    parser.add_argument("--ssl-keyfile", help="its private key")
    parser.add_argument("--ssl-ca-certfile", help="the CA that signed the SuperLink's certificate")
    parser.add_argument("--insecure", action="store_true", help="plain HTTP on both sides (tests on loopback only)")
    args = parser.parse_args(argv)
    tls = (args.ssl_certfile, args.ssl_keyfile, args.ssl_ca_certfile)
    if args.insecure == any(tls) or (not args.insecure and not all(tls)):
        parser.error("give --ssl-certfile, --ssl-keyfile and --ssl-ca-certfile, or --insecure alone")
    import uvicorn  # noqa: PLC0415

    logging.basicConfig(level=logging.INFO, stream=sys.stdout, format="%(asctime)s %(name)s: %(message)s")
    logging.getLogger("httpx").setLevel(logging.WARNING)  # not a line per forwarded request
    upstream = f"{args.upstream[0]}:{args.upstream[1]}"
    app = create_app(upstream, None if args.insecure else args.ssl_ca_certfile)
    log.info("forwarding POST %s... from %s:%d to the SuperLink at %s; everything else is refused",
             ALLOWED_PREFIX, *args.listen, upstream)
    uvicorn.run(app, host=args.listen[0], port=args.listen[1], ssl_certfile=args.ssl_certfile,
                ssl_keyfile=args.ssl_keyfile, log_level="warning", lifespan="on")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
