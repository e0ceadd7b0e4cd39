#!/usr/bin/env python3
"""A stand-in for the external service a tarde dispatcher calls (standard library only).

    python3 examples/external_service.py --port P [--mode random|success|cancelled|transient|rejected] [--seed N]

Serves on 127.0.0.1:P (``--port 0`` picks a free port) and prints
``listening on 127.0.0.1:<port>`` as its first line of output.

``POST /charge`` with header ``Idempotency-Key: <tx_id>#<attempt>`` (any body) answers:

- ``200 {"result":"ok"}``         success                     -> SUCCESS
- ``200 {"result":"not_now"}``    the business says try later -> CANCELLED (the handler's choice)
- ``503`` with ``Retry-After: 1`` busy                        -> TRANSIENT
- ``409 {"result":"conflict"}``   refused                     -> REJECTED

The answer is chosen by the key's tx part first: a tx_id starting with
``OK-``, ``NOTNOW-``, ``BUSY-`` or ``CONFLICT-`` always gets that answer.
Otherwise the mode decides: ``success`` (ok), ``cancelled`` (not_now),
``transient`` (503), ``rejected`` (conflict), or ``random`` (the default): ok,
not_now or 503 at random, from ``--seed``.

``GET /stats`` returns ``{"requests": N, "by_answer": {...}, "keys": K,
"repeats_after_final": R}``: R counts requests for a key that had already
been answered with anything but 503, which a correct dispatcher never sends.
``GET /healthz`` answers 200.
"""

from __future__ import annotations

import argparse
import json
import random
import signal
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Dict, List, Optional, Tuple

OK, NOT_NOW, BUSY, CONFLICT = "ok", "not_now", "busy", "conflict"
PREFIXES = (("OK-", OK), ("NOTNOW-", NOT_NOW), ("BUSY-", BUSY), ("CONFLICT-", CONFLICT))
MODES = {"success": OK, "cancelled": NOT_NOW, "transient": BUSY, "rejected": CONFLICT}


class Ledger:
    """What the service answered, per idempotency key (thread-safe)."""

    def __init__(self, mode: str, seed: Optional[int]) -> None:
        self.mode = mode
        self.random = random.Random(seed)
        self.lock = threading.Lock()
        self.requests = 0
        self.by_answer: Dict[str, int] = {}
        self.answers: Dict[str, List[str]] = {}
        self.repeats_after_final = 0

    def choose(self, key: str) -> str:
        tx = key.rsplit("#", 1)[0]
        for prefix, answer in PREFIXES:
            if tx.startswith(prefix):
                return answer
        if self.mode == "random":
            return self.random.choice((OK, NOT_NOW, BUSY))
        return MODES[self.mode]

    def answer(self, key: str) -> str:
        with self.lock:
            answer = self.choose(key)
            previous = self.answers.setdefault(key, [])
            if any(a != BUSY for a in previous):
                self.repeats_after_final += 1
            previous.append(answer)
            self.requests += 1
            self.by_answer[answer] = self.by_answer.get(answer, 0) + 1
            return answer

    def count_bad_request(self) -> None:
        with self.lock:
            self.requests += 1
            self.by_answer["bad_request"] = self.by_answer.get("bad_request", 0) + 1

    def stats(self) -> Dict[str, object]:
        with self.lock:
            return {
                "requests": self.requests,
                "by_answer": dict(self.by_answer),
                "keys": len(self.answers),
                "repeats_after_final": self.repeats_after_final,
            }


RESPONSES: Dict[str, Tuple[int, Dict[str, str], Optional[dict]]] = {
    OK: (200, {}, {"result": "ok"}),
    NOT_NOW: (200, {}, {"result": "not_now"}),
    BUSY: (503, {"Retry-After": "1"}, {"result": "busy"}),
    CONFLICT: (409, {}, {"result": "conflict"}),
}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, so a client may reuse its connection
    disable_nagle_algorithm = True  # no 40 ms delayed-ACK stalls on small replies
    wbufsize = 1 << 16  # status, headers and body leave in one write (flushed per request)
    server_version = "external-service/1"
    ledger: Ledger  # set on the class by make_server

    def log_message(self, format: str, *args: object) -> None:  # quiet
        pass

    def _send(self, status: int, body: Optional[dict], headers: Optional[Dict[str, str]] = None) -> None:
        data = json.dumps(body, separators=(",", ":")).encode() if body is not None else b""
        self.send_response(status)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        if self.path != "/charge":
            self._send(404, {"result": "not_found"})
            return
        key = (self.headers.get("Idempotency-Key") or "").strip()
        if not key:
            self.ledger.count_bad_request()
            self._send(400, {"result": "missing_idempotency_key"})
            return
        status, headers, body = RESPONSES[self.ledger.answer(key)]
        self._send(status, body, headers)

    def do_GET(self) -> None:
        if self.path == "/stats":
            self._send(200, self.ledger.stats())
        elif self.path == "/healthz":
            self._send(200, {"result": "ok"})
        else:
            self._send(404, {"result": "not_found"})


def make_server(port: int, mode: str = "random", seed: Optional[int] = None) -> ThreadingHTTPServer:
    handler = type("BoundHandler", (Handler,), {"ledger": Ledger(mode, seed)})
    server = ThreadingHTTPServer(("127.0.0.1", port), handler)
    server.daemon_threads = True
    return server


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description="A stand-in external service for tarde examples and tests.")
    parser.add_argument("--port", type=int, required=True, help="port on 127.0.0.1 (0 picks a free one)")
    parser.add_argument("--mode", choices=["random", *MODES], default="random")
    parser.add_argument("--seed", type=int, default=None, help="seed of the random mode")
    args = parser.parse_args(argv)
    server = make_server(args.port, args.mode, args.seed)
    print(f"listening on 127.0.0.1:{server.server_address[1]}", flush=True)

    def on_signal(signum: int, frame: object) -> None:
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    try:
        server.serve_forever(poll_interval=0.2)
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
