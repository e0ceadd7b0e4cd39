"""Tests without a server: durations, arguments, reply parsing, answers, HTTP mapping."""

from __future__ import annotations

import datetime
import email.message
import email.utils
import http.client
import io
import unittest
from typing import Any, List, Union

import tarde
from tarde import _protocol as p


def drive(parser: p.Parser, wire: bytes) -> Any:
    """Run a reply parser over ``wire`` like a client would."""
    buf = io.BytesIO(wire)
    need = next(parser)
    while True:
        if need < 0:
            data = buf.readline()
            if not data.endswith(b"\r\n"):
                raise AssertionError(f"short line {data!r}")
            data = data[:-2]
        else:
            data = buf.read(need + 2)
            assert data.endswith(b"\r\n")
            data = data[:-2]
        try:
            need = parser.send(data)
        except StopIteration as stop:
            assert buf.read() == b"", "parser left bytes unread"
            return stop.value


class DurationTest(unittest.TestCase):
    def test_accepted_forms(self) -> None:
        cases: List[Any] = [
            (5, 5000),
            (0, 0),
            (0.25, 250),
            (1.0005, 1000),
            ("250ms", 250),
            ("5s", 5000),
            ("2h", 7_200_000),
            ("3m", 180_000),
            ("1d", 86_400_000),
            ("40", 40),
            ("007s", 7000),
            ("3650d", 3650 * 86_400_000),
            (datetime.timedelta(minutes=1, milliseconds=5), 60_005),
        ]
        for value, ms in cases:
            self.assertEqual(p.duration_ms(value), ms, value)
        self.assertEqual(p.duration_arg(0.05), b"50ms")

    def test_refused_forms(self) -> None:
        for value in ("5 s", "1.5s", "-1s", "5sec", "", "s", "3651d", "5s\n", -1, -0.5, float("inf"), float("nan"), 3650 * 86400 + 1):
            with self.assertRaises(ValueError, msg=repr(value)):
                p.duration_ms(value)
        for value in (None, True, b"5s", [5]):
            with self.assertRaises(TypeError, msg=repr(value)):
                p.duration_ms(value)


class ArgumentTest(unittest.TestCase):
    def test_tx_id_and_token(self) -> None:
        self.assertEqual(p.tx_id_arg("TX-1=a#b~!"), b"TX-1=a#b~!")
        self.assertEqual(p.tx_id_arg("x" * 200), b"x" * 200)
        for bad in ("", "a b", "a\tb", "a\r", "a\n", "x" * 201, "ñ", "a\x7f"):
            with self.assertRaises(ValueError, msg=repr(bad)):
                p.tx_id_arg(bad)
        with self.assertRaises(TypeError):
            p.tx_id_arg(b"TX-1")

    def test_queue(self) -> None:
        self.assertEqual(p.queue_arg("pagos_v1.eu-west"), b"pagos_v1.eu-west")
        for bad in ("", "a b", "a/b", "q" * 65, "a=b", "a#b"):
            with self.assertRaises(ValueError, msg=repr(bad)):
                p.queue_arg(bad)

    def test_decimal(self) -> None:
        self.assertEqual(p.decimal_arg(2, "f"), b"2")
        self.assertEqual(p.decimal_arg(1.6, "f"), b"1.6")
        self.assertEqual(p.decimal_arg(0.1, "f"), b"0.1")
        self.assertEqual(p.decimal_arg(1e-7, "f"), b"0.0000001")
        self.assertEqual(p.decimal_arg("2.50", "f"), b"2.50")
        for bad in (-1, "1e3", "-1", ".5", float("inf")):
            with self.assertRaises(ValueError, msg=repr(bad)):
                p.decimal_arg(bad, "f")

    def test_enqueue_encoding(self) -> None:
        data = p.enqueue_request("q", "TX-1", b"ab\r\n", dict(base=0.05, jitter=0, strict_cap=True, sent=None))
        self.assertEqual(data, b"ENQUEUE q TX-1 base=50ms jitter=0 strict_cap=1 4\r\nab\r\n\r\n")

    def test_respond_encoding(self) -> None:
        self.assertEqual(
            p.respond_request("TX-1", 2, "transient", "HTTP_503", 1.5),
            b"RESPOND TX-1 2 TRANSIENT reason=HTTP_503 retry_after=1500ms\r\n",
        )

    def test_unknown_config_setting_is_passed_as_token(self) -> None:
        self.assertEqual(p.config_request("q", {"future_knob": "x1", "other": 3}), b"CONFIG q future_knob=x1 other=3\r\n")
        with self.assertRaises(ValueError):
            p.config_request("q", {"Bad-Name": 1})


class ParserTest(unittest.TestCase):
    def test_summary_and_not_found(self) -> None:
        self.assertEqual(
            drive(p.summary_reply(), b"OK TX-1 SCHEDULED 1 2 1795989390000\r\n"),
            tarde.Summary("OK", "TX-1", "SCHEDULED", 1, 2, 1795989390000),
        )
        nf = drive(p.summary_reply(), b"NOT_FOUND TX-9\r\n")
        self.assertEqual((nf.status, nf.tx_id, nf.state, nf.found), ("NOT_FOUND", "TX-9", None, False))

    def test_error_reply_raises_mapped_class(self) -> None:
        with self.assertRaises(tarde.Internal):
            drive(p.summary_reply(), b"ERR INTERNAL disk full\r\n")

    def test_garbage_is_protocol_error(self) -> None:
        for wire in (b"HELLO\r\n", b"OK TX-1 SENDING x 1 0\r\n", b"OK TX-1 SENDING 0 1\r\n"):
            with self.assertRaises(tarde.ProtocolError, msg=wire):
                drive(p.summary_reply(), wire)

    def test_request_with_payload(self) -> None:
        r = drive(p.reserve_reply(), b"REQUEST TX-1 2 TX-1#2 3 5\r\na\r\nbc\r\n")
        self.assertEqual(r, tarde.Request("TX-1", 2, "TX-1#2", 3, b"a\r\nbc"))
        self.assertIsNone(drive(p.reserve_reply(), b"EMPTY\r\n"))

    def test_get_with_unknown_field(self) -> None:
        line = (
            b"TX id=TX-1 queue=pagos state=FAILED attempt=1 next_attempt=0 max_attempts=4 next_fire_at=0 "
            b"deadline_at=0 created_at=10 updated_at=11 deliveries=0 transients=2 reason=EXHAUSTED "
            b"payload_bytes=15 shiny=yes\r\n"
        )
        t = drive(p.get_reply(), line)
        self.assertEqual((t.tx_id, t.state, t.transients, t.reason, t.payload_bytes), ("TX-1", "FAILED", 2, "EXHAUSTED", 15))
        self.assertEqual(t.extra, {"shiny": "yes"})
        self.assertTrue(t.terminal)

    def test_history_letters_stats_config(self) -> None:
        events = drive(
            p.history_reply(),
            b"EVENTS 1\r\nEVENT at=5 from=- to=SENDING attempt=0 next_attempt=1 cause=ENQUEUE reason=-\r\n",
        )
        self.assertEqual(events, [tarde.Event(5, None, "SENDING", 0, 1, "ENQUEUE", None)])
        # An older server sends none of due, late, seq and dropped.
        self.assertEqual((events[0].due, events[0].late, events[0].seq, events[0].dropped), (None, None, None, 0))
        letters = drive(
            p.deadletters_reply(),
            b"LETTERS 1\r\nLETTER tx=TX-9 attempt=2 key=TX-9#2 deliveries=5 buried_at=7 last_error=LEASE_EXPIRED\r\n",
        )
        self.assertEqual(letters, [tarde.Letter("TX-9", 2, "TX-9#2", 5, 7, "LEASE_EXPIRED")])
        stats = drive(p.stats_reply(), b"STATS 2\r\nuptime_ms 10\r\nbreaker.q 1\r\n")
        self.assertEqual(letters[0].failed_deliveries, 5)  # an older server's `deliveries`
        letters = drive(
            p.deadletters_reply(payload=True),
            b"LETTERS 1\r\nLETTER tx=T attempt=1 key=T#1 failed_deliveries=2 buried_at=7 last_error=x "
            b"payload_bytes=4\r\na\r\nb\r\n",
        )
        self.assertEqual((letters[0].failed_deliveries, letters[0].payload_bytes), (2, 4))
        self.assertEqual(letters[0].payload, b"a\r\nb")
        self.assertEqual(drive(p.count_reply("REDRIVEN"), b"REDRIVEN 12\r\n"), 12)
        with self.assertRaises(tarde.ProtocolError):
            drive(p.count_reply("REDRIVEN"), b"RESOLVED 12\r\n")
        self.assertEqual(stats, {"uptime_ms": 10, "breaker.q": 1})
        cfg = drive(p.config_reply(), b"CONFIG q base=2h jitter=0.1\r\n")
        self.assertEqual(cfg, {"base": "2h", "jitter": "0.1"})


    def test_history_marker_due_and_late(self) -> None:
        events = drive(
            p.history_reply(),
            b"EVENTS 2\r\n"
            b"EVENT at=5 from=- to=SENDING attempt=0 next_attempt=1 cause=ENQUEUE reason=- due=- late=- seq=0\r\n"
            b"EVENT at=1003 from=SCHEDULED to=SENDING attempt=1 next_attempt=2 cause=timer reason=- "
            b"due=1000 late=3 seq=14 dropped=12 shiny=yes\r\n",
        )
        first, fire = events
        self.assertEqual((first.due, first.late, first.seq, first.dropped), (None, None, 0, 0))
        self.assertEqual((fire.due, fire.late, fire.seq, fire.dropped), (1000, 3, 14, 12))
        self.assertEqual(fire.extra, {"shiny": "yes"})
        self.assertEqual(sum(e.dropped for e in events), 12)
        for bad in (b"due=x", b"late=-1", b"seq=", b"dropped=1.5"):
            with self.assertRaises(tarde.ProtocolError, msg=bad):
                drive(
                    p.history_reply(),
                    b"EVENTS 1\r\nEVENT at=5 from=- to=SENDING attempt=0 next_attempt=1 cause=ENQUEUE reason=- "
                    + bad
                    + b"\r\n",
                )


class ListReplyTest(unittest.TestCase):
    def test_items_and_cursor(self) -> None:
        page = drive(
            p.list_reply(),
            b"ITEMS 1 next=tTX-9\r\nITEM tx=TX-9 state=FAILED attempt=2 next_attempt=0 next_fire_at=0 "
            b"updated_at=7 deliveries=0 reason=CARD shiny=yes\r\n",
        )
        self.assertEqual(page, tarde.ListPage([tarde.ListItem("TX-9", "FAILED", 2, 0, 0, 7, 0, "CARD")], "tTX-9"))
        self.assertEqual(page.items[0].extra, {"shiny": "yes"})
        self.assertEqual(drive(p.list_reply(), b"ITEMS 0 next=-\r\n"), tarde.ListPage([], None))

    def test_bad_replies_are_protocol_errors(self) -> None:
        for wire in (
            b"ITEMS 0\r\n",
            b"ITEMS x next=-\r\n",
            b"ITEMS 0 next=\r\n",
            b"ITEMS 0 cursor=-\r\n",
            b"ITEMS 1 next=-\r\nLETTER tx=a\r\n",
            b"ITEMS 1 next=-\r\nITEM tx=a state=SENDING\r\n",
        ):
            with self.assertRaises(tarde.ProtocolError, msg=wire):
                drive(p.list_reply(), wire)
        with self.assertRaises(tarde.BadArgument):
            drive(p.list_reply(), b"ERR BAD_ARGUMENT not a cursor of this listing: 'x'\r\n")

    def test_request_line(self) -> None:
        self.assertEqual(p.list_request("q", "dead"), b"LIST q dead\r\n")
        self.assertEqual(
            p.list_request("q", "ready", after="r1.2", limit=5, prefix="TX-", reason="BOOM"),
            b"LIST q ready after=r1.2 limit=5 prefix=TX- reason=BOOM\r\n",
        )


class AnswerTest(unittest.TestCase):
    def test_constructors(self) -> None:
        self.assertEqual(tarde.Answer.success(), tarde.Answer("SUCCESS"))
        self.assertEqual(tarde.Answer.cancelled("NOT_NOW").outcome, "CANCELLED")
        t = tarde.Answer.transient("HTTP_503", retry_after="2s")
        self.assertEqual((t.outcome, t.reason, t.retry_after), ("TRANSIENT", "HTTP_503", "2s"))
        self.assertEqual(tarde.Answer.rejected().reason, None)
        with self.assertRaises(ValueError):
            tarde.Answer("MAYBE")
        with self.assertRaises(ValueError):
            tarde.Answer.transient(retry_after="soon")

    def test_reasons_are_sanitized(self) -> None:
        self.assertEqual(tarde.Answer.rejected("card declined\r\nPING").reason, "card_declined_PING")
        self.assertEqual(tarde.Answer.rejected("  trimmed  ").reason, "trimmed")
        self.assertEqual(tarde.Answer.rejected("año").reason, "a_o")
        self.assertEqual(len(tarde.Answer.rejected("x" * 1000).reason or ""), 200)
        self.assertIsNone(tarde.Answer.rejected("   ").reason)
        self.assertIsNone(tarde.sanitize_reason(""))
        self.assertEqual(tarde.sanitize_reason(ValueError), "<class_'ValueError'>")
        for text in ("a b", "\x00\x01", "é" * 300, "x\ny"):
            reason = tarde.sanitize_reason(text)
            if reason is not None:
                p.token_arg(reason, "reason")  # a valid protocol token


class AnswerFromHttpTest(unittest.TestCase):
    NOW = 1_800_000_000.0

    def check(self, status: Union[int, None], headers: Any, outcome: str, retry_after: Any = None, reason: Any = "auto") -> None:
        a = tarde.answer_from_http(status, headers, now=self.NOW)
        self.assertEqual(a.outcome, outcome, (status, headers))
        self.assertEqual(a.retry_after, retry_after, (status, headers))
        if reason == "auto":
            reason = None if outcome == "SUCCESS" else (f"HTTP_{status}" if status is not None else "NO_RESPONSE")
        self.assertEqual(a.reason, reason)

    def test_table(self) -> None:
        self.check(200, {}, "SUCCESS")
        self.check(201, None, "SUCCESS")
        self.check(204, [], "SUCCESS")
        self.check(299, {}, "SUCCESS")
        self.check(429, {"Retry-After": "7"}, "TRANSIENT", 7.0)
        self.check(503, {"retry-after": " 120 "}, "TRANSIENT", 120.0)
        self.check(503, {}, "TRANSIENT")
        self.check(503, {"Retry-After": "soon"}, "TRANSIENT")
        self.check(500, {"Retry-After": "5"}, "TRANSIENT")  # only 429/503 carry Retry-After
        self.check(502, {}, "TRANSIENT")
        self.check(504, {}, "TRANSIENT")
        self.check(599, {}, "TRANSIENT")
        self.check(408, {}, "TRANSIENT")
        self.check(None, {}, "TRANSIENT")  # timeout / no response
        self.check(400, {}, "REJECTED")
        self.check(404, {}, "REJECTED")
        self.check(409, {"Retry-After": "5"}, "REJECTED")
        self.check(422, {}, "REJECTED")
        self.check(302, {}, "REJECTED")
        self.check(600, {}, "REJECTED")

    def test_retry_after_http_date(self) -> None:
        future = email.utils.formatdate(self.NOW + 90, usegmt=True)
        self.check(503, {"Retry-After": future}, "TRANSIENT", 90.0)
        past = email.utils.formatdate(self.NOW - 90, usegmt=True)
        self.check(429, {"Retry-After": past}, "TRANSIENT", 0.0)
        self.assertEqual(tarde.parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now=1445412480.0 - 30), 30.0)
        self.assertIsNone(tarde.parse_retry_after("Wed, 99 Foo 2015"))
        self.assertEqual(tarde.parse_retry_after("9" * 12), 3650 * 86400.0)  # capped to what tarde accepts

    def test_header_containers(self) -> None:
        msg = email.message.Message()
        msg["Retry-After"] = "3"
        self.check(503, msg, "TRANSIENT", 3.0)
        http_msg = http.client.HTTPMessage()
        http_msg["retry-after"] = "4"
        self.check(429, http_msg, "TRANSIENT", 4.0)
        self.check(429, [("RETRY-AFTER", "5")], "TRANSIENT", 5.0)

    def test_bad_status_type(self) -> None:
        with self.assertRaises(TypeError):
            tarde.answer_from_http("200", {})  # type: ignore[arg-type]
