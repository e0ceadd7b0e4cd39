"""The asyncio client: the same commands, pipelined on one connection."""

from __future__ import annotations

import asyncio
import random
import time
from typing import Any, Awaitable, Callable

import tarde
from tarde import aio

from .support import ServerTestCase, unique


class AioTest(ServerTestCase):
    def run_async(self, fn: Callable[[], Awaitable[Any]]) -> Any:
        return asyncio.run(asyncio.wait_for(fn(), 30))

    def test_backup_without_backup_dir_is_not_configured(self) -> None:
        async def main() -> None:
            c = await aio.Client.connect("127.0.0.1", self.port, timeout=10)
            try:
                with self.assertRaises(tarde.NotConfigured):
                    await c.backup()
                await asyncio.wait_for(c.ping(), 10)
            finally:
                await c.close()

        self.run_async(main)

    def test_connect_and_commands(self) -> None:
        async def main() -> None:
            c = await aio.Client.connect("127.0.0.1", self.port, timeout=10)
            try:
                q, tx = unique("q"), unique()
                await c.ping()
                s = await c.enqueue(q, tx, b"\x00payload\r\n", base="1h", jitter=0)
                self.assertEqual(s, tarde.Summary("CREATED", tx, "SENDING", 0, 1, 0))
                r = await c.reserve(q)
                self.assertEqual(r, tarde.Request(tx, 1, f"{tx}#1", 1, b"\x00payload\r\n"))
                self.assertEqual((await c.sent(tx, 1)).state, "IN_FLIGHT")
                self.assertEqual((await c.respond(tx, 1, "CANCELLED")).state, "SCHEDULED")
                t = await c.get(tx)
                assert t is not None
                self.assertEqual((t.state, t.next_attempt), ("SCHEDULED", 2))
                self.assertEqual((await c.resolve(tx, "SUCCEEDED")).state, "SUCCEEDED")
                events = await c.history(tx)
                assert events is not None
                self.assertEqual([e.cause for e in events], ["ENQUEUE", "SENT", "RESPOND", "RESOLVE"])
                self.assertIsNone(await c.get(unique()))
                self.assertIsNone(await c.history(unique()))
                self.assertEqual(await c.deadletters(q), [])
                self.assertEqual((await c.redrive(q, tx)).status, "NOT_FOUND")
                self.assertEqual((await c.config(q, rate=7))["rate"], "7")
                self.assertGreaterEqual((await c.stats())["connections"], 1)
                tx2 = unique()
                await c.enqueue(q, tx2)
                await c.reserve(q)
                self.assertEqual((await c.release(tx2, 1, delay=0, reason="X")).status, "OK")
                with self.assertRaises(ValueError):
                    await c.get("bad id")
                with self.assertRaises(tarde.BadCommand):
                    await c._raw("NOPE")
            finally:
                await c.close()
            self.assertTrue(c.closed)
            with self.assertRaises(ConnectionError):
                await c.ping()

        self.run_async(main)

    def test_pipelining_matches_replies(self) -> None:
        async def main() -> None:
            async with aio.Client("127.0.0.1", self.port, timeout=10) as c:
                q = unique("q")
                ids = [unique(f"P{i}") for i in range(300)]
                summaries = await asyncio.gather(*(c.enqueue(q, tx, tx.encode()) for tx in ids))
                self.assertEqual([s.tx_id for s in summaries], ids)
                self.assertTrue(all(s.status == "CREATED" for s in summaries))
                # Mixed commands, issued concurrently in random order: each reply matches its command.
                order = ids[:]
                random.Random(7).shuffle(order)
                jobs = []
                for i, tx in enumerate(order):
                    if i % 3 == 0:
                        jobs.append(("get", tx, c.get(tx)))
                    elif i % 3 == 1:
                        jobs.append(("history", tx, c.history(tx)))
                    else:
                        jobs.append(("exists", tx, c.enqueue(q, tx)))
                jobs.append(("bad", "", c._raw("BOGUS")))
                jobs.append(("ping", "", c.ping()))
                results = await asyncio.gather(*(j[2] for j in jobs), return_exceptions=True)
                for (kind, tx, _), result in zip(jobs, results):
                    if kind == "get":
                        self.assertEqual(result.tx_id, tx)
                        self.assertEqual(result.payload_bytes, len(tx))
                    elif kind == "history":
                        self.assertEqual(len(result), 1)
                        self.assertEqual(result[0].cause, "ENQUEUE")
                    elif kind == "exists":
                        self.assertEqual((result.status, result.tx_id), ("EXISTS", tx))
                    elif kind == "bad":
                        self.assertIsInstance(result, tarde.BadCommand)
                    else:
                        self.assertIsNone(result)
                # Reserve them all back, pipelined: every request is handed out once.
                got = await asyncio.gather(*(c.reserve(q) for _ in ids))
                self.assertEqual(sorted(r.tx_id for r in got), sorted(ids))
                self.assertTrue(all(r.payload == r.tx_id.encode() for r in got))
                self.assertIsNone(await c.reserve(q))

        self.run_async(main)

    def test_reserve_wait_and_empty(self) -> None:
        async def main() -> None:
            q = unique("q")
            async with aio.Client("127.0.0.1", self.port, timeout=0.5) as waiter, aio.Client(
                "127.0.0.1", self.port, timeout=5
            ) as producer:
                start = time.monotonic()
                self.assertIsNone(await waiter.reserve(q, wait="300ms"))
                self.assertGreaterEqual(time.monotonic() - start, 0.29)
                pending = asyncio.ensure_future(waiter.reserve(q, wait=10))
                await asyncio.sleep(0.05)
                tx = unique()
                await producer.enqueue(q, tx)
                got = await pending
                self.assertIsNotNone(got)
                self.assertEqual(got.tx_id, tx)

        self.run_async(main)

    def test_cancelled_caller_keeps_connection_in_step(self) -> None:
        async def main() -> None:
            async with aio.Client("127.0.0.1", self.port, timeout=5) as c:
                q = unique("q")
                slow = asyncio.ensure_future(c.reserve(q, wait="300ms"))
                after = asyncio.ensure_future(c.stats())
                await asyncio.sleep(0.05)
                slow.cancel()
                stats = await after  # the reply to RESERVE was read and dropped first
                self.assertIn("uptime_ms", stats)
                await c.ping()

        self.run_async(main)

    def test_timeout_closes_connection(self) -> None:
        async def main() -> None:
            accepted: list = []
            server = await asyncio.start_server(lambda r, w: accepted.append(w), "127.0.0.1", 0)
            port = server.sockets[0].getsockname()[1]
            try:
                c = await aio.Client.connect("127.0.0.1", port, timeout=0.2)
                first = asyncio.ensure_future(c.ping())
                second = asyncio.ensure_future(c.ping())
                with self.assertRaises(TimeoutError):
                    await first
                with self.assertRaises(ConnectionError):
                    await second
                with self.assertRaises(ConnectionError):
                    await c.ping()
                await c.close()
            finally:
                for w in accepted:
                    w.close()
                server.close()
                await server.wait_closed()

        self.run_async(main)

    def test_server_close_fails_pending(self) -> None:
        async def main() -> None:
            async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
                await reader.readline()
                writer.write(b"PONG\r\n")
                await reader.readline()
                writer.close()

            server = await asyncio.start_server(handler, "127.0.0.1", 0)
            port = server.sockets[0].getsockname()[1]
            try:
                c = await aio.Client.connect("127.0.0.1", port, timeout=5)
                await c.ping()
                with self.assertRaises(ConnectionError):
                    await c.ping()
                with self.assertRaises(ConnectionError):
                    await c.ping()
                await c.close()
            finally:
                server.close()
                await server.wait_closed()

        self.run_async(main)
