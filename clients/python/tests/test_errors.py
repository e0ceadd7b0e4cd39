"""The error table, and the error codes that need a specially started server."""

from __future__ import annotations

import asyncio
import re
import signal
import threading
import unittest

import tarde
from tarde import aio

from .support import REPO_ROOT, ServerTestCase, TardeServer, unique, wait_for_commands

PROTOCOL_MD = REPO_ROOT / "net" / "PROTOCOL.md"


class ErrorTableTest(unittest.TestCase):
    EXPECTED = {
        "BAD_COMMAND": (tarde.BadCommand, False),
        "BAD_ARGUMENT": (tarde.BadArgument, False),
        "UNAUTHORIZED": (tarde.Unauthorized, False),
        "INTERNAL": (tarde.Internal, False),
        "LINE_TOO_LONG": (tarde.LineTooLong, True),
        "PAYLOAD_TOO_LARGE": (tarde.PayloadTooLarge, True),
        "BAD_PAYLOAD": (tarde.BadPayload, True),
        "OVERLOADED": (tarde.Overloaded, True),
        "SHUTTING_DOWN": (tarde.ShuttingDown, True),
        "NOT_CONFIGURED": (tarde.NotConfigured, False),
        "BUSY": (tarde.Busy, False),
        "BACKUP_FAILED": (tarde.BackupFailed, False),
    }

    def test_every_code_maps_to_its_class(self) -> None:
        self.assertEqual(set(tarde.ERROR_CLASSES), set(self.EXPECTED))
        for code, (cls, closes) in self.EXPECTED.items():
            err = tarde.error_from_reply(f"ERR {code} something went wrong")
            self.assertIs(type(err), cls, code)
            self.assertIsInstance(err, tarde.TardeError)
            self.assertEqual(err.code, code)
            self.assertEqual(err.message, "something went wrong")
            self.assertEqual(err.closes_connection, closes, code)
            self.assertIn(code, str(err))

    def test_table_covers_protocol_md(self) -> None:
        if not PROTOCOL_MD.exists():
            self.skipTest("net/PROTOCOL.md not found")
        text = PROTOCOL_MD.read_text()
        section = text[text.index("## Errors") :]
        section = section[: section.find("\n## ", 3)]
        codes = set(re.findall(r"^\| `([A-Z_]+)` \|", section, re.M))
        self.assertTrue(codes)
        self.assertEqual(codes, set(tarde.ERROR_CLASSES))
        for code in codes:
            row = re.search(rf"^\| `{code}` \|.*\| ([^|]+) \|$", section, re.M)
            assert row is not None
            self.assertEqual(tarde.ERROR_CLASSES[code].closes_connection, "closed" in row.group(1), code)

    def test_unknown_code_and_garbage(self) -> None:
        err = tarde.error_from_reply("ERR NEW_THING later")
        self.assertIs(type(err), tarde.TardeError)
        self.assertEqual((err.code, err.message), ("NEW_THING", "later"))
        self.assertEqual(tarde.error_from_reply("ERR INTERNAL").message, "")
        self.assertIsInstance(tarde.error_from_reply("WHAT"), tarde.ProtocolError)

    def test_results_are_not_errors(self) -> None:
        for word in ("STALE", "EXISTS", "NOT_FOUND", "CONFLICT"):
            self.assertNotIn(word, tarde.ERROR_CLASSES)


class AuthTest(ServerTestCase):
    server_token = "s3cret-token"

    def test_without_token(self) -> None:
        c = self.client(token=None)
        c.ping()  # PING needs no AUTH
        with self.assertRaises(tarde.Unauthorized) as cm:
            c.stats()
        self.assertEqual(cm.exception.code, "UNAUTHORIZED")
        with self.assertRaises(tarde.Unauthorized):
            c.enqueue("q", unique())
        c.ping()  # still open

    def test_wrong_token_fails_at_connect(self) -> None:
        with self.assertRaises(tarde.Unauthorized):
            tarde.Client("127.0.0.1", self.port, token="wrong")

    def test_right_token(self) -> None:
        c = self.client()
        self.assertEqual(c.enqueue("q", unique()).status, "CREATED")

    def test_aio_token(self) -> None:
        async def main() -> None:
            with self.assertRaises(tarde.Unauthorized):
                await aio.Client.connect("127.0.0.1", self.port, token="wrong", timeout=5)
            async with aio.Client("127.0.0.1", self.port, token=self.server_token, timeout=5) as c:
                self.assertIsInstance((await c.stats())["commands"], int)

        asyncio.run(main())


class PayloadTooLargeTest(ServerTestCase):
    server_args = ("--max-payload", "64")

    def test_payload_too_large_closes(self) -> None:
        c = self.client()
        self.assertEqual(c.enqueue("q", unique(), b"x" * 64).status, "CREATED")
        with self.assertRaises(tarde.PayloadTooLarge) as cm:
            c.enqueue("q", unique(), b"x" * 1000)
        self.assertTrue(cm.exception.closes_connection)
        self.assertTrue(c.closed)
        with self.assertRaises(ConnectionError):
            c.ping()


class OverloadedTest(ServerTestCase):
    server_args = ("--max-connections", "1")

    def test_overloaded(self) -> None:
        first = self.client()
        first.ping()
        second = self.client()
        with self.assertRaises(tarde.Overloaded):
            second.ping()
        with self.assertRaises(ConnectionError):
            second.ping()
        first.ping()

    def test_overloaded_aio(self) -> None:
        first = self.client()
        first.ping()

        async def main() -> None:
            async with aio.Client("127.0.0.1", self.port, timeout=5) as c:
                with self.assertRaises(tarde.Overloaded):
                    await c.ping()
                with self.assertRaises(ConnectionError):
                    await c.ping()

        asyncio.run(main())


class ShuttingDownTest(unittest.TestCase):
    def test_waiting_reserve_gets_shutting_down(self) -> None:
        server = TardeServer()
        self.addCleanup(server.cleanup)
        server.start()
        watcher = server.client()
        self.addCleanup(watcher.close)
        waiting = server.client()
        self.addCleanup(waiting.close)
        errors: list = []

        def wait() -> None:
            try:
                waiting.reserve("q", wait=20)
            except BaseException as e:  # noqa: B036 - recorded for the assertion
                errors.append(e)

        before = watcher.stats()["commands"]
        t = threading.Thread(target=wait)
        t.start()
        wait_for_commands(watcher, before)  # the RESERVE is waiting
        assert server.proc is not None
        server.proc.send_signal(signal.SIGTERM)
        t.join(10)
        self.assertFalse(t.is_alive())
        self.assertEqual(len(errors), 1)
        self.assertIsInstance(errors[0], tarde.ShuttingDown)
        self.assertEqual(server.proc.wait(10), 0)  # exits 0 after SIGTERM
        with self.assertRaises(ConnectionError):
            waiting.ping()
