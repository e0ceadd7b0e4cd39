"""Python client for tarde, the server for durable deferred retries.

- :class:`Client`: blocking, one command at a time (``tarde.aio.Client`` for asyncio, pipelined);
- :class:`Dispatcher`: worker threads that reserve requests and call your handler;
- :class:`Answer` and :func:`answer_from_http`: what a handler answers;
- :class:`TardeError` and its subclasses: the server's ``ERR`` replies.

See net/PROTOCOL.md in the tarde repository for the protocol itself.
"""

import logging

from . import aio
from ._protocol import Duration
from .answers import Answer, answer_from_http, parse_retry_after, sanitize_reason
from .client import Client
from .dispatcher import Dispatcher
from .errors import (
    ERROR_CLASSES,
    BackupFailed,
    BadArgument,
    BadCommand,
    Busy,
    BadPayload,
    Internal,
    LineTooLong,
    NotConfigured,
    Overloaded,
    PayloadTooLarge,
    ProtocolError,
    ShuttingDown,
    TardeError,
    Unauthorized,
    error_from_reply,
)
from .types import TERMINAL_STATES, Backup, Event, Letter, ListItem, ListPage, Request, Summary, Transaction

__version__ = "0.1.0"

__all__ = [
    "aio",
    "Client",
    "Dispatcher",
    "Answer",
    "answer_from_http",
    "parse_retry_after",
    "sanitize_reason",
    "Duration",
    "Summary",
    "Request",
    "Transaction",
    "Event",
    "Letter",
    "Backup",
    "ListItem",
    "ListPage",
    "TERMINAL_STATES",
    "TardeError",
    "BadCommand",
    "BadArgument",
    "Unauthorized",
    "Internal",
    "LineTooLong",
    "PayloadTooLarge",
    "BadPayload",
    "Overloaded",
    "NotConfigured",
    "Busy",
    "BackupFailed",
    "ShuttingDown",
    "ProtocolError",
    "ERROR_CLASSES",
    "error_from_reply",
]

# A library logs only where the application configured logging.
logging.getLogger("tarde").addHandler(logging.NullHandler())
