"""The blocking client against a real server: every command and reply shape."""

from __future__ import annotations

import os
import shutil
import socket
import tempfile
import threading
import time

import tarde

from .support import ServerTestCase, unique, wait_for_commands, wait_until


def now_ms() -> int:
    return int(time.time() * 1000)


class CommandsTest(ServerTestCase):
    def setUp(self) -> None:
        self.c = self.client()
        self.q = unique("q")

    def test_ping_and_context_manager(self) -> None:
        with self.server.client() as c:
            self.assertIsNone(c.ping())
            self.assertFalse(c.closed)
        self.assertTrue(c.closed)
        with self.assertRaises(ConnectionError):
            c.ping()

    def test_enqueue_created_then_exists(self) -> None:
        tx = unique()
        s = self.c.enqueue(self.q, tx, b'{"amount":1250}')
        self.assertEqual(s, tarde.Summary("CREATED", tx, "SENDING", 0, 1, 0))
        self.assertTrue(s.found)
        self.assertFalse(s.terminal)
        again = self.c.enqueue(self.q, tx, b"other", max_attempts=9)
        self.assertEqual(again.status, "EXISTS")
        t = self.c.get(tx)
        assert t is not None
        self.assertEqual((t.max_attempts, t.payload_bytes), (4, 15))

    def test_enqueue_options(self) -> None:
        tx = unique()
        s = self.c.enqueue(self.q, tx, sent=True, max_attempts=2, base="50ms", factor=1.5, cap=10, jitter=0, strict_cap=True, deadline="1h")
        self.assertEqual((s.status, s.state, s.attempt, s.next_attempt), ("CREATED", "IN_FLIGHT", 1, 0))
        t = self.c.get(tx)
        assert t is not None
        self.assertEqual(t.max_attempts, 2)
        self.assertAlmostEqual(t.deadline_at - t.created_at, 3_600_000, delta=5)
        before = now_ms()
        d = self.c.enqueue(self.q, unique(), delay=10)
        self.assertEqual((d.state, d.next_attempt), ("SCHEDULED", 1))
        self.assertGreaterEqual(d.next_fire_at, before + 10_000)
        self.assertLess(d.next_fire_at, now_ms() + 10_000 + 5)

    def test_payload_round_trip_binary(self) -> None:
        tx = unique()
        payload = bytes(range(256)) + b"\r\nEND\n\r\n"
        self.c.enqueue(self.q, tx, payload)
        self.c.enqueue(self.q, unique(), "héllo")  # str payloads are UTF-8
        r = self.c.reserve(self.q)
        self.assertEqual(r, tarde.Request(tx, 1, f"{tx}#1", 1, payload))
        r2 = self.c.reserve(self.q)
        assert r2 is not None
        self.assertEqual(r2.payload, "héllo".encode())
        self.assertIsNone(self.c.reserve(self.q))  # EMPTY at once

    def test_reserve_waits_for_a_request(self) -> None:
        tx = unique()
        got: list = []
        other = self.client()
        before = other.stats()["commands"]
        t = threading.Thread(target=lambda: got.append(self.c.reserve(self.q, wait=10)))
        t.start()
        wait_for_commands(other, before)  # the RESERVE is waiting
        other.enqueue(self.q, tx, b"x")
        t.join(10)
        self.assertFalse(t.is_alive())
        self.assertEqual(got[0].tx_id, tx)

    def test_reserve_wait_ends_empty(self) -> None:
        start = time.monotonic()
        self.assertIsNone(self.c.reserve(self.q, wait="300ms"))
        elapsed = time.monotonic() - start
        self.assertGreaterEqual(elapsed, 0.29)
        self.assertLess(elapsed, 5)
        # The read timeout of a waiting RESERVE is timeout + wait.
        c = self.client(timeout=0.4)
        self.assertIsNone(c.reserve(self.q, wait=0.6))

    def test_sent_ok_then_stale(self) -> None:
        tx = unique()
        self.c.enqueue(self.q, tx)
        self.c.reserve(self.q)
        self.assertEqual(self.c.sent(tx, 1), tarde.Summary("OK", tx, "IN_FLIGHT", 1, 0, 0))
        self.assertEqual(self.c.sent(tx, 1).status, "STALE")
        self.assertEqual(self.c.sent(unique(), 1).status, "NOT_FOUND")

    def test_release_with_delay_and_reason(self) -> None:
        tx = unique()
        self.c.enqueue(self.q, tx)
        self.c.reserve(self.q)
        s = self.c.release(tx, 1, delay="5s", reason="SOCKET_RESET")
        self.assertEqual((s.status, s.state, s.next_attempt), ("OK", "SENDING", 1))
        self.assertIsNone(self.c.reserve(self.q))  # not ready for 5 s
        t = self.c.get(tx)
        assert t is not None
        self.assertEqual(t.failed_deliveries, 1)
        self.assertEqual(t.deliveries, 1)  # the former name still reads
        # Another connection does not hold the lease: STALE.
        self.c.enqueue(self.q, tx + "b")
        self.c.reserve(self.q)
        with self.server.client() as other:
            self.assertEqual(other.release(tx + "b", 1).status, "STALE")

    def test_buried_deadletters_redrive(self) -> None:
        q = unique("dlq")
        self.c.config(q, max_deliveries=1)
        tx = unique()
        self.c.enqueue(q, tx, b"p")
        self.c.reserve(q)
        s = self.c.release(tx, 1, reason="BOOM")
        self.assertEqual((s.status, s.state), ("BURIED", "SENDING"))
        letters = self.c.deadletters(q)
        self.assertEqual(len(letters), 1)
        letter = letters[0]
        self.assertEqual((letter.tx_id, letter.attempt, letter.key, letter.failed_deliveries, letter.last_error), (tx, 1, f"{tx}#1", 1, "BOOM"))
        self.assertGreater(letter.buried_at, now_ms() - 60_000)
        self.assertEqual(len(self.c.deadletters(q, limit=1)), 1)
        r = self.c.redrive(q, tx)
        self.assertEqual((r.status, r.tx_id, r.state), ("OK", tx, "SENDING"))
        self.assertEqual(self.c.deadletters(q), [])
        self.assertEqual(self.c.redrive(q, tx).status, "NOT_FOUND")
        req = self.c.reserve(q)
        assert req is not None
        self.assertEqual((req.tx_id, req.handouts), (tx, 1))

    def test_list_pages_with_cursors_prefix_and_reason(self) -> None:
        q = unique("lq")
        ids = [f"{q}-s{i}" for i in range(5)]
        for tx in ids:
            self.c.enqueue(q, tx, delay="1h")
        self.c.enqueue(q, f"{q}-f", sent=True)
        self.c.respond(f"{q}-f", 1, "REJECTED", reason="CARD")
        seen = []
        after = None
        pages = 0
        while True:
            page = self.c.list(q, "scheduled", after=after, limit=2)
            self.assertLessEqual(len(page.items), 2)
            seen += [item.tx_id for item in page.items]
            pages += 1
            if page.next is None:
                break
            after = page.next
        self.assertEqual(seen, ids)
        self.assertEqual(pages, 3)
        first = self.c.list(q, "scheduled", limit=1).items[0]
        self.assertEqual((first.state, first.attempt, first.next_attempt, first.deliveries, first.reason), ("SCHEDULED", 0, 1, 0, None))
        self.assertGreater(first.next_fire_at, now_ms())
        self.assertEqual([i.tx_id for i in self.c.list(q, "scheduled", prefix=f"{q}-s3").items], [f"{q}-s3"])
        failed = self.c.list(q, "failed", reason="CARD")
        self.assertEqual(([i.tx_id for i in failed.items], failed.next), ([f"{q}-f"], None))
        self.assertEqual(failed.items[0].reason, "CARD")
        self.assertEqual(self.c.list(q, "failed", reason="OTHER").items, [])
        self.assertEqual(self.c.list(q, "ready"), tarde.ListPage(items=[], next=None))
        self.c.enqueue(q, f"{q}-r")
        self.assertEqual([i.tx_id for i in self.c.list(q, "ready").items], [f"{q}-r"])
        self.c.reserve(q)
        self.assertEqual(self.c.list(q, "ready").items, [])
        self.assertEqual([i.tx_id for i in self.c.list(q, "leased").items], [f"{q}-r"])
        # A cursor of another kind of listing is the server's BAD_ARGUMENT.
        with self.assertRaises(tarde.BadArgument):
            self.c.list(q, "ready", after="tX")

    def test_respond_outcomes(self) -> None:
        ids = {o: unique(o) for o in ("SUCCESS", "CANCELLED", "TRANSIENT", "REJECTED")}
        for tx in ids.values():
            self.c.enqueue(self.q, tx, base="1h", jitter=0, sent=True)
        s = self.c.respond(ids["SUCCESS"], 1, "SUCCESS")
        self.assertEqual((s.status, s.state), ("OK", "SUCCEEDED"))
        self.assertTrue(s.terminal)
        before = now_ms()
        s = self.c.respond(ids["CANCELLED"], 1, "cancelled", reason="NOT_NOW")  # case-insensitive
        self.assertEqual((s.state, s.attempt, s.next_attempt), ("SCHEDULED", 1, 2))
        self.assertTrue(before + 3_600_000 - 5 <= s.next_fire_at <= now_ms() + 3_600_000 + 5, s)
        before = now_ms()
        s = self.c.respond(ids["TRANSIENT"], 1, "TRANSIENT", retry_after=2.5)
        self.assertEqual((s.state, s.next_attempt), ("SCHEDULED", 1))
        self.assertTrue(before + 2_500 - 5 <= s.next_fire_at <= now_ms() + 2_500 + 5, s)
        s = self.c.respond(ids["REJECTED"], 1, "REJECTED", reason="CARD_DECLINED")
        self.assertEqual(s.state, "FAILED")
        t = self.c.get(ids["REJECTED"])
        assert t is not None
        self.assertEqual(t.reason, "CARD_DECLINED")
        self.assertEqual(self.c.respond(ids["SUCCESS"], 1, "SUCCESS").status, "STALE")

    def test_resolve(self) -> None:
        tx = unique()
        self.c.enqueue(self.q, tx, delay="1h")
        s = self.c.resolve(tx, "SUCCEEDED", reason="PAID_BY_HAND")
        self.assertEqual((s.status, s.state), ("OK", "SUCCEEDED"))
        self.assertEqual(self.c.resolve(tx, "FAILED").status, "STALE")
        live = unique()
        self.c.enqueue(self.q, live)
        self.assertEqual(self.c.resolve(live, "FAILED").status, "CONFLICT")
        self.assertEqual(self.c.resolve(unique(), "FAILED").status, "NOT_FOUND")
        failed = unique()
        self.c.enqueue(self.q, failed, delay="1h")
        self.c.resolve(failed, "failed")
        t = self.c.get(failed)
        assert t is not None
        self.assertEqual((t.state, t.reason), ("FAILED", "RESOLVED"))

    def test_get(self) -> None:
        tx = unique()
        self.assertIsNone(self.c.get(tx))
        self.c.enqueue(self.q, tx, b"12345", max_attempts=3)
        t = self.c.get(tx)
        assert t is not None
        self.assertEqual(
            (t.tx_id, t.queue, t.state, t.attempt, t.next_attempt, t.max_attempts, t.next_fire_at, t.deadline_at, t.failed_deliveries, t.transients, t.reason, t.payload_bytes),
            (tx, self.q, "SENDING", 0, 1, 3, 0, 0, 0, 0, None, 5),
        )
        self.assertGreater(t.created_at, now_ms() - 60_000)
        self.assertGreaterEqual(t.updated_at, t.created_at)
        self.assertFalse(t.terminal)

    def test_history(self) -> None:
        tx = unique()
        self.assertIsNone(self.c.history(tx))
        self.c.enqueue(self.q, tx, base="1h")
        self.c.reserve(self.q)
        self.c.sent(tx, 1)
        self.c.respond(tx, 1, "CANCELLED", reason="NOT_NOW")
        events = self.c.history(tx)
        assert events is not None
        self.assertEqual(
            [(e.from_state, e.to_state, e.attempt, e.next_attempt, e.cause, e.reason) for e in events],
            [
                (None, "SENDING", 0, 1, "ENQUEUE", None),
                ("SENDING", "IN_FLIGHT", 1, 0, "SENT", None),
                ("IN_FLIGHT", "SCHEDULED", 1, 2, "RESPOND", "NOT_NOW"),
            ],
        )
        self.assertTrue(all(e.at > 0 for e in events))
        self.assertEqual([(e.seq, e.dropped, e.due, e.late) for e in events], [(0, 0, None, None), (1, 0, None, None), (2, 0, None, None)])
        last = self.c.history(tx, limit=1)
        self.assertEqual(last, events[-1:])

    def test_history_bounded_by_history_max_keeps_the_first_event(self) -> None:
        self.c.config(self.q, history_max=3)
        tx = unique()
        self.c.enqueue(self.q, tx)
        for _ in range(4):  # each RELEASE writes one event and makes the request ready again
            req = self.c.reserve(self.q)
            assert req is not None
            self.c.release(tx, 1)
        events = self.c.history(tx)
        assert events is not None
        # Events 0 (ENQUEUE) to 4 were written; history_max=3 keeps the first and the newest two.
        self.assertEqual([(e.seq, e.dropped) for e in events], [(0, 0), (3, 2), (4, 0)])
        self.assertEqual(events[0].cause, "ENQUEUE")

    def test_config(self) -> None:
        settings = self.c.config(self.q)
        self.assertEqual(settings["max_attempts"], "4")
        self.assertEqual(settings["base"], "2h")
        self.assertIn("retention", settings)
        self.assertEqual((settings["history_max"], settings["stuck_after"], settings["paused"]), ("1000", "1h", "0"))
        changed = self.c.config(
            self.q, base=0.05, transient_cap="200ms", lease=90, jitter=0, breaker=False, rate=50, max_deliveries=3,
            history_max=20, stuck_after=120,
        )
        self.assertEqual(
            {k: changed[k] for k in ("base", "transient_cap", "lease", "jitter", "breaker", "rate", "max_deliveries",
                                     "history_max", "stuck_after")},
            {"base": "50ms", "transient_cap": "200ms", "lease": "90s", "jitter": "0", "breaker": "0", "rate": "50",
             "max_deliveries": "3", "history_max": "20", "stuck_after": "2m"},
        )
        self.assertEqual(self.c.config(self.q), changed)

    def test_stats(self) -> None:
        stats = self.c.stats()
        for name in ("uptime_ms", "connections", "commands", "transactions", "sending", "ready", "dead_letters"):
            self.assertIsInstance(stats[name], int, name)
        self.assertGreaterEqual(stats["connections"], 1)
        before = stats["transactions"]
        self.c.enqueue(self.q, unique())
        wait_until(lambda: self.c.stats()["transactions"] == before + 1, what="transactions + 1")


class BackupTest(ServerTestCase):
    """BACKUP against a server with a backup directory."""

    backup_root = ""

    @classmethod
    def setUpClass(cls) -> None:
        cls.backup_root = tempfile.mkdtemp(prefix="tarde-backups-")
        cls.server_args = ("--backup-dir", os.path.join(cls.backup_root, "backups"))
        super().setUpClass()

    @classmethod
    def tearDownClass(cls) -> None:
        super().tearDownClass()
        shutil.rmtree(cls.backup_root, ignore_errors=True)

    def test_backup_returns_what_it_made(self) -> None:
        c = self.client()
        c.enqueue(unique("q"), unique())
        first = c.backup()
        self.assertIsInstance(first, tarde.Backup)
        self.assertGreater(first.bytes, 0)
        self.assertGreater(first.files, 0)
        self.assertGreaterEqual(first.took_ms, 0)
        second = c.backup()
        self.assertEqual(second.id, first.id + 1)
        self.assertTrue(os.path.isdir(os.path.join(self.backup_root, "backups", "meta")))
        c.ping()  # the connection goes on


class ValidationTest(ServerTestCase):
    """Bad arguments raise before anything is sent, and the connection stays in step."""

    def test_nothing_sent_for_bad_arguments(self) -> None:
        c = self.client()
        before = c.stats()["commands"]
        bad = [
            (ValueError, lambda: c.get("TX 1")),
            (ValueError, lambda: c.get("TX-1\r\nSTATS")),
            (ValueError, lambda: c.get("TX-1\n")),
            (ValueError, lambda: c.get("")),
            (ValueError, lambda: c.get("x" * 201)),
            (ValueError, lambda: c.get("TX-é")),
            (TypeError, lambda: c.get(7)),  # type: ignore[arg-type]
            (ValueError, lambda: c.enqueue("bad queue", "TX-1")),
            (ValueError, lambda: c.enqueue("q" * 65, "TX-1")),
            (ValueError, lambda: c.enqueue("q", "TX 1", b"x")),
            (ValueError, lambda: c.enqueue("q", "TX-1", base="5 s")),
            (ValueError, lambda: c.enqueue("q", "TX-1", base=-1)),
            (ValueError, lambda: c.enqueue("q", "TX-1", base="1.5s")),
            (ValueError, lambda: c.enqueue("q", "TX-1", delay="3651d")),
            (ValueError, lambda: c.enqueue("q", "TX-1", jitter=2)),
            (ValueError, lambda: c.enqueue("q", "TX-1", max_attempts=0)),
            (ValueError, lambda: c.enqueue("q", "TX-1", sent=True, delay=1)),
            (TypeError, lambda: c.enqueue("q", "TX-1", 12)),  # type: ignore[arg-type]
            (TypeError, lambda: c.enqueue("q", "TX-1", colour=1)),  # type: ignore[call-arg]
            (ValueError, lambda: c.sent("TX-1", 0)),
            (ValueError, lambda: c.sent("TX-1", 1001)),
            (TypeError, lambda: c.sent("TX-1", True)),
            (ValueError, lambda: c.respond("TX-1", 1, "MAYBE")),
            (ValueError, lambda: c.respond("TX-1", 1, "SUCCESS", reason="two words")),
            (ValueError, lambda: c.respond("TX-1", 1, "SUCCESS", reason="x\r\nPING")),
            (ValueError, lambda: c.respond("TX-1", 1, "TRANSIENT", retry_after=float("nan"))),
            (ValueError, lambda: c.release("TX-1", 1, reason="")),
            (ValueError, lambda: c.resolve("TX-1", "SUCCESS")),
            (ValueError, lambda: c.history("TX-1", limit=0)),
            (ValueError, lambda: c.deadletters("q", limit=100001)),
            (ValueError, lambda: c.list("q", "stuck")),
            (ValueError, lambda: c.list("q", "ready", limit=1001)),
            (ValueError, lambda: c.list("q", "ready", limit=0)),
            (ValueError, lambda: c.list("q", "ready", after="a b")),
            (ValueError, lambda: c.list("q", "ready", after="")),
            (ValueError, lambda: c.list("q", "ready", prefix="a\r\nPING")),
            (ValueError, lambda: c.list("q", "ready", reason="two words")),
            (ValueError, lambda: c.list("q/", "ready")),
            (ValueError, lambda: c.config("q", base="soon")),
            (ValueError, lambda: c.config("q", foo="a b")),
            (ValueError, lambda: c.config("q", foo="a\nb")),
            (ValueError, lambda: c.reserve("q", wait="1 s")),
        ]
        for i, (exc, call) in enumerate(bad):
            with self.assertRaises(exc, msg=f"case {i}"):
                call()
        # Only the two STATS reached the server.
        self.assertEqual(c.stats()["commands"], before + 1)
        c.ping()

    def test_token_is_validated(self) -> None:
        with self.assertRaises(ValueError):
            tarde.Client("127.0.0.1", self.port, token="two words")


class ServerErrorsTest(ServerTestCase):
    """Errors of a plain server: BAD_COMMAND, BAD_ARGUMENT, LINE_TOO_LONG, BAD_PAYLOAD."""

    def test_backup_without_backup_dir_is_not_configured(self) -> None:
        c = self.client()
        with self.assertRaises(tarde.NotConfigured) as cm:
            c.backup()
        self.assertEqual(cm.exception.code, "NOT_CONFIGURED")
        self.assertIn("--backup-dir", cm.exception.message)
        self.assertIsNone(c.ping())

    def test_bad_command_keeps_connection(self) -> None:
        c = self.client()
        with self.assertRaises(tarde.BadCommand) as cm:
            c._raw("ping")
        self.assertEqual(cm.exception.code, "BAD_COMMAND")
        self.assertIn("ping", cm.exception.message)
        with self.assertRaises(tarde.BadCommand):
            c._raw("GET a b")
        with self.assertRaises(tarde.BadCommand):
            c._raw("")
        c.ping()
        self.assertFalse(c.closed)

    def test_bad_argument_from_server(self) -> None:
        c = self.client()
        with self.assertRaises(tarde.BadArgument) as cm:
            c.config("q", colour="blue")  # unknown to the server, passed through
        self.assertIn("colour", str(cm.exception))
        self.assertIsInstance(cm.exception, tarde.TardeError)
        with self.assertRaises(tarde.BadArgument):
            c._raw("RESPOND TX-1 1 reason=X")
        c.ping()

    def test_line_too_long_closes(self) -> None:
        c = self.client()
        with self.assertRaises(tarde.LineTooLong):
            c._raw("GET " + "x" * 9000)
        self.assertTrue(c.closed)
        with self.assertRaises(ConnectionError):
            c.ping()

    def test_bad_payload_closes(self) -> None:
        c = self.client()
        with self.assertRaises(tarde.BadPayload):
            c._raw(b"ENQUEUE q TX-bp 3\r\nabcXY\r\n")
        with self.assertRaises(ConnectionError):
            c.ping()


class NetworkErrorsTest(ServerTestCase):
    def test_timeout_then_closed(self) -> None:
        # A listener that accepts and never answers.
        with socket.socket() as silent:
            silent.bind(("127.0.0.1", 0))
            silent.listen(1)
            c = tarde.Client("127.0.0.1", silent.getsockname()[1], timeout=0.2)
            try:
                with self.assertRaises(TimeoutError):
                    c.ping()
                with self.assertRaises(ConnectionError):
                    c.ping()
            finally:
                c.close()

    def test_connection_refused(self) -> None:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        with self.assertRaises(ConnectionError):
            tarde.Client("127.0.0.1", port, timeout=2)

    def test_close_from_another_thread_interrupts(self) -> None:
        c = self.client()
        errors: list = []

        def waiter() -> None:
            try:
                c.reserve(unique("q"), wait=10)
            except ConnectionError as e:
                errors.append(e)

        watcher = self.client()
        before = watcher.stats()["commands"]
        t = threading.Thread(target=waiter)
        t.start()
        wait_for_commands(watcher, before)  # the RESERVE is waiting
        c.close()
        t.join(5)
        self.assertFalse(t.is_alive())
        self.assertEqual(len(errors), 1)
