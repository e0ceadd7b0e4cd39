"""Errors raised by the tarde client.

Every ``ERR <CODE> <message>`` reply of the server becomes a
:class:`TardeError`; the class is looked up in :data:`ERROR_CLASSES`, the one
table that maps the protocol's codes to subclasses. A code this client does
not know yet becomes a plain :class:`TardeError` that still carries
``.code``.

Network failures are not ``TardeError``: they are the built-in
:class:`ConnectionError` (refused, reset, closed) and :class:`TimeoutError`.
"""

from __future__ import annotations

from typing import Dict, Optional, Type

__all__ = [
    "TardeError",
    "BadCommand",
    "BadArgument",
    "Unauthorized",
    "Internal",
    "LineTooLong",
    "PayloadTooLarge",
    "BadPayload",
    "Overloaded",
    "ShuttingDown",
    "NotConfigured",
    "Busy",
    "BackupFailed",
    "ProtocolError",
    "ERROR_CLASSES",
    "error_from_reply",
]


class TardeError(Exception):
    """An ``ERR`` reply of the server (or a reply this client cannot read).

    ``code`` is the protocol's error code (``"BAD_ARGUMENT"``, ...),
    ``message`` the server's words. ``closes_connection`` tells whether the
    server closes the connection after this error (the client then marks
    itself closed: later calls raise :class:`ConnectionError`).
    """

    code: str = ""
    closes_connection: bool = False

    def __init__(self, message: str = "", code: Optional[str] = None) -> None:
        if code is not None:
            self.code = code
        self.message = message
        super().__init__(f"{self.code}: {message}" if message else self.code)


class BadCommand(TardeError):
    """Unknown verb or wrong number of positional arguments (connection stays open)."""

    code = "BAD_COMMAND"


class BadArgument(TardeError):
    """A token or option failed its form or range (connection stays open)."""

    code = "BAD_ARGUMENT"


class Unauthorized(TardeError):
    """No ``AUTH`` yet, or a wrong token (connection stays open)."""

    code = "UNAUTHORIZED"


class Internal(TardeError):
    """The store refused the write: the command was *not acknowledged*.

    Retrying is safe (``ENQUEUE`` answers ``EXISTS``, a repeated ``SENT`` or
    ``RESPOND`` answers ``STALE``). The connection stays open.
    """

    code = "INTERNAL"


class LineTooLong(TardeError):
    """A request line over 8192 bytes; the server closes the connection."""

    code = "LINE_TOO_LONG"
    closes_connection = True


class PayloadTooLarge(TardeError):
    """An ``ENQUEUE`` payload over the server's ``--max-payload``; the server closes the connection."""

    code = "PAYLOAD_TOO_LARGE"
    closes_connection = True


class BadPayload(TardeError):
    """A payload not framed as announced; the server closes the connection."""

    code = "BAD_PAYLOAD"
    closes_connection = True


class Overloaded(TardeError):
    """The server is over ``--max-connections``; it closes the connection."""

    code = "OVERLOADED"
    closes_connection = True


class ShuttingDown(TardeError):
    """The server is stopping (SIGTERM/SIGINT); it closes the connection."""

    code = "SHUTTING_DOWN"
    closes_connection = True


class NotConfigured(TardeError):
    """The command needs a server setting that is not set (``BACKUP`` without ``--backup-dir``)."""

    code = "NOT_CONFIGURED"


class Busy(TardeError):
    """A backup is already running; try again once it has answered (connection stays open)."""

    code = "BUSY"


class BackupFailed(TardeError):
    """``BACKUP`` failed; no new backup was recorded (connection stays open)."""

    code = "BACKUP_FAILED"


class ProtocolError(TardeError):
    """The server sent something this client cannot read; the connection is closed."""

    code = "PROTOCOL_ERROR"
    closes_connection = True


#: The one table from protocol error code to exception class.
ERROR_CLASSES: Dict[str, Type[TardeError]] = {
    "BAD_COMMAND": BadCommand,
    "BAD_ARGUMENT": BadArgument,
    "UNAUTHORIZED": Unauthorized,
    "INTERNAL": Internal,
    "LINE_TOO_LONG": LineTooLong,
    "PAYLOAD_TOO_LARGE": PayloadTooLarge,
    "BAD_PAYLOAD": BadPayload,
    "OVERLOADED": Overloaded,
    "SHUTTING_DOWN": ShuttingDown,
    "NOT_CONFIGURED": NotConfigured,
    "BUSY": Busy,
    "BACKUP_FAILED": BackupFailed,
}


def error_from_reply(line: str) -> TardeError:
    """Build the exception for one ``ERR <CODE> <message>`` reply line."""
    parts = line.split(" ", 2)
    if len(parts) < 2 or parts[0] != "ERR" or not parts[1]:
        return ProtocolError(f"unexpected reply {line[:200]!r}")
    code = parts[1]
    message = parts[2] if len(parts) > 2 else ""
    cls = ERROR_CLASSES.get(code)
    if cls is None:
        return TardeError(message, code=code)
    return cls(message)
