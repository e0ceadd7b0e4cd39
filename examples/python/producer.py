#!/usr/bin/env python3
"""Enqueue N transactions into a tarde queue.

    PYTHONPATH=clients/python python3 examples/python/producer.py --port 7400 --queue payments -n 10 [--prefix OK-]

Each transaction gets the id ``<prefix>TX-<run>-<i>`` and a small JSON
payload; with the example service a prefix (``OK-``, ``NOTNOW-``, ``BUSY-``,
``CONFLICT-``) fixes the answer it will give. Prints one line per
transaction: ``<STATUS> <tx_id> <state>``.
"""

from __future__ import annotations

import argparse
import json
import sys
import uuid

import tarde


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=7400)
    ap.add_argument("--token", default=None, help="AUTH token, when the server wants one")
    ap.add_argument("--queue", default="payments")
    ap.add_argument("-n", "--count", type=int, default=10)
    ap.add_argument("--prefix", default="", help="tx_id prefix, e.g. OK- or NOTNOW-")
    ap.add_argument("--base", default="2s", help="wait after a CANCELLED (e.g. 50ms, 2s, 2h)")
    ap.add_argument("--max-attempts", type=int, default=4)
    args = ap.parse_args()

    run = uuid.uuid4().hex[:8]
    with tarde.Client(args.host, args.port, token=args.token) as client:
        for i in range(args.count):
            tx_id = f"{args.prefix}TX-{run}-{i}"
            payload = json.dumps({"order": i, "amount": 100 + i}).encode()
            s = client.enqueue(
                args.queue, tx_id, payload, base=args.base, jitter=0, max_attempts=args.max_attempts
            )
            print(s.status, s.tx_id, s.state, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
