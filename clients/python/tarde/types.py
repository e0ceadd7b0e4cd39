"""Typed results of tarde commands."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional

__all__ = [
    "Summary",
    "Request",
    "Transaction",
    "Event",
    "Letter",
    "Backup",
    "ListItem",
    "ListPage",
    "TERMINAL_STATES",
]

def _no_fields() -> Dict[str, str]:
    return {}


#: States a transaction never leaves (until retention deletes it).
TERMINAL_STATES = frozenset({"SUCCEEDED", "FAILED"})


@dataclass(frozen=True)
class Summary:
    """A transaction's state after a command.

    ``status`` is ``CREATED``, ``EXISTS``, ``OK``, ``BURIED``, ``STALE``,
    ``CONFLICT`` or ``NOT_FOUND``: these are results, not errors. For
    ``NOT_FOUND``, ``state`` is ``None`` and the numbers are 0.
    Times are milliseconds since the Unix epoch (0 = none).
    """

    status: str
    tx_id: str
    state: Optional[str]
    attempt: int
    next_attempt: int
    next_fire_at: int

    @property
    def found(self) -> bool:
        """False when the server answered ``NOT_FOUND``."""
        return self.status != "NOT_FOUND"

    @property
    def terminal(self) -> bool:
        """True when the transaction is ``SUCCEEDED`` or ``FAILED``."""
        return self.state in TERMINAL_STATES


@dataclass(frozen=True)
class Request:
    """A request handed out by ``RESERVE``, leased to the connection that reserved it.

    ``key`` is the idempotency key ``<tx_id>#<attempt>`` to send along with
    the call to the external service.
    """

    tx_id: str
    attempt: int
    key: str
    handouts: int  # hand-outs of this request, this one included
    payload: bytes

    @property
    def deliveries(self) -> int:
        """The former name of ``handouts``."""
        return self.handouts


@dataclass(frozen=True)
class Transaction:
    """The reply of ``GET``. ``reason`` is ``None`` when the server shows ``-``.

    Fields the server may add later land in ``extra`` (as strings).
    """

    tx_id: str
    queue: str
    state: str
    attempt: int
    next_attempt: int
    max_attempts: int
    next_fire_at: int
    deadline_at: int
    created_at: int
    updated_at: int
    failed_deliveries: int  # older servers call it ``deliveries``
    transients: int
    reason: Optional[str]
    payload_bytes: int
    extra: Dict[str, str] = field(default_factory=_no_fields, compare=False)
    payload: Optional[bytes] = None  # set by ``get(tx_id, payload=True)``

    @property
    def deliveries(self) -> int:
        """The former name of ``failed_deliveries``."""
        return self.failed_deliveries

    @property
    def terminal(self) -> bool:
        return self.state in TERMINAL_STATES


@dataclass(frozen=True)
class Event:
    """One audit event of ``HISTORY``.

    ``from_state`` is ``None`` for the creating event (the server shows
    ``-``); ``cause`` is the command, ``timer`` or ``lease``; ``reason`` is
    ``None`` when there is none.

    A timer fire (a retry, a response timeout, a lease expiry) carries
    ``due``, the instant it was due, and ``late``, how many ms after it
    the fire took effect; both are ``None`` for other events. ``seq`` is the
    event's number in the transaction's life (0 the first). ``dropped`` is
    the marker of a bounded history: how many events right before this one
    are no longer kept. Servers older than these fields leave them ``None``
    and 0.
    """

    at: int
    from_state: Optional[str]
    to_state: str
    attempt: int
    next_attempt: int
    cause: str
    reason: Optional[str]
    extra: Dict[str, str] = field(default_factory=_no_fields, compare=False)
    due: Optional[int] = None
    late: Optional[int] = None
    seq: Optional[int] = None
    dropped: int = 0


@dataclass(frozen=True)
class ListItem:
    """One transaction of a ``LIST`` page; ``reason`` is ``None`` when there is none."""

    tx_id: str
    state: str
    attempt: int
    next_attempt: int
    next_fire_at: int
    updated_at: int
    deliveries: int
    reason: Optional[str]
    extra: Dict[str, str] = field(default_factory=_no_fields, compare=False)


@dataclass(frozen=True)
class ListPage:
    """One page of ``LIST``: its items and the cursor of the next page.

    ``next`` is ``None`` on the last page; otherwise pass it back as
    ``after=`` to get the page that follows.
    """

    items: List[ListItem]
    next: Optional[str]


@dataclass(frozen=True)
class Letter:
    """One dead letter of ``DEADLETTERS``; ``last_error`` is the last failed delivery's reason."""

    tx_id: str
    attempt: int
    key: str
    failed_deliveries: int  # older servers call it ``deliveries``
    buried_at: int
    last_error: Optional[str]
    extra: Dict[str, str] = field(default_factory=_no_fields, compare=False)
    payload_bytes: int = 0  # 0 from servers that do not show it
    payload: Optional[bytes] = None  # set by ``deadletters(queue, payload=True)``

    @property
    def deliveries(self) -> int:
        """The former name of ``failed_deliveries``."""
        return self.failed_deliveries


@dataclass(frozen=True)
class Backup:
    """What ``BACKUP`` made in the server's ``--backup-dir``: its id, its size
    in bytes (files shared with earlier backups included), its number of
    files and how long it took (flush, copy and verification)."""

    id: int
    bytes: int
    files: int
    took_ms: int
