"""What a dispatcher's handler answers, and the HTTP status mapping."""

from __future__ import annotations

import datetime
import email.message
import email.utils
import re
import time
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Optional, Tuple, Union, cast

from . import _protocol as p

__all__ = ["Answer", "answer_from_http", "sanitize_reason", "parse_retry_after"]

_NOT_TOKEN = re.compile(r"[^\x21-\x7e]+")
_DIGITS = re.compile(r"[0-9]{1,12}")


def sanitize_reason(text: Any) -> Optional[str]:
    """Make any text a protocol TOKEN (1-200 bytes 0x21-0x7E), or ``None`` if nothing is left.

    Runs of other characters (spaces, line ends, non-ASCII) become ``_``;
    the result is cut to 200 bytes.
    """
    if text is None:
        return None
    token = _NOT_TOKEN.sub("_", str(text).strip())[:200]
    return token or None


@dataclass(frozen=True)
class Answer:
    """A handler's answer, turned into ``RESPOND <outcome>`` by the dispatcher.

    Build it with :meth:`success`, :meth:`cancelled`, :meth:`transient` or
    :meth:`rejected`. Reasons are sanitized into protocol tokens;
    ``retry_after`` is a duration (seconds or ``"5s"``) checked at once.
    """

    outcome: str
    reason: Optional[str] = None
    retry_after: Optional[p.Duration] = None

    def __post_init__(self) -> None:
        if self.outcome not in p.OUTCOMES:
            raise ValueError(f"outcome must be one of {', '.join(p.OUTCOMES)}, got {self.outcome!r}")
        object.__setattr__(self, "reason", sanitize_reason(self.reason))
        if self.retry_after is not None:
            p.duration_ms(self.retry_after, "retry_after")

    @classmethod
    def success(cls) -> "Answer":
        """The service did it: ``SUCCEEDED``."""
        return cls("SUCCESS")

    @classmethod
    def cancelled(cls, reason: Optional[str] = None, retry_after: Optional[p.Duration] = None) -> "Answer":
        """The business said "not now": the next attempt after the retry wait (or ``FAILED`` at max_attempts)."""
        return cls("CANCELLED", reason, retry_after)

    @classmethod
    def transient(cls, reason: Optional[str] = None, retry_after: Optional[p.Duration] = None) -> "Answer":
        """Timeout, 503, 429, lost connection: the same attempt (same key) again after the transient backoff."""
        return cls("TRANSIENT", reason, retry_after)

    @classmethod
    def rejected(cls, reason: Optional[str] = None) -> "Answer":
        """A permanent refusal: ``FAILED``."""
        return cls("REJECTED", reason)


#: Response headers: a mapping, a list of (name, value) pairs, or an
#: ``http.client.HTTPMessage`` / ``email.message.Message``.
Headers = Union[Mapping[str, str], Iterable[Tuple[str, str]], email.message.Message, None]


def _header(headers: Headers, name: str) -> Optional[str]:
    if headers is None:
        return None
    if isinstance(headers, email.message.Message):
        value = headers.get(name)  # case-insensitive already
        return None if value is None else str(value)
    if isinstance(headers, Mapping):
        pairs: Iterable[Tuple[str, str]] = cast("Mapping[str, str]", headers).items()
    else:
        pairs = headers
    wanted = name.lower()
    for key, value in pairs:
        if str(key).lower() == wanted:
            return str(value)
    return None


def parse_retry_after(value: Optional[str], now: Optional[float] = None) -> Optional[float]:
    """Seconds to wait from a ``Retry-After`` value (delta-seconds or HTTP-date), or ``None``.

    A date in the past gives 0; an unreadable value gives ``None``.
    """
    if value is None:
        return None
    value = value.strip()
    if _DIGITS.fullmatch(value):
        return min(float(int(value)), p.MAX_DURATION_MS / 1000.0)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=datetime.timezone.utc)
    current = time.time() if now is None else now
    seconds = when.timestamp() - current
    # Cap to what the protocol can carry; tarde caps it again at transient_cap.
    return min(max(0.0, seconds), p.MAX_DURATION_MS / 1000.0)


def answer_from_http(status: Optional[int], headers: Headers = None, *, now: Optional[float] = None) -> Answer:
    """Map an HTTP answer of the external service to an :class:`Answer`.

    - 2xx: ``SUCCESS``;
    - 429 and 503: ``TRANSIENT``, with ``Retry-After`` (seconds or HTTP-date) as ``retry_after``;
    - other 5xx, 408 and ``status=None`` (a timeout or no answer at all): ``TRANSIENT``;
    - everything else (4xx, and 1xx/3xx that were not followed): ``REJECTED``.

    "Not now" (``CANCELLED``) is the business's word, read from the body by
    the handler: this function never returns it.
    """
    if status is None:
        return Answer.transient("NO_RESPONSE")
    if isinstance(status, bool) or not isinstance(status, int):
        raise TypeError(f"status must be an int or None, not {type(status).__name__}")
    reason = f"HTTP_{status}"
    if 200 <= status <= 299:
        return Answer.success()
    if status in (429, 503):
        return Answer.transient(reason, parse_retry_after(_header(headers, "Retry-After"), now))
    if 500 <= status <= 599 or status == 408:
        return Answer.transient(reason)
    return Answer.rejected(reason)
