#!/usr/bin/env python3
"""Soak: a producer and a tarde.Dispatcher against a running tarde and example service.

    python3 examples/external_service.py --port 8080 --mode random --seed 1 &
    python3 clients/python/soak.py --port 7400 --service-port 8080 [--seconds 60] [--workers 8]
    python3 clients/python/soak.py --port 7400 --local     # no HTTP: the client alone

It configures a fresh queue (retry waits 50ms, no jitter, 4 attempts,
transient backoff 50ms..200ms), enqueues transactions continuously (keeping
at most --backlog unfinished) while --workers dispatcher threads POST each
request to the service and answer what it says, for --seconds. Then it
stops producing, waits until every transaction is SUCCEEDED or FAILED,
checks each one with GET, and prints:

    transactions, all terminal yes/no, outcomes, the service's
    repeats_after_final (must be 0), and handler calls (cycles) per second.

It exits 1 when a transaction is not terminal or a key was repeated after
its final answer. Start nothing else on the same tarde while it runs: it
reads the server's STATS counters.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import http.client
import json
import os
import random
import sys
import threading
import time
import uuid
from typing import Dict, List, Optional

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import tarde  # noqa: E402
from tarde import aio  # noqa: E402

UNFINISHED = ("sending", "in_flight", "scheduled")


class ServiceCaller:
    """POST /charge over one keep-alive HTTP connection per worker thread."""

    def __init__(self, port: int, timeout: float = 10.0) -> None:
        self.port = port
        self.timeout = timeout
        self.local = threading.local()

    def _conn(self) -> http.client.HTTPConnection:
        conn = getattr(self.local, "conn", None)
        if conn is None:
            conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=self.timeout)
            self.local.conn = conn
        return conn

    def __call__(self, request: tarde.Request) -> tarde.Answer:
        headers = {"Idempotency-Key": request.key, "Content-Type": "application/json"}
        for attempt in (1, 2):  # a kept-alive connection may have been closed: retry once
            conn = self._conn()
            try:
                conn.request("POST", "/charge", body=request.payload, headers=headers)
                response = conn.getresponse()
                body = response.read()
                break
            except (http.client.HTTPException, OSError):
                conn.close()
                self.local.conn = None
                if attempt == 2:
                    return tarde.Answer.transient("NO_RESPONSE")
        if response.status == 200 and json.loads(body or b"{}").get("result") == "not_now":
            return tarde.Answer.cancelled("NOT_NOW")
        return tarde.answer_from_http(response.status, response.headers)


class LocalService:
    """--local: the same answers as the example service's random mode, in-process (no HTTP),
    to measure the client alone. Counts repeats of a key after a final answer the same way."""

    def __init__(self, seed: int = 1) -> None:
        self.random = random.Random(seed)
        self.lock = threading.Lock()
        self.answers: Dict[str, List[str]] = {}
        self.requests = 0
        self.repeats_after_final = 0

    def __call__(self, request: tarde.Request) -> tarde.Answer:
        with self.lock:
            answer = self.random.choice(("ok", "not_now", "busy"))
            previous = self.answers.setdefault(request.key, [])
            if any(a != "busy" for a in previous):
                self.repeats_after_final += 1
            previous.append(answer)
            self.requests += 1
        if answer == "ok":
            return tarde.Answer.success()
        if answer == "not_now":
            return tarde.Answer.cancelled("NOT_NOW")
        return tarde.Answer.transient("HTTP_503", retry_after=1)

    def stats(self) -> Dict[str, object]:
        with self.lock:
            return {"requests": self.requests, "repeats_after_final": self.repeats_after_final}


def service_stats(port: int) -> Dict[str, object]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request("GET", "/stats")
        return json.loads(conn.getresponse().read())  # type: ignore[no-any-return]
    finally:
        conn.close()


def unfinished(stats: Dict[str, int]) -> int:
    return sum(stats.get(name, 0) for name in UNFINISHED)


def produce(args: argparse.Namespace, queue: str, stop: threading.Event, ids: List[str]) -> None:
    run = uuid.uuid4().hex[:8]
    with tarde.Client(args.host, args.port, token=args.token) as client:
        i = 0
        while not stop.is_set():
            if i % 50 == 0:
                while unfinished(client.stats()) >= args.backlog and not stop.is_set():
                    time.sleep(0.02)
                if stop.is_set():
                    break
            tx = f"SOAK-{run}-{i}"
            client.enqueue(queue, tx, b'{"amount":100}', base="50ms", jitter=0, max_attempts=4)
            ids.append(tx)
            i += 1


async def check_all(args: argparse.Namespace, ids: List[str]) -> Dict[str, int]:
    """GET every transaction (pipelined, in chunks); count states and failure reasons."""
    counts: Dict[str, int] = collections.Counter()
    async with aio.Client(args.host, args.port, token=args.token, timeout=60) as client:
        for start in range(0, len(ids), 2000):
            chunk = ids[start : start + 2000]
            for t in await asyncio.gather(*(client.get(tx) for tx in chunk)):
                if t is None:
                    counts["missing"] += 1
                elif t.state == "FAILED":
                    counts[f"FAILED:{t.reason}"] += 1
                else:
                    counts[t.state] += 1
    return counts


def main() -> int:
    ap = argparse.ArgumentParser(description="tarde Python client soak")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, required=True, help="port of a running tarde")
    where = ap.add_mutually_exclusive_group(required=True)
    where.add_argument("--service-port", type=int, help="port of examples/external_service.py --mode random")
    where.add_argument("--local", action="store_true", help="answer in-process instead of over HTTP (the client alone)")
    ap.add_argument("--token", default=None)
    ap.add_argument("--seconds", type=float, default=60.0, help="how long to produce")
    ap.add_argument("--workers", type=int, default=8, help="dispatcher concurrency")
    ap.add_argument("--backlog", type=int, default=400, help="most unfinished transactions while producing")
    ap.add_argument("--drain-timeout", type=float, default=300.0)
    ap.add_argument("--queue", default=None, help="queue name (default: a fresh soak-<random>)")
    args = ap.parse_args()

    queue = args.queue or f"soak-{uuid.uuid4().hex[:8]}"
    with tarde.Client(args.host, args.port, token=args.token) as admin:
        admin.config(queue, base="50ms", jitter=0, max_attempts=4, transient_base="50ms", transient_cap="200ms")
        if unfinished(admin.stats()):
            print("warning: the server already has unfinished transactions; the drain waits for them too")
    local = LocalService() if args.local else None
    handler = local if local is not None else ServiceCaller(args.service_port)
    get_service_stats = local.stats if local is not None else (lambda: service_stats(args.service_port))
    service_before = get_service_stats()

    dispatcher = tarde.Dispatcher(
        queue, handler, host=args.host, port=args.port, token=args.token,
        concurrency=args.workers, shutdown_timeout=30,
    )
    dispatcher_thread = threading.Thread(target=dispatcher.run, name="dispatcher")
    stop_producing = threading.Event()
    ids: List[str] = []
    producer = threading.Thread(target=produce, args=(args, queue, stop_producing, ids), name="producer")

    print(f"soak: queue {queue}, {args.workers} workers, producing for {args.seconds:.0f} s"
          f"{', answering in-process' if local is not None else ''}", flush=True)
    t0 = time.monotonic()
    dispatcher_thread.start()
    producer.start()
    next_report = 10.0
    monitor = tarde.Client(args.host, args.port, token=args.token)
    try:
        while time.monotonic() - t0 < args.seconds:
            time.sleep(0.2)
            elapsed = time.monotonic() - t0
            if elapsed >= next_report:
                calls = dispatcher.counters().get("calls", 0)
                print(f"  {elapsed:5.0f} s  enqueued {len(ids)}  calls {calls}  ({calls / elapsed:.0f}/s)"
                      f"  unfinished {unfinished(monitor.stats())}", flush=True)
                next_report += 10
        stop_producing.set()
        producer.join()
        produce_seconds = time.monotonic() - t0
        calls_while_producing = dispatcher.counters().get("calls", 0)

        drain_start = time.monotonic()
        with tarde.Client(args.host, args.port, token=args.token) as admin:
            while unfinished(admin.stats()) and time.monotonic() - drain_start < args.drain_timeout:
                time.sleep(0.1)
            left = unfinished(admin.stats())
        drain_seconds = time.monotonic() - drain_start
    finally:
        monitor.close()
        stop_producing.set()
        dispatcher.stop()
        dispatcher_thread.join()
    total_seconds = time.monotonic() - t0

    counts = asyncio.run(check_all(args, ids))
    terminal = sum(n for state, n in counts.items() if state == "SUCCEEDED" or state.startswith("FAILED:"))
    service = get_service_stats()
    repeats = int(service["repeats_after_final"]) - int(service_before["repeats_after_final"])  # type: ignore[arg-type]
    d = dispatcher.counters()
    calls = d.get("calls", 0)
    all_terminal = terminal == len(ids) and left == 0

    print()
    print(f"transactions          {len(ids)}")
    print(f"all terminal          {'yes' if all_terminal else 'no'} ({terminal} terminal, {left} unfinished on the server after {drain_seconds:.1f} s of drain)")
    print(f"outcomes              {dict(sorted(counts.items()))}")
    print(f"answers               success {d.get('success', 0)}, cancelled {d.get('cancelled', 0)}, "
          f"transient {d.get('transient', 0)}, rejected {d.get('rejected', 0)}; stale {d.get('stale', 0)}, "
          f"released {d.get('released', 0)}, reconnects {d.get('reconnects', 0)}")
    print(f"service               requests {int(service['requests']) - int(service_before['requests'])}, "  # type: ignore[arg-type]
          f"repeats_after_final {repeats}")
    print(f"handler calls         {calls} in {total_seconds:.1f} s")
    print(f"cycles/s              {calls_while_producing / produce_seconds:.0f} while producing ({calls_while_producing} calls in {produce_seconds:.1f} s), "
          f"{calls / total_seconds:.0f} overall")
    return 0 if all_terminal and repeats == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
