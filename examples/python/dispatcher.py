#!/usr/bin/env python3
"""A tarde dispatcher that calls an HTTP service for each request.

    PYTHONPATH=clients/python python3 examples/python/dispatcher.py --port 7400 --queue payments \\
        --service http://127.0.0.1:8080/charge [--concurrency 8]

Each request is POSTed with its payload and ``Idempotency-Key: <tx_id>#<attempt>``.
A ``200 {"result":"not_now"}`` is the business saying "later": CANCELLED.
Every other answer goes through ``tarde.answer_from_http`` (2xx SUCCESS,
429/503 TRANSIENT with Retry-After, other 5xx TRANSIENT, 4xx REJECTED); no
answer at all (timeout, refused) is TRANSIENT. Stop it with Ctrl-C or
SIGTERM: running calls finish, the rest is handed back.
"""

from __future__ import annotations

import argparse
import json
import logging
import socket
import sys
import urllib.error
import urllib.request

import tarde


def make_handler(url: str, timeout: float):
    def handle(request: tarde.Request) -> tarde.Answer:
        http_request = urllib.request.Request(
            url,
            data=request.payload,
            method="POST",
            headers={"Idempotency-Key": request.key, "Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(http_request, timeout=timeout) as response:
                status, headers, body = response.status, response.headers, response.read()
        except urllib.error.HTTPError as e:
            status, headers, body = e.code, e.headers, e.read()
        except (urllib.error.URLError, socket.timeout, OSError) as e:
            return tarde.Answer.transient(type(getattr(e, "reason", e)).__name__)
        if status == 200:
            try:
                if json.loads(body or b"{}").get("result") == "not_now":
                    return tarde.Answer.cancelled("NOT_NOW")
            except ValueError:
                pass
        return tarde.answer_from_http(status, headers)

    return handle


def main() -> int:
    ap = argparse.ArgumentParser(description="tarde dispatcher calling an HTTP service")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=7400)
    ap.add_argument("--token", default=None)
    ap.add_argument("--queue", default="payments")
    ap.add_argument("--service", default="http://127.0.0.1:8080/charge", help="URL to POST to")
    ap.add_argument("--concurrency", type=int, default=8)
    ap.add_argument("--http-timeout", type=float, default=10.0)
    ap.add_argument("--shutdown-timeout", type=float, default=30.0)
    args = ap.parse_args()

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    dispatcher = tarde.Dispatcher(
        args.queue,
        make_handler(args.service, args.http_timeout),
        host=args.host,
        port=args.port,
        token=args.token,
        concurrency=args.concurrency,
        shutdown_timeout=args.shutdown_timeout,
    )
    logging.info("dispatching %s from %s:%s to %s", args.queue, args.host, args.port, args.service)
    dispatcher.run()
    logging.info("stopped: %s", dispatcher.counters())
    return 0


if __name__ == "__main__":
    sys.exit(main())
