"""The Dispatcher against a real server: end to end, stop, reconnect, signals."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
import unittest
from typing import Callable, Dict, List, Optional

import tarde

from .support import PYTHON_ROOT, ServerTestCase, TardeServer, unique, wait_for_commands, wait_until


class Running:
    """A dispatcher's run() on a background thread."""

    def __init__(self, dispatcher: tarde.Dispatcher) -> None:
        self.dispatcher = dispatcher
        self.error: Optional[BaseException] = None
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        try:
            self.dispatcher.run()
        except BaseException as e:  # noqa: B036 - reported to the test
            self.error = e

    def stop(self, timeout: float = 15.0) -> float:
        start = time.monotonic()
        self.dispatcher.stop()
        self.thread.join(timeout)
        if self.thread.is_alive():
            raise AssertionError("dispatcher did not stop")
        return time.monotonic() - start


def terminal(client: tarde.Client, tx: str) -> Optional[tarde.Transaction]:
    t = client.get(tx)
    return t if t is not None and t.terminal else None


class DispatcherTest(ServerTestCase):
    def start(self, queue: str, handler: Callable[[tarde.Request], tarde.Answer], **kw: object) -> Running:
        kw.setdefault("concurrency", 4)
        kw.setdefault("reserve_wait", 0.2)
        kw.setdefault("shutdown_timeout", 5.0)
        d = tarde.Dispatcher(queue, handler, port=self.port, **kw)  # type: ignore[arg-type]
        running = Running(d)
        self.addCleanup(lambda: running.stop() if running.thread.is_alive() else None)
        return running

    def test_end_to_end_retries_until_success(self) -> None:
        q = unique("e2e")
        c = self.client()
        c.config(q, transient_base="50ms", transient_cap="100ms", jitter=0)
        seen: Dict[str, List[str]] = {}
        states: List[str] = []
        lock = threading.Lock()
        checker = self.client()

        def handler(req: tarde.Request) -> tarde.Answer:
            with lock:
                keys = seen.setdefault(req.tx_id, [])
                keys.append(req.key)
                n = len(keys)
                t = checker.get(req.tx_id)
                assert t is not None
                states.append(t.state)  # SENT was sent before the call
            if req.payload == b"flaky" and n == 1:
                raise RuntimeError("connection reset by peer")
            if req.payload == b"cancel-twice" and n <= 2:
                return tarde.Answer.cancelled("NOT NOW")  # sanitized to NOT_NOW
            return tarde.Answer.success()

        ids = {unique("A"): b"cancel-twice", unique("B"): b"flaky", unique("C"): b"plain"}
        for tx, payload in ids.items():
            c.enqueue(q, tx, payload, base="50ms", factor=1, jitter=0, max_attempts=4)
        running = self.start(q, handler)
        for tx in ids:
            wait_until(lambda tx=tx: terminal(c, tx), timeout=15, what=f"{tx} terminal")
        running.stop()
        self.assertIsNone(running.error)
        for tx in ids:
            t = c.get(tx)
            assert t is not None
            self.assertEqual(t.state, "SUCCEEDED", tx)
        a, b, plain = ids
        self.assertEqual(seen[a], [f"{a}#1", f"{a}#2", f"{a}#3"])
        self.assertEqual(seen[b], [f"{b}#1", f"{b}#1"])  # TRANSIENT re-sends the same key
        self.assertEqual(seen[plain], [f"{plain}#1"])
        self.assertEqual(set(states), {"IN_FLIGHT"})
        history_b = c.history(b)
        assert history_b is not None
        self.assertIn(("RESPOND", "RuntimeError"), [(e.cause, e.reason) for e in history_b])
        history_a = c.history(a)
        assert history_a is not None
        self.assertIn("NOT_NOW", [e.reason for e in history_a])
        counts = running.dispatcher.counters()
        self.assertEqual(counts["calls"], 6)
        self.assertEqual((counts["success"], counts["cancelled"], counts["transient"]), (3, 2, 1))
        self.assertEqual(counts["handler_errors"], 1)

    def test_non_answer_return_is_transient(self) -> None:
        q = unique("bad")
        c = self.client()
        c.config(q, transient_base="1h")
        tx = unique()
        c.enqueue(q, tx, max_attempts=1)
        calls: List[int] = []

        def handler(req: tarde.Request) -> tarde.Answer:
            calls.append(1)
            return None  # type: ignore[return-value]

        running = self.start(q, handler, concurrency=1)
        wait_until(lambda: getattr(c.get(tx), "state", None) == "SCHEDULED", what="TRANSIENT answer")
        running.stop()
        events = c.history(tx)
        assert events is not None
        self.assertEqual(events[-1].reason, "TypeError")

    def test_stop_lets_running_call_finish(self) -> None:
        q = unique("fin")
        c = self.client()
        tx = unique()
        c.enqueue(q, tx)
        entered, release = threading.Event(), threading.Event()

        def handler(req: tarde.Request) -> tarde.Answer:
            entered.set()
            release.wait(10)
            return tarde.Answer.success()

        running = self.start(q, handler, concurrency=2, shutdown_timeout=10)
        self.assertTrue(entered.wait(10))
        running.dispatcher.stop()
        time.sleep(0.1)
        self.assertTrue(running.thread.is_alive())  # waiting for the call
        release.set()
        running.stop()
        t = c.get(tx)
        assert t is not None
        self.assertEqual(t.state, "SUCCEEDED")

    def test_call_past_shutdown_timeout_answered_transient(self) -> None:
        q = unique("slow")
        c = self.client()
        c.config(q, transient_base="1h")  # keep the re-send far away while we look
        tx = unique()
        c.enqueue(q, tx)
        entered, release = threading.Event(), threading.Event()
        self.addCleanup(release.set)

        def handler(req: tarde.Request) -> tarde.Answer:
            entered.set()
            release.wait(30)
            return tarde.Answer.success()

        running = self.start(q, handler, concurrency=1, shutdown_timeout=0.3)
        self.assertTrue(entered.wait(10))
        took = running.stop()
        self.assertLess(took, 5)
        t = c.get(tx)
        assert t is not None
        self.assertEqual((t.state, t.next_attempt), ("SCHEDULED", 1))  # same attempt again later
        events = c.history(tx)
        assert events is not None
        self.assertEqual((events[-1].cause, events[-1].reason), ("RESPOND", "SHUTDOWN"))
        self.assertEqual(running.dispatcher.counters().get("abandoned"), 1)
        release.set()  # the late result is dropped: the state stays as tarde has it
        time.sleep(0.1)
        t2 = c.get(tx)
        assert t2 is not None
        self.assertEqual(t2.state, "SCHEDULED")

    def test_request_reserved_while_stopping_is_released(self) -> None:
        q = unique("rel")
        c = self.client()
        calls: List[str] = []
        before = c.stats()["commands"]
        running = self.start(q, lambda r: calls.append(r.key) or tarde.Answer.success(), concurrency=1, reserve_wait=5.0)
        wait_for_commands(c, before)  # the worker's RESERVE is waiting
        running.dispatcher.stop()
        tx = unique()
        c.enqueue(q, tx)  # handed to the waiting worker, which must give it back
        running.stop()
        self.assertEqual(calls, [])
        events = c.history(tx)
        assert events is not None
        self.assertEqual((events[-1].cause, events[-1].reason), ("RELEASE", "SHUTDOWN"))
        self.assertEqual(running.dispatcher.counters().get("released"), 1)
        r = c.reserve(q)  # ready again at once
        assert r is not None
        self.assertEqual((r.tx_id, r.handouts), (tx, 2))

    def test_constructor_validates(self) -> None:
        ok = lambda r: tarde.Answer.success()  # noqa: E731
        with self.assertRaises(ValueError):
            tarde.Dispatcher("bad queue", ok)
        with self.assertRaises(ValueError):
            tarde.Dispatcher("q", ok, concurrency=0)
        with self.assertRaises(TypeError):
            tarde.Dispatcher("q", "not callable")  # type: ignore[arg-type]
        with self.assertRaises(ValueError):
            tarde.Dispatcher("q", ok, token="a b")


class DispatcherAuthTest(ServerTestCase):
    server_token = "tok-123"

    def test_wrong_token_is_fatal(self) -> None:
        d = tarde.Dispatcher("q", lambda r: tarde.Answer.success(), port=self.port, token="wrong", concurrency=2)
        running = Running(d)
        running.thread.join(10)
        self.assertFalse(running.thread.is_alive())
        self.assertIsInstance(running.error, tarde.Unauthorized)

    def test_right_token_works(self) -> None:
        c = self.client()
        q, tx = unique("q"), unique()
        c.enqueue(q, tx)
        d = tarde.Dispatcher(q, lambda r: tarde.Answer.success(), port=self.port, token=self.server_token, concurrency=1, reserve_wait=0.2)
        running = Running(d)
        wait_until(lambda: terminal(c, tx), what="success")
        running.stop()
        self.assertIsNone(running.error)


class ReconnectTest(unittest.TestCase):
    def setUp(self) -> None:
        self.server = TardeServer()
        self.addCleanup(self.server.cleanup)
        self.server.start()

    def test_dispatcher_reconnects_plain_client_does_not(self) -> None:
        q = unique("rc")
        plain = self.server.client()
        self.addCleanup(plain.close)
        handled: List[str] = []
        d = tarde.Dispatcher(
            q,
            lambda r: handled.append(r.tx_id) or tarde.Answer.success(),
            port=self.server.port,
            concurrency=2,
            reserve_wait=0.2,
            backoff_base=0.05,
            backoff_cap=0.3,
        )
        running = Running(d)
        self.addCleanup(lambda: running.stop() if running.thread.is_alive() else None)
        first = unique()
        plain.enqueue(q, first)
        wait_until(lambda: first in handled, what="first handled")

        self.server.restart()  # same port, same data

        with self.assertRaises(ConnectionError):
            plain.ping()
        with self.assertRaises(ConnectionError):  # still closed: no silent reconnect
            plain.ping()
        self.assertTrue(plain.closed)

        with self.server.client() as fresh:
            second = unique()
            fresh.enqueue(q, second)
            wait_until(lambda: terminal(fresh, second), timeout=15, what="second handled after restart")
            t = fresh.get(first)
            assert t is not None
            self.assertEqual(t.state, "SUCCEEDED")  # survived the restart
        running.stop()
        self.assertIsNone(running.error)
        self.assertGreaterEqual(d.counters().get("reconnects", 0), 1)
        self.assertEqual(handled, [first, second])

    def test_answer_is_resent_after_connection_loss(self) -> None:
        q = unique("rs")
        c = self.server.client()
        self.addCleanup(c.close)
        tx = unique()
        c.enqueue(q, tx)
        entered, go = threading.Event(), threading.Event()
        self.addCleanup(go.set)

        def handler(req: tarde.Request) -> tarde.Answer:
            entered.set()
            go.wait(20)
            return tarde.Answer.success()

        d = tarde.Dispatcher(q, handler, port=self.server.port, concurrency=1, reserve_wait=0.2, backoff_base=0.05, backoff_cap=0.3)
        running = Running(d)
        self.addCleanup(lambda: running.stop() if running.thread.is_alive() else None)
        self.assertTrue(entered.wait(10))
        self.server.restart()  # the worker's connection dies while the call runs
        go.set()
        with self.server.client() as fresh:
            wait_until(lambda: terminal(fresh, tx), timeout=15, what="answer delivered after reconnect")
            t = fresh.get(tx)
            assert t is not None
            self.assertEqual(t.state, "SUCCEEDED")
        running.stop()


class SignalTest(ServerTestCase):
    SCRIPT = """
import sys, tarde
d = tarde.Dispatcher(sys.argv[1], lambda r: tarde.Answer.success(), port=int(sys.argv[2]), concurrency=2, reserve_wait=0.2)
print("running", flush=True)
d.run()
print("stopped", flush=True)
"""

    def test_sigterm_and_sigint_stop_run(self) -> None:
        watcher = self.client()
        for sig in (signal.SIGTERM, signal.SIGINT):
            connections = watcher.stats()["connections"]
            env = dict(os.environ, PYTHONPATH=str(PYTHON_ROOT))
            proc = subprocess.Popen(
                [sys.executable, "-c", self.SCRIPT, unique("sig"), str(self.port)],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=env,
            )
            try:
                assert proc.stdout is not None
                self.assertEqual(proc.stdout.readline(), b"running\n")
                # Both workers connected: run() has installed its signal handlers.
                wait_until(lambda: watcher.stats()["connections"] >= connections + 2, what="workers")
                proc.send_signal(sig)
                out, err = proc.communicate(timeout=10)
            finally:
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
            self.assertEqual(proc.returncode, 0, err.decode())
            self.assertEqual(out, b"stopped\n")
            self.assertEqual(err, b"")
