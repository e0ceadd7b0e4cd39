"""The asyncio client after errors: later calls work, none ever hangs.

The regression: an error raised by ``await client.call()`` used to carry the
frame of the client's read loop in its traceback. ``assertRaises`` clears the
frames of the traceback it caught on exit, and on Python 3.12 and older
clearing the suspended frame of a coroutine closes that coroutine: the read
loop stopped, and every later call waited forever.
"""

from __future__ import annotations

import asyncio
import types
import unittest
from typing import Any, Awaitable, Generator, List, Optional, TypeVar

import tarde
from tarde import _protocol as p
from tarde import aio

from .support import ServerTestCase, unique

T = TypeVar("T")

#: The client's own read loop: no error handed to a caller may hold its frames.
READER_FRAMES = {"_read_loop", "_read_reply", "_parse"}

#: Seconds a call that must succeed gets before the test fails instead of hanging.
PROMPT_S = 5.0


def frame_names(error: BaseException) -> List[str]:
    """The names of the functions of every frame ``error`` and its chained causes hold."""
    names: List[str] = []
    seen: set = set()
    todo: List[Optional[BaseException]] = [error]
    while todo:
        e = todo.pop()
        if e is None or id(e) in seen:
            continue
        seen.add(id(e))
        tb: Optional[types.TracebackType] = e.__traceback__
        while tb is not None:
            names.append(tb.tb_frame.f_code.co_name)
            tb = tb.tb_next
        todo += [e.__cause__, e.__context__]
    return names


class AioErrorTest(ServerTestCase, unittest.IsolatedAsyncioTestCase):
    async def asyncSetUp(self) -> None:
        self.c = await aio.Client.connect("127.0.0.1", self.port, timeout=10)

    async def asyncTearDown(self) -> None:
        await asyncio.wait_for(self.c.close(), PROMPT_S)

    async def soon(self, call: Awaitable[T]) -> T:
        return await asyncio.wait_for(call, PROMPT_S)

    async def error_of(self, call: Awaitable[Any]) -> BaseException:
        """The error ``call`` raises, with its traceback (``assertRaises`` drops it)."""
        try:
            await self.soon(call)
        except Exception as e:
            return e
        self.fail("no error")

    def assert_no_reader_frames(self, error: BaseException) -> None:
        names = frame_names(error)
        self.assertIn("_call", names, "raised by the caller")
        self.assertEqual(READER_FRAMES & set(names), set(), repr(error))

    async def test_assert_raises_around_a_call_keeps_the_client_working(self) -> None:
        c = self.c
        for _ in range(3):
            with self.assertRaises(tarde.BadCommand):
                await self.soon(c._raw("NOPE"))
            with self.assertRaises(tarde.NotConfigured):
                await self.soon(c.backup())
            await self.soon(c.ping())
            self.assertIn("uptime_ms", await self.soon(c.stats()))
        self.assertFalse(c.closed)

    async def test_errors_hold_only_the_callers_frames(self) -> None:
        error = await self.error_of(self.c._raw("NOPE"))
        self.assertIsInstance(error, tarde.BadCommand)
        self.assert_no_reader_frames(error)

    async def test_an_error_in_a_pipeline_leaves_the_other_calls_alone(self) -> None:
        c = self.c
        q = unique("q")
        # The waiting reservations hold back the replies behind them, so the
        # error arrives while other calls wait, and is caught while the read
        # loop waits for the next reply.
        first = asyncio.ensure_future(c.reserve(q, wait="100ms"))
        bad = asyncio.ensure_future(c._raw("NOPE"))
        behind = asyncio.ensure_future(c.reserve(q, wait="100ms"))
        after = asyncio.ensure_future(asyncio.gather(c.ping(), c.get(unique()), c.stats()))
        with self.assertRaises(tarde.BadCommand):
            await self.soon(bad)
        pong, missing, stats = await self.soon(after)
        self.assertIsNone(pong)
        self.assertIsNone(missing)
        self.assertIn("uptime_ms", stats)
        self.assertIsNone(await self.soon(first))
        self.assertIsNone(await self.soon(behind))
        await self.soon(c.ping())

    async def test_a_cancelled_call_leaves_the_connection_in_step(self) -> None:
        c = self.c
        q = unique("q")
        with self.assertRaises(asyncio.TimeoutError):
            await asyncio.wait_for(c.reserve(q, wait="300ms"), 0.05)
        # Cancelled while its error reply is still held back behind a waiting reservation.
        slow = asyncio.ensure_future(c.reserve(q, wait="100ms"))
        with self.assertRaises(asyncio.TimeoutError):
            await asyncio.wait_for(c._raw("NOPE"), 0.01)
        self.assertIsNone(await self.soon(slow))
        await self.soon(c.ping())  # the dropped replies were read first, in order
        tx = unique()
        self.assertEqual((await self.soon(c.enqueue(q, tx))).status, "CREATED")
        self.assertFalse(c.closed)

    async def test_a_reader_closed_from_outside_fails_later_calls(self) -> None:
        c = self.c
        await self.soon(c.ping())
        # What clearing its suspended frame did on Python 3.12 and older.
        assert c._task is not None
        c._task.get_coro().close()  # type: ignore[union-attr]
        self.assertTrue(c.closed)
        with self.assertRaises(ConnectionError) as caught:
            await self.soon(c.ping())
        self.assertIn("stopped reading replies", str(caught.exception))

    async def test_an_unexpected_reader_error_fails_waiting_and_later_calls(self) -> None:
        c = self.c

        def broken_parser() -> Generator[int, bytes, Any]:
            yield -1
            raise RuntimeError("a bug in a reply parser")

        q = unique("q")
        ahead = asyncio.ensure_future(c.reserve(q, wait="100ms"))
        broken = asyncio.ensure_future(c._call(p.command(b"PING"), broken_parser()))
        waiting = asyncio.ensure_future(c.ping())
        self.assertIsNone(await self.soon(ahead))
        for call in (broken, waiting):
            error = await self.error_of(call)
            self.assertIsInstance(error, ConnectionError)
            self.assertIn("RuntimeError('a bug in a reply parser')", str(error))
            self.assert_no_reader_frames(error)
        self.assertTrue(c.closed)
        with self.assertRaises(ConnectionError):
            await self.soon(c.ping())


if __name__ == "__main__":
    unittest.main()
