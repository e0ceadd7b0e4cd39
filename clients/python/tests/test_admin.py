"""Queue administration against a real server: pause and resume, TOUCH,
RESERVE over several queues, bulk redrive and resolve, payload reads."""

from __future__ import annotations

import asyncio

import tarde
from tarde import aio

from .support import ServerTestCase, unique


class AdminTest(ServerTestCase):
    def setUp(self) -> None:
        self.c = self.client()

    def bury(self, q: str, tx: str, reason: str) -> None:
        self.c.enqueue(q, tx, b"body-" + tx.encode())
        r = self.c.reserve(q)
        assert r is not None and r.tx_id == tx
        self.assertEqual(self.c.release(tx, 1, reason=reason).status, "BURIED")

    def test_pause_resume(self) -> None:
        q = unique("q")
        tx = unique()
        self.c.enqueue(q, tx)
        self.assertIsNone(self.c.pause(q))
        self.assertIsNone(self.c.pause(q))  # idempotent
        self.assertIsNone(self.c.reserve(q))
        self.assertEqual(self.c.stats()[f"paused.{q}"], 1)
        self.assertEqual(self.c.config(q)["paused"], "1")
        self.c.resume(q)
        self.c.resume(q)
        r = self.c.reserve(q)
        assert r is not None
        self.assertEqual((r.tx_id, r.handouts, r.deliveries), (tx, 1, 1))
        with self.assertRaises(ValueError):
            self.c.pause("bad/queue")

    def test_touch(self) -> None:
        q, tx = unique("q"), unique()
        self.c.enqueue(q, tx)
        self.assertEqual(self.c.touch(tx, 1).status, "STALE")
        self.c.reserve(q)
        self.assertEqual(self.c.touch(tx, 1), tarde.Summary("OK", tx, "SENDING", 0, 1, 0))
        with self.server.client() as other:
            self.assertEqual(other.touch(tx, 1).status, "STALE")
        self.assertEqual(self.c.touch(unique(), 1).status, "NOT_FOUND")
        with self.assertRaises(ValueError):
            self.c.touch(tx, 0)

    def test_reserve_several_queues(self) -> None:
        qa, qb = unique("qa"), unique("qb")
        for tx in ("a1", "a2", "a3"):
            self.c.enqueue(qa, unique(tx))
        b1 = unique("b1")
        self.c.enqueue(qb, b1)
        with self.server.client() as d:
            got = [d.reserve([qa, qb]) for _ in range(4)]
            names = [r.tx_id[:2] if r else None for r in got]
            self.assertEqual(names, ["a1", "b1", "a2", "a3"])
            self.assertIsNone(d.reserve([qa, qb]))
            self.assertIsNone(d.reserve((qa, qb), wait="50ms"))
        for bad in ([], [qa, qa], [qa, "x,y"], [f"q{i}" for i in range(17)]):
            with self.assertRaises(ValueError, msg=repr(bad)):
                self.c.reserve(bad)

    def test_bulk_redrive_and_resolve(self) -> None:
        q = unique("dlq")
        self.c.config(q, max_deliveries=1)
        self.bury(q, "A-1" + q, "timeout")
        self.bury(q, "A-2" + q, "refused")
        self.bury(q, "B-1" + q, "timeout")
        self.assertEqual(self.c.redrive_all(q, prefix="A-", last_error="timeout"), 1)
        self.assertEqual(self.c.resolve_all(q, "FAILED", prefix="A-", reason="GAVE_UP"), 1)
        t = self.c.get("A-2" + q)
        assert t is not None
        self.assertEqual((t.state, t.reason), ("FAILED", "GAVE_UP"))
        self.assertEqual(self.c.resolve_all(q, "SUCCEEDED", limit=5), 1)
        self.assertEqual(self.c.redrive_all(q), 0)
        with self.assertRaises(ValueError):
            self.c.redrive_all(q, limit=0)
        with self.assertRaises(ValueError):
            self.c.resolve_all(q, "MAYBE")
        with self.assertRaises(tarde.BadArgument):
            self.c._raw(f"REDRIVE_ALL {q} limit=10001")

    def test_payload_reads(self) -> None:
        q, tx = unique("dlq"), unique()
        self.c.config(q, max_deliveries=1)
        self.c.enqueue(q, tx, b"\x00a\r\nb")
        t = self.c.get(tx, payload=True)
        assert t is not None
        self.assertEqual((t.payload, t.payload_bytes, t.failed_deliveries), (b"\x00a\r\nb", 5, 0))
        self.assertIsNone(self.c.get(tx).payload)  # type: ignore[union-attr]
        self.assertIsNone(self.c.get(unique(), payload=True))
        self.c.reserve(q)
        self.c.release(tx, 1)
        letters = self.c.deadletters(q, payload=True)
        self.assertEqual([(x.tx_id, x.payload, x.payload_bytes) for x in letters], [(tx, b"\x00a\r\nb", 5)])
        self.assertIsNone(self.c.deadletters(q)[0].payload)
        self.c.ping()  # still in step

    def test_aio(self) -> None:
        async def main() -> None:
            c = await aio.Client.connect("127.0.0.1", self.port, timeout=10)
            try:
                q, tx = unique("q"), unique()
                await c.config(q, max_deliveries=1)
                await c.enqueue(q, tx, b"xy")
                await c.pause(q)
                self.assertIsNone(await c.reserve([q, unique("other")]))
                await c.resume(q)
                r = await c.reserve([unique("other"), q])
                assert r is not None
                self.assertEqual((await c.touch(tx, 1)).status, "OK")
                self.assertEqual((await c.release(tx, 1)).status, "BURIED")
                letters = await c.deadletters(q, payload=True)
                self.assertEqual(letters[0].payload, b"xy")
                t = await c.get(tx, payload=True)
                assert t is not None
                self.assertEqual(t.payload, b"xy")
                self.assertEqual(await c.redrive_all(q), 1)
                await c.reserve(q)
                await c.release(tx, 1)
                self.assertEqual(await c.resolve_all(q, "FAILED"), 1)
            finally:
                await c.close()

        asyncio.run(asyncio.wait_for(main(), 30))
