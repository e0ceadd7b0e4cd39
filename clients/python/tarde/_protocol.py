"""The tarde wire protocol without any I/O.

This module checks arguments, encodes request lines and parses replies. A
reply parser is a generator: it yields how much it needs next (``LINE`` for
one line, or a byte count ``n`` for ``n`` payload bytes followed by CRLF),
is sent those bytes (a line arrives without its line end), and returns the
result. The blocking client and the asyncio client drive the same parsers.
"""

from __future__ import annotations

import dataclasses
import datetime
import math
import re
from decimal import Decimal, InvalidOperation
from typing import Any, Dict, Generator, List, Mapping, Optional, Tuple, Union

from .errors import ProtocolError, error_from_reply
from .types import Backup, Event, Letter, ListItem, ListPage, Request, Summary, Transaction

#: What a duration argument may be: seconds as a number, a protocol string
#: such as ``"250ms"``, ``"5s"``, ``"2h"``, or a :class:`datetime.timedelta`.
Duration = Union[int, float, str, datetime.timedelta]

LINE = -1
Parser = Generator[int, bytes, Any]

MAX_DURATION_MS = 3650 * 86_400_000
_UNIT_MS = {"": 1, "ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000}
_DURATION_RE = re.compile(r"^([0-9]+)(ms|s|m|h|d)?$")
_QUEUE_RE = re.compile(rb"^[A-Za-z0-9_.\-]{1,64}$")
_TOKEN_RE = re.compile(rb"^[\x21-\x7e]{1,200}$")
_DECIMAL_RE = re.compile(r"^[0-9]+(\.[0-9]+)?$")
_NAME_RE = re.compile(r"^[a-z][a-z0-9_]{0,63}$")

OUTCOMES = ("SUCCESS", "CANCELLED", "TRANSIENT", "REJECTED")
LIST_STATES = ("ready", "leased", "in_flight", "scheduled", "succeeded", "failed", "dead")
_CURSOR_RE = re.compile(rb"^[\x21-\x7e]{1,201}$")
RESOLUTIONS = ("SUCCEEDED", "FAILED")


# ---------------------------------------------------------------- arguments


def _text(value: Any, name: str) -> bytes:
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, not {type(value).__name__}")
    try:
        return value.encode("ascii")
    except UnicodeEncodeError:
        raise ValueError(f"{name} must be ASCII: {value[:50]!r}") from None


def tx_id_arg(value: Any, name: str = "tx_id") -> bytes:
    """A ``tx_id`` (or any TOKEN): 1 to 200 bytes from ``!`` to ``~``."""
    raw = _text(value, name)
    if not _TOKEN_RE.fullmatch(raw):
        raise ValueError(
            f"{name} must be 1 to 200 printable ASCII characters without spaces: {value[:50]!r}"
        )
    return raw


def token_arg(value: Any, name: str) -> bytes:
    return tx_id_arg(value, name)


def queue_arg(value: Any) -> bytes:
    raw = _text(value, "queue")
    if not _QUEUE_RE.fullmatch(raw):
        raise ValueError(f"queue must be 1 to 64 characters of A-Z a-z 0-9 _ . -: {value[:70]!r}")
    return raw


def int_arg(value: Any, name: str, lo: int, hi: int) -> bytes:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, not {type(value).__name__}")
    if not lo <= value <= hi:
        raise ValueError(f"{name} must be from {lo} to {hi}, got {value}")
    return str(value).encode("ascii")


def attempt_arg(value: Any) -> bytes:
    return int_arg(value, "attempt", 1, 1000)


def duration_ms(value: Any, name: str = "duration") -> int:
    """Milliseconds of a duration: seconds (int/float), ``"5s"``-style string, or timedelta."""
    if isinstance(value, bool):
        raise TypeError(f"{name} must be seconds or a duration string, not a bool")
    if isinstance(value, datetime.timedelta):
        value = value.total_seconds()
    if isinstance(value, (int, float)):
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError(f"{name} must be finite, got {value!r}")
        if value < 0:
            raise ValueError(f"{name} must not be negative, got {value!r}")
        ms = int(round(value * 1000))
    elif isinstance(value, str):
        m = _DURATION_RE.fullmatch(value)
        if not m:
            raise ValueError(
                f"{name} must be seconds or a whole number with unit ms, s, m, h or d "
                f"(like '250ms', '5s', '2h'), got {value[:50]!r}"
            )
        ms = int(m.group(1)) * _UNIT_MS[m.group(2) or ""]
    else:
        raise TypeError(f"{name} must be seconds or a duration string, not {type(value).__name__}")
    if ms > MAX_DURATION_MS:
        raise ValueError(f"{name} must be at most 3650d, got {value!r}")
    return ms


def duration_arg(value: Any, name: str = "duration") -> bytes:
    return f"{duration_ms(value, name)}ms".encode("ascii")


def decimal_arg(value: Any, name: str, lo: Optional[float] = None, hi: Optional[float] = None) -> bytes:
    """An ``F`` token: digits with an optional fraction, no sign, no exponent."""
    if isinstance(value, bool):
        raise TypeError(f"{name} must be a number, not a bool")
    if isinstance(value, (int, float, Decimal)):
        try:
            d = Decimal(repr(value)) if isinstance(value, float) else Decimal(value)
        except InvalidOperation:
            raise ValueError(f"{name} must be a number, got {value!r}") from None
        if not d.is_finite() or d < 0:
            raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
        text = format(d, "f")
        if "." in text:
            text = text.rstrip("0").rstrip(".") or "0"
    elif isinstance(value, str):
        if not _DECIMAL_RE.fullmatch(value):
            raise ValueError(f"{name} must be digits with an optional fraction, got {value[:50]!r}")
        text = value
        d = Decimal(value)
    else:
        raise TypeError(f"{name} must be a number, not {type(value).__name__}")
    if (lo is not None and d < Decimal(repr(lo))) or (hi is not None and d > Decimal(repr(hi))):
        raise ValueError(f"{name} must be from {lo} to {hi}, got {value!r}")
    return text.encode("ascii")


def flag_arg(value: Any, name: str) -> bytes:
    if value is True or value == 1:
        return b"1"
    if value is False or value == 0:
        return b"0"
    raise ValueError(f"{name} must be a bool (or 0/1), got {value!r}")


def outcome_arg(value: Any, allowed: Tuple[str, ...], name: str) -> bytes:
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, not {type(value).__name__}")
    word = value.upper()
    if word not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(allowed)}, got {value[:50]!r}")
    return word.encode("ascii")


def payload_arg(value: Any) -> bytes:
    if isinstance(value, str):
        return value.encode("utf-8")
    if isinstance(value, (bytes, bytearray)):
        return bytes(value)
    if isinstance(value, memoryview):
        return value.tobytes()
    raise TypeError(f"payload must be bytes or str, not {type(value).__name__}")


# Kinds of the settings of CONFIG and the options of ENQUEUE.
_SETTING_KINDS: Dict[str, Tuple[str, float, float]] = {
    "max_attempts": ("int", 1, 1000),
    "base": ("dur", 0, 0),
    "factor": ("dec", 1, 1000),
    "cap": ("dur", 0, 0),
    "jitter": ("dec", 0, 1),
    "strict_cap": ("flag", 0, 0),
    "transient_base": ("dur", 0, 0),
    "transient_factor": ("dec", 1, 1000),
    "transient_cap": ("dur", 0, 0),
    "max_transient": ("int", 0, 1000000),
    "lease": ("dur", 0, 0),
    "max_deliveries": ("int", 1, 1000),
    "rate": ("int", 0, 10**12),
    "response_timeout": ("dur", 0, 0),
    "breaker": ("flag", 0, 0),
    "retention": ("dur", 0, 0),
    "history_max": ("int", 2, 1000000),
    "stuck_after": ("dur", 0, 0),
    "deadline": ("dur", 0, 0),
    "sent": ("flag", 0, 0),
    "delay": ("dur", 0, 0),
}

ENQUEUE_OPTIONS = (
    "max_attempts",
    "base",
    "factor",
    "cap",
    "jitter",
    "strict_cap",
    "deadline",
    "sent",
    "delay",
)


def option_arg(name: str, value: Any) -> bytes:
    """``name=value`` for a known setting (typed) or an unknown one (passed as a token)."""
    if not isinstance(name, str) or not _NAME_RE.fullmatch(name):
        raise ValueError(f"bad option name {name!r}")
    kind = _SETTING_KINDS.get(name)
    if kind is None:
        # Unknown to this client: let the server judge it, but keep the framing.
        if isinstance(value, bool):
            text = b"1" if value else b"0"
        elif isinstance(value, int):
            text = str(value).encode("ascii")
        else:
            text = token_arg(value if isinstance(value, str) else str(value), name)
    elif kind[0] == "int":
        if isinstance(value, str) and value.isdigit():
            value = int(value)
        text = int_arg(value, name, int(kind[1]), int(kind[2]))
    elif kind[0] == "dur":
        text = duration_arg(value, name)
    elif kind[0] == "dec":
        text = decimal_arg(value, name, kind[1], kind[2])
    else:
        text = flag_arg(value, name)
    return name.encode("ascii") + b"=" + text


def command(*tokens: bytes) -> bytes:
    return b" ".join(tokens) + b"\r\n"


# ---------------------------------------------------------------- replies


def _line(raw: bytes) -> str:
    try:
        return raw.decode("ascii")
    except UnicodeDecodeError:
        raise ProtocolError(f"non-ASCII reply {raw[:200]!r}") from None


def _first(raw: bytes) -> str:
    """Decode a reply's first line, raising the mapped error for ``ERR``."""
    line = _line(raw)
    if line.startswith("ERR "):
        raise error_from_reply(line)
    return line


def _int(text: str, what: str) -> int:
    if not text.isdigit():
        raise ProtocolError(f"expected a number for {what}, got {text[:50]!r}")
    return int(text)


def _none_if_dash(text: Optional[str]) -> Optional[str]:
    return None if text is None or text == "-" else text


def _fields(parts: List[str], what: str) -> Dict[str, str]:
    out: Dict[str, str] = {}
    for part in parts:
        name, sep, value = part.partition("=")
        if not sep:
            raise ProtocolError(f"expected name=value in {what} reply, got {part[:50]!r}")
        out[name] = value
    return out


def _take_int(fields: Dict[str, str], name: str, what: str) -> int:
    if name not in fields:
        raise ProtocolError(f"{what} reply without {name}")
    return _int(fields.pop(name), name)


def _take_renamed_int(fields: Dict[str, str], name: str, old_name: str, what: str) -> int:
    """A field renamed since: the new name, else the old one (older servers)."""
    return _take_int(fields, name if name in fields else old_name, what)


def _take_str(fields: Dict[str, str], name: str, what: str) -> str:
    if name not in fields:
        raise ProtocolError(f"{what} reply without {name}")
    return fields.pop(name)


SUMMARY_STATUSES = frozenset({"CREATED", "EXISTS", "OK", "BURIED", "STALE", "CONFLICT"})


def parse_summary_line(line: str) -> Summary:
    parts = line.split(" ")
    if len(parts) == 2 and parts[0] == "NOT_FOUND":
        return Summary("NOT_FOUND", parts[1], None, 0, 0, 0)
    if len(parts) != 6 or parts[0] not in SUMMARY_STATUSES:
        raise ProtocolError(f"unexpected summary {line[:200]!r}")
    return Summary(
        parts[0],
        parts[1],
        parts[2],
        _int(parts[3], "attempt"),
        _int(parts[4], "next_attempt"),
        _int(parts[5], "next_fire_at"),
    )


def summary_reply() -> Parser:
    raw = yield LINE
    return parse_summary_line(_first(raw))


def word_reply(word: str) -> Parser:
    raw = yield LINE
    line = _first(raw)
    if line != word:
        raise ProtocolError(f"expected {word}, got {line[:200]!r}")
    return None


def reserve_reply() -> Parser:
    raw = yield LINE
    line = _first(raw)
    if line == "EMPTY":
        return None
    parts = line.split(" ")
    if len(parts) != 6 or parts[0] != "REQUEST":
        raise ProtocolError(f"unexpected reply to RESERVE {line[:200]!r}")
    size = _int(parts[5], "payload length")
    payload = yield size
    return Request(
        parts[1], _int(parts[2], "attempt"), parts[3], _int(parts[4], "handouts"), payload
    )


def parse_transaction_line(line: str) -> Transaction:
    parts = line.split(" ")
    if parts[0] != "TX":
        raise ProtocolError(f"unexpected reply to GET {line[:200]!r}")
    f = _fields(parts[1:], "GET")
    w = "GET"
    return Transaction(
        tx_id=_take_str(f, "id", w),
        queue=_take_str(f, "queue", w),
        state=_take_str(f, "state", w),
        attempt=_take_int(f, "attempt", w),
        next_attempt=_take_int(f, "next_attempt", w),
        max_attempts=_take_int(f, "max_attempts", w),
        next_fire_at=_take_int(f, "next_fire_at", w),
        deadline_at=_take_int(f, "deadline_at", w),
        created_at=_take_int(f, "created_at", w),
        updated_at=_take_int(f, "updated_at", w),
        failed_deliveries=_take_renamed_int(f, "failed_deliveries", "deliveries", w),
        transients=_take_int(f, "transients", w),
        reason=_none_if_dash(_take_str(f, "reason", w)),
        payload_bytes=_take_int(f, "payload_bytes", w),
        extra=f,
    )


def get_reply(payload: bool = False) -> Parser:
    raw = yield LINE
    line = _first(raw)
    if line.startswith("NOT_FOUND "):
        return None
    tx = parse_transaction_line(line)
    if not payload:
        return tx
    body = yield tx.payload_bytes
    return dataclasses.replace(tx, payload=body)


def parse_event_line(line: str) -> Event:
    parts = line.split(" ")
    if parts[0] != "EVENT":
        raise ProtocolError(f"unexpected history line {line[:200]!r}")
    f = _fields(parts[1:], "HISTORY")
    w = "HISTORY"
    return Event(
        at=_take_int(f, "at", w),
        from_state=_none_if_dash(_take_str(f, "from", w)),
        to_state=_take_str(f, "to", w),
        attempt=_take_int(f, "attempt", w),
        next_attempt=_take_int(f, "next_attempt", w),
        cause=_take_str(f, "cause", w),
        reason=_none_if_dash(_take_str(f, "reason", w)),
        due=_take_optional_int(f, "due"),
        late=_take_optional_int(f, "late"),
        seq=_take_optional_int(f, "seq"),
        dropped=_take_optional_int(f, "dropped") or 0,
        extra=f,
    )


def _take_optional_int(fields: Dict[str, str], name: str) -> Optional[int]:
    """A field newer servers send: ``None`` when absent (an older server) or ``-``."""
    text = fields.pop(name, "-")
    return None if text == "-" else _int(text, name)


def parse_letter_line(line: str) -> Letter:
    parts = line.split(" ")
    if parts[0] != "LETTER":
        raise ProtocolError(f"unexpected dead letter line {line[:200]!r}")
    f = _fields(parts[1:], "DEADLETTERS")
    w = "DEADLETTERS"
    return Letter(
        tx_id=_take_str(f, "tx", w),
        attempt=_take_int(f, "attempt", w),
        key=_take_str(f, "key", w),
        failed_deliveries=_take_renamed_int(f, "failed_deliveries", "deliveries", w),
        buried_at=_take_int(f, "buried_at", w),
        last_error=_none_if_dash(_take_str(f, "last_error", w)),
        payload_bytes=_take_int(f, "payload_bytes", w) if "payload_bytes" in f else 0,
        extra=f,
    )


def parse_item_line(line: str) -> ListItem:
    parts = line.split(" ")
    if parts[0] != "ITEM":
        raise ProtocolError(f"unexpected list line {line[:200]!r}")
    f = _fields(parts[1:], "LIST")
    w = "LIST"
    return ListItem(
        tx_id=_take_str(f, "tx", w),
        state=_take_str(f, "state", w),
        attempt=_take_int(f, "attempt", w),
        next_attempt=_take_int(f, "next_attempt", w),
        next_fire_at=_take_int(f, "next_fire_at", w),
        updated_at=_take_int(f, "updated_at", w),
        deliveries=_take_int(f, "deliveries", w),
        reason=_none_if_dash(_take_str(f, "reason", w)),
        extra=f,
    )


def list_reply() -> Parser:
    raw = yield LINE
    line = _first(raw)
    parts = line.split(" ")
    if len(parts) != 3 or parts[0] != "ITEMS" or not parts[2].startswith("next=") or parts[2] == "next=":
        raise ProtocolError(f"expected ITEMS n next=cursor, got {line[:200]!r}")
    n = _int(parts[1], "ITEMS")
    cursor = parts[2][len("next="):]
    items: List[ListItem] = []
    for _ in range(n):
        raw = yield LINE
        items.append(parse_item_line(_line(raw)))
    return ListPage(items=items, next=None if cursor == "-" else cursor)


def _counted(head: str, line: str) -> int:
    parts = line.split(" ")
    if len(parts) != 2 or parts[0] != head:
        raise ProtocolError(f"expected {head} n, got {line[:200]!r}")
    return _int(parts[1], head)


def history_reply() -> Parser:
    raw = yield LINE
    line = _first(raw)
    if line.startswith("NOT_FOUND "):
        return None
    n = _counted("EVENTS", line)
    events: List[Event] = []
    for _ in range(n):
        raw = yield LINE
        events.append(parse_event_line(_line(raw)))
    return events


def deadletters_reply(payload: bool = False) -> Parser:
    raw = yield LINE
    n = _counted("LETTERS", _first(raw))
    letters: List[Letter] = []
    for _ in range(n):
        raw = yield LINE
        letter = parse_letter_line(_line(raw))
        if payload:
            body = yield letter.payload_bytes
            letter = dataclasses.replace(letter, payload=body)
        letters.append(letter)
    return letters


def count_reply(word: str) -> Parser:
    """``<word> n`` (``REDRIVEN 3``): the number."""
    raw = yield LINE
    return _counted(word, _first(raw))


def queue_word_reply(word: str, queue: str) -> Parser:
    """``PAUSED <queue>`` / ``RESUMED <queue>``."""
    return word_reply(f"{word} {queue}")


def config_reply() -> Parser:
    raw = yield LINE
    line = _first(raw)
    parts = line.split(" ")
    if len(parts) < 2 or parts[0] != "CONFIG":
        raise ProtocolError(f"unexpected reply to CONFIG {line[:200]!r}")
    return _fields(parts[2:], "CONFIG")


def stats_reply() -> Parser:
    raw = yield LINE
    n = _counted("STATS", _first(raw))
    out: Dict[str, int] = {}
    for _ in range(n):
        raw = yield LINE
        parts = _line(raw).split(" ")
        if len(parts) != 2:
            raise ProtocolError(f"unexpected stats line {raw[:200]!r}")
        try:
            out[parts[0]] = int(parts[1])
        except ValueError:
            # "Every value is a number": a future non-integer one is kept as a float.
            try:
                out[parts[0]] = float(parts[1])  # type: ignore[assignment]
            except ValueError:
                raise ProtocolError(f"unexpected stats line {raw[:200]!r}") from None
    return out


def backup_reply() -> Parser:
    raw = yield LINE
    line = _first(raw)
    parts = line.split(" ")
    if parts[0] != "BACKUP":
        raise ProtocolError(f"unexpected reply to BACKUP {line[:200]!r}")
    fields = _fields(parts[1:], "BACKUP")
    return Backup(
        _take_int(fields, "id", "BACKUP"),
        _take_int(fields, "bytes", "BACKUP"),
        _take_int(fields, "files", "BACKUP"),
        _take_int(fields, "took_ms", "BACKUP"),
    )


def raw_reply() -> Parser:
    """One reply line as text (``ERR`` raises); for raw lines sent by tests and tools."""
    raw = yield LINE
    return _first(raw)


# ---------------------------------------------------------------- requests


def enqueue_request(queue: str, tx_id: str, payload: Any, options: Mapping[str, Any]) -> bytes:
    q = queue_arg(queue)
    t = tx_id_arg(tx_id)
    body = payload_arg(payload)
    tokens = [b"ENQUEUE", q, t]
    for name, value in options.items():
        if value is None:
            continue
        if name not in ENQUEUE_OPTIONS:
            raise TypeError(f"enqueue() got an unexpected option {name!r}")
        tokens.append(option_arg(name, value))
    if options.get("sent") and options.get("delay") is not None:
        raise ValueError("delay cannot be combined with sent=True")
    tokens.append(str(len(body)).encode("ascii"))
    return b" ".join(tokens) + b"\r\n" + body + b"\r\n"


def config_request(queue: str, settings: Mapping[str, Any]) -> bytes:
    tokens = [b"CONFIG", queue_arg(queue)]
    for name, value in settings.items():
        if value is None:
            raise ValueError(f"setting {name} has no value")
        tokens.append(option_arg(name, value))
    return command(*tokens)


def release_request(tx_id: str, attempt: int, delay: Optional[Duration], reason: Optional[str]) -> bytes:
    tokens = [b"RELEASE", tx_id_arg(tx_id), attempt_arg(attempt)]
    if delay is not None:
        tokens.append(b"delay=" + duration_arg(delay, "delay"))
    if reason is not None:
        tokens.append(b"reason=" + token_arg(reason, "reason"))
    return command(*tokens)


def respond_request(
    tx_id: str,
    attempt: int,
    outcome: str,
    reason: Optional[str],
    retry_after: Optional[Duration],
) -> bytes:
    tokens = [
        b"RESPOND",
        tx_id_arg(tx_id),
        attempt_arg(attempt),
        outcome_arg(outcome, OUTCOMES, "outcome"),
    ]
    if reason is not None:
        tokens.append(b"reason=" + token_arg(reason, "reason"))
    if retry_after is not None:
        tokens.append(b"retry_after=" + duration_arg(retry_after, "retry_after"))
    return command(*tokens)


def resolve_request(tx_id: str, outcome: str, reason: Optional[str]) -> bytes:
    tokens = [b"RESOLVE", tx_id_arg(tx_id), outcome_arg(outcome, RESOLUTIONS, "outcome")]
    if reason is not None:
        tokens.append(b"reason=" + token_arg(reason, "reason"))
    return command(*tokens)


QUEUES_MAX = 16  # PROTOCOL.md: RESERVE names at most 16 queues


def queues_arg(value: Any) -> bytes:
    """One queue, or a list of distinct queues joined by commas."""
    if isinstance(value, (str, bytes)):
        return queue_arg(value)
    names = [queue_arg(q) for q in value]
    if not names or len(names) > QUEUES_MAX:
        raise ValueError(f"reserve takes 1 to {QUEUES_MAX} queues, got {len(names)}")
    if len(set(names)) != len(names):
        raise ValueError("a queue is named twice")
    return b",".join(names)


def bulk_options(
    prefix: Optional[str], last_error: Optional[str], limit: Optional[int]
) -> List[bytes]:
    """The filter and limit of REDRIVE_ALL and RESOLVE_ALL."""
    tokens: List[bytes] = []
    if prefix is not None:
        tokens.append(b"prefix=" + tx_id_arg(prefix, "prefix"))
    if last_error is not None:
        tokens.append(b"last_error=" + token_arg(last_error, "last_error"))
    if limit is not None:
        tokens.append(b"limit=" + int_arg(limit, "limit", 1, 10000))
    return tokens


def resolve_all_request(
    queue: str,
    outcome: str,
    prefix: Optional[str],
    last_error: Optional[str],
    reason: Optional[str],
    limit: Optional[int],
) -> bytes:
    tokens = [b"RESOLVE_ALL", queue_arg(queue), outcome_arg(outcome, RESOLUTIONS, "outcome")]
    tokens += bulk_options(prefix, last_error, limit)
    if reason is not None:
        tokens.append(b"reason=" + token_arg(reason, "reason"))
    return command(*tokens)


def reserve_request(queue: Any, wait: Optional[Duration]) -> Tuple[bytes, float]:
    """The RESERVE line and how many seconds the server may hold the reply back."""
    tokens = [b"RESERVE", queues_arg(queue)]
    extra = 0.0
    if wait is not None:
        ms = duration_ms(wait, "wait")
        tokens.append(f"wait={ms}ms".encode("ascii"))
        extra = ms / 1000.0
    return command(*tokens), extra


def limit_option(limit: Optional[int]) -> List[bytes]:
    if limit is None:
        return []
    return [b"limit=" + int_arg(limit, "limit", 1, 100000)]


def list_request(
    queue: str,
    state: str,
    after: Optional[str] = None,
    limit: Optional[int] = None,
    prefix: Optional[str] = None,
    reason: Optional[str] = None,
) -> bytes:
    """``LIST <queue> <state> [after=] [limit=] [prefix=] [reason=]``."""
    if state not in LIST_STATES:
        raise ValueError(f"state must be one of {', '.join(LIST_STATES)}, got {str(state)[:50]!r}")
    tokens = [b"LIST", queue_arg(queue), state.encode("ascii")]
    if after is not None:
        raw = _text(after, "after")
        if not _CURSOR_RE.fullmatch(raw):
            raise ValueError(f"after must be a cursor from a previous page, got {after[:50]!r}")
        tokens.append(b"after=" + raw)
    if limit is not None:
        tokens.append(b"limit=" + int_arg(limit, "limit", 1, 1000))
    if prefix is not None:
        tokens.append(b"prefix=" + tx_id_arg(prefix, "prefix"))
    if reason is not None:
        tokens.append(b"reason=" + token_arg(reason, "reason"))
    return command(*tokens)


def auth_request(token: str) -> bytes:
    return command(b"AUTH", token_arg(token, "token"))


def raw_request(line: Union[str, bytes]) -> bytes:
    data = line.encode("utf-8") if isinstance(line, str) else bytes(line)
    if not data.endswith(b"\n"):
        data += b"\r\n"
    return data
