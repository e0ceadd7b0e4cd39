"""examples/external_service.py alone, then with examples/python/{producer,dispatcher}.py."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import unittest
import urllib.error
import urllib.request
from typing import Dict, List, Optional, Tuple

import tarde

from .support import EXAMPLES, PYTHON_ROOT, ServerTestCase, wait_until

SERVICE = EXAMPLES / "external_service.py"


class Service:
    def __init__(self, *args: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, str(SERVICE), "--port", "0", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        assert self.proc.stdout is not None
        first = self.proc.stdout.readline().decode()
        if not first.startswith("listening on 127.0.0.1:"):
            self.stop()
            raise AssertionError(f"unexpected first line {first!r}")
        self.port = int(first.rsplit(":", 1)[1])
        self.url = f"http://127.0.0.1:{self.port}"

    def post(self, key: Optional[str]) -> Tuple[int, Dict[str, str], dict]:
        headers = {"Idempotency-Key": key} if key is not None else {}
        req = urllib.request.Request(self.url + "/charge", data=b"{}", method="POST", headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=10) as r:
                return r.status, dict(r.headers), json.loads(r.read())
        except urllib.error.HTTPError as e:
            return e.code, dict(e.headers), json.loads(e.read() or b"null")

    def stats(self) -> dict:
        with urllib.request.urlopen(self.url + "/stats", timeout=10) as r:
            return json.loads(r.read())  # type: ignore[no-any-return]

    def stop(self) -> Tuple[int, bytes]:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            _, err = self.proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            _, err = self.proc.communicate()
        return self.proc.returncode, err


class ExternalServiceTest(unittest.TestCase):
    def test_prefixes_stats_and_repeats(self) -> None:
        svc = Service("--mode", "random", "--seed", "3")
        self.addCleanup(svc.stop)
        status, headers, body = svc.post("OK-1#1")
        self.assertEqual((status, body), (200, {"result": "ok"}))
        self.assertEqual(svc.post("NOTNOW-1#1")[::2], (200, {"result": "not_now"}))
        status, headers, _ = svc.post("BUSY-1#1")
        self.assertEqual((status, headers.get("Retry-After")), (503, "1"))
        self.assertEqual(svc.post("CONFLICT-1#1")[::2], (409, {"result": "conflict"}))
        self.assertEqual(svc.stats()["repeats_after_final"], 0)
        svc.post("BUSY-1#1")  # repeating a 503'd key is expected
        self.assertEqual(svc.stats()["repeats_after_final"], 0)
        svc.post("OK-1#1")  # repeating a finally answered key is not
        svc.post("CONFLICT-1#1")
        self.assertEqual(svc.post(None)[0], 400)
        stats = svc.stats()
        self.assertEqual(stats["repeats_after_final"], 2)
        self.assertEqual(stats["keys"], 4)
        self.assertEqual(stats["requests"], 8)
        self.assertEqual(stats["by_answer"], {"ok": 2, "not_now": 1, "busy": 2, "conflict": 2, "bad_request": 1})
        # Random mode: only ok / not_now / busy, and the same seed gives the same answers.
        answers = [svc.post(f"TX-{i}#1")[2]["result"] for i in range(60)]
        self.assertEqual(set(answers), {"ok", "not_now", "busy"})
        again = Service("--mode", "random", "--seed", "3")
        self.addCleanup(again.stop)
        self.assertEqual([again.post(f"TX-{i}#1")[2]["result"] for i in range(60)], answers)
        code, err = svc.stop()
        self.assertEqual((code, err), (0, b""))

    def test_fixed_modes(self) -> None:
        expected = {"success": 200, "cancelled": 200, "transient": 503, "rejected": 409}
        for mode, status in expected.items():
            svc = Service("--mode", mode)
            self.addCleanup(svc.stop)
            self.assertEqual(svc.post("TX-1#1")[0], status, mode)
            self.assertEqual(svc.post("OK-x#1")[0], 200, mode)  # the key prefix wins


class ExampleProgramsTest(ServerTestCase):
    def test_producer_and_dispatcher(self) -> None:
        svc = Service("--mode", "random", "--seed", "1")
        self.addCleanup(svc.stop)
        env = dict(os.environ, PYTHONPATH=str(PYTHON_ROOT))
        queue = "examplepay"
        c = self.client()
        c.config(queue, transient_base="50ms", transient_cap="100ms")
        dispatcher = subprocess.Popen(
            [
                sys.executable,
                str(EXAMPLES / "python" / "dispatcher.py"),
                "--port",
                str(self.port),
                "--queue",
                queue,
                "--service",
                svc.url + "/charge",
                "--concurrency",
                "4",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env=env,
        )
        self.addCleanup(lambda: dispatcher.poll() is None and dispatcher.kill())
        ids: List[str] = []
        for prefix, n in (("OK-", 3), ("CONFLICT-", 2), ("NOTNOW-", 1), ("", 6)):
            out = subprocess.run(
                [
                    sys.executable,
                    str(EXAMPLES / "python" / "producer.py"),
                    "--port",
                    str(self.port),
                    "--queue",
                    queue,
                    "-n",
                    str(n),
                    "--prefix",
                    prefix,
                    "--base",
                    "50ms",
                    "--max-attempts",
                    "3",
                ],
                env=env,
                capture_output=True,
                check=True,
                timeout=30,
            ).stdout.decode()
            lines = out.splitlines()
            self.assertEqual(len(lines), n)
            for line in lines:
                status, tx, state = line.split()
                self.assertEqual((status, state), ("CREATED", "SENDING"))
                ids.append(tx)

        def all_terminal() -> bool:
            return all(getattr(c.get(tx), "terminal", False) for tx in ids)

        wait_until(all_terminal, timeout=30, what="every example transaction terminal")
        states = {tx: c.get(tx) for tx in ids}
        for tx, t in states.items():
            assert t is not None
            if tx.startswith("OK-"):
                self.assertEqual((t.state, t.attempt), ("SUCCEEDED", 1))
            elif tx.startswith("CONFLICT-"):
                self.assertEqual((t.state, t.reason), ("FAILED", "HTTP_409"))
            elif tx.startswith("NOTNOW-"):
                self.assertEqual((t.state, t.reason, t.attempt), ("FAILED", "EXHAUSTED", 3))
        dispatcher.send_signal(signal.SIGTERM)
        _, err = dispatcher.communicate(timeout=15)
        self.assertEqual(dispatcher.returncode, 0, err.decode()[-2000:])
        self.assertIn(b"stopped:", err)
        self.assertEqual(svc.stats()["repeats_after_final"], 0)
