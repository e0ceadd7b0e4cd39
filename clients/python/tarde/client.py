"""The blocking tarde client: one TCP connection, one command at a time."""

from __future__ import annotations

import socket
import threading
from typing import Any, Dict, List, Optional, Sequence, Union

from . import _protocol as p
from .errors import ProtocolError, TardeError, error_from_reply
from .types import Backup, Event, Letter, ListPage, Request, Summary, Transaction

__all__ = ["Client"]

_RECV = 65536


class Client:
    """A blocking connection to a tarde server.

    The connection is opened by the constructor (and ``AUTH`` sent when a
    ``token`` is given). Each method sends one command and waits for its
    reply; a lock makes the client safe to share between threads (commands
    are then serialised). ``timeout`` (seconds, ``None`` = wait forever)
    bounds connecting and each reply; ``reserve(wait=...)`` adds its wait.

    The client never reconnects by itself: once the connection is lost (or
    a reply timed out, which leaves it out of step) every call raises
    :class:`ConnectionError`. Make a new ``Client`` to go on.
    """

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 7400,
        token: Optional[str] = None,
        timeout: Optional[float] = 30.0,
    ) -> None:
        auth = p.auth_request(token) if token is not None else None
        self.host = host
        self.port = port
        self.timeout = timeout
        self._lock = threading.Lock()
        self._buf = bytearray()
        self._closed_reason = "the connection is closed"
        try:
            sock = socket.create_connection((host, port), timeout=timeout)
        except socket.timeout:
            raise TimeoutError(f"connecting to tarde at {host}:{port} timed out") from None
        except ConnectionError:
            raise
        except OSError as e:
            raise ConnectionError(f"cannot connect to tarde at {host}:{port}: {e}") from e
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._sock: Optional[socket.socket] = sock
        if auth is not None:
            try:
                self._call(auth, p.word_reply("OK"))
            except BaseException:
                self.close()
                raise

    # ------------------------------------------------------------ plumbing

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "open" if self._sock is not None else "closed"
        return f"<tarde.Client {self.host}:{self.port} {state}>"

    @property
    def closed(self) -> bool:
        return self._sock is None

    def close(self) -> None:
        """Close the connection (idempotent). Leases it holds go back to their queues.

        Safe to call from another thread while a command waits: that command
        then raises :class:`ConnectionError`.
        """
        sock, self._sock = self._sock, None
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()

    def _drop(self, reason: str) -> None:
        self._closed_reason = reason
        self.close()

    def _read_line(self, sock: socket.socket) -> bytes:
        buf = self._buf
        start = 0
        while True:
            i = buf.find(b"\n", start)
            if i >= 0:
                line = bytes(buf[: i - 1 if i > 0 and buf[i - 1] == 13 else i])
                del buf[: i + 1]
                return line
            start = len(buf)
            chunk = sock.recv(_RECV)
            if not chunk:
                raise ConnectionError("tarde closed the connection")
            buf += chunk

    def _read_exact(self, sock: socket.socket, n: int) -> bytes:
        buf = self._buf
        while len(buf) < n + 2:
            chunk = sock.recv(max(_RECV, n + 2 - len(buf)))
            if not chunk:
                raise ConnectionError("tarde closed the connection")
            buf += chunk
        if bytes(buf[n : n + 2]) != b"\r\n":
            raise ProtocolError("payload not followed by CRLF")
        data = bytes(buf[:n])
        del buf[: n + 2]
        return data

    def _salvage_error(self, sock: socket.socket) -> Optional[TardeError]:
        """After a failed send, a reply the server sent before closing (OVERLOADED...)."""
        try:
            sock.settimeout(0.2)
            line = self._read_line(sock)
        except (OSError, ConnectionError):
            return None
        text = line.decode("ascii", "replace")
        return error_from_reply(text) if text.startswith("ERR ") else None

    def _call(self, data: bytes, parser: p.Parser, extra: float = 0.0) -> Any:
        with self._lock:
            sock = self._sock
            if sock is None:
                raise ConnectionError(self._closed_reason)
            try:
                sock.settimeout(None if self.timeout is None else self.timeout + extra)
                try:
                    sock.sendall(data)
                except OSError:
                    err = self._salvage_error(sock)
                    if err is not None:
                        raise err from None
                    raise
                need = next(parser)
                while True:
                    chunk = self._read_line(sock) if need < 0 else self._read_exact(sock, need)
                    try:
                        need = parser.send(chunk)
                    except StopIteration as stop:
                        return stop.value
            except TardeError as e:
                if e.closes_connection:
                    self._drop(f"the connection was closed after {e.code}")
                raise
            except socket.timeout:
                self._drop("the connection was closed after a timeout")
                raise TimeoutError("no reply from tarde in time") from None
            except ConnectionError as e:
                self._drop(f"the connection was lost: {e}")
                raise
            except OSError as e:
                self._drop(f"the connection was lost: {e}")
                raise ConnectionError(f"tarde connection failed: {e}") from e

    # ------------------------------------------------------------ commands

    def enqueue(
        self,
        queue: str,
        tx_id: str,
        payload: Union[bytes, str] = b"",
        *,
        max_attempts: Optional[int] = None,
        base: Optional[p.Duration] = None,
        factor: Optional[float] = None,
        cap: Optional[p.Duration] = None,
        jitter: Optional[float] = None,
        strict_cap: Optional[bool] = None,
        deadline: Optional[p.Duration] = None,
        sent: Optional[bool] = None,
        delay: Optional[p.Duration] = None,
    ) -> Summary:
        """``ENQUEUE``: create a transaction (``CREATED``) or find it (``EXISTS``).

        Options left ``None`` take the queue's ``CONFIG``.
        """
        data = p.enqueue_request(
            queue,
            tx_id,
            payload,
            dict(
                max_attempts=max_attempts,
                base=base,
                factor=factor,
                cap=cap,
                jitter=jitter,
                strict_cap=strict_cap,
                deadline=deadline,
                sent=sent,
                delay=delay,
            ),
        )
        return self._call(data, p.summary_reply())  # type: ignore[no-any-return]

    def reserve(
        self, queue: Union[str, Sequence[str]], wait: Optional[p.Duration] = None
    ) -> Optional[Request]:
        """``RESERVE``: the oldest ready request, leased to this connection, or ``None`` (``EMPTY``).

        ``queue`` may be a list of up to 16 queues: the request comes from
        whichever has one, the server rotating which it tries first on each
        call of this connection. The reply does not say which queue; ``get`` does.
        """
        data, extra = p.reserve_request(queue, wait)
        return self._call(data, p.reserve_reply(), extra)  # type: ignore[no-any-return]

    def sent(self, tx_id: str, attempt: int) -> Summary:
        """``SENT``: the request of ``attempt`` went out (``OK``; ``STALE`` if not current)."""
        data = p.command(b"SENT", p.tx_id_arg(tx_id), p.attempt_arg(attempt))
        return self._call(data, p.summary_reply())  # type: ignore[no-any-return]

    def release(
        self,
        tx_id: str,
        attempt: int,
        delay: Optional[p.Duration] = None,
        reason: Optional[str] = None,
    ) -> Summary:
        """``RELEASE``: hand a leased request back (``OK``, ``BURIED`` or ``STALE``)."""
        data = p.release_request(tx_id, attempt, delay, reason)
        return self._call(data, p.summary_reply())  # type: ignore[no-any-return]

    def respond(
        self,
        tx_id: str,
        attempt: int,
        outcome: str,
        reason: Optional[str] = None,
        retry_after: Optional[p.Duration] = None,
    ) -> Summary:
        """``RESPOND``: report the external service's answer.

        ``outcome`` is ``SUCCESS``, ``CANCELLED``, ``TRANSIENT`` or ``REJECTED``.
        """
        data = p.respond_request(tx_id, attempt, outcome, reason, retry_after)
        return self._call(data, p.summary_reply())  # type: ignore[no-any-return]

    def resolve(self, tx_id: str, outcome: str, reason: Optional[str] = None) -> Summary:
        """``RESOLVE``: settle a waiting transaction as ``SUCCEEDED`` or ``FAILED``."""
        data = p.resolve_request(tx_id, outcome, reason)
        return self._call(data, p.summary_reply())  # type: ignore[no-any-return]

    def touch(self, tx_id: str, attempt: int) -> Summary:
        """``TOUCH``: extend the lease this connection holds (``OK``), else ``STALE``."""
        data = p.command(b"TOUCH", p.tx_id_arg(tx_id), p.attempt_arg(attempt))
        return self._call(data, p.summary_reply())  # type: ignore[no-any-return]

    def pause(self, queue: str) -> None:
        """``PAUSE``: the queue hands nothing out until ``resume`` (idempotent, persisted)."""
        data = p.command(b"PAUSE", p.queue_arg(queue))
        self._call(data, p.queue_word_reply("PAUSED", queue))

    def resume(self, queue: str) -> None:
        """``RESUME``: the queue hands out requests again (idempotent)."""
        data = p.command(b"RESUME", p.queue_arg(queue))
        self._call(data, p.queue_word_reply("RESUMED", queue))

    def redrive_all(
        self,
        queue: str,
        prefix: Optional[str] = None,
        last_error: Optional[str] = None,
        limit: Optional[int] = None,
    ) -> int:
        """``REDRIVE_ALL``: redrive the matching dead letters (at most ``limit``, server default 100).

        Returns how many were redriven.
        """
        tokens = p.bulk_options(prefix, last_error, limit)
        data = p.command(b"REDRIVE_ALL", p.queue_arg(queue), *tokens)
        return self._call(data, p.count_reply("REDRIVEN"))  # type: ignore[no-any-return]

    def resolve_all(
        self,
        queue: str,
        outcome: str,
        prefix: Optional[str] = None,
        last_error: Optional[str] = None,
        reason: Optional[str] = None,
        limit: Optional[int] = None,
    ) -> int:
        """``RESOLVE_ALL``: end the matching dead letters' transactions as ``outcome``.

        Returns how many were resolved.
        """
        data = p.resolve_all_request(queue, outcome, prefix, last_error, reason, limit)
        return self._call(data, p.count_reply("RESOLVED"))  # type: ignore[no-any-return]

    def get(self, tx_id: str, payload: bool = False) -> Optional[Transaction]:
        """``GET``: the transaction, or ``None`` when tarde does not know it."""
        extra = [b"payload=1"] if payload else []
        data = p.command(b"GET", p.tx_id_arg(tx_id), *extra)
        return self._call(data, p.get_reply(payload))  # type: ignore[no-any-return]

    def history(self, tx_id: str, limit: Optional[int] = None) -> Optional[List[Event]]:
        """``HISTORY``: audit events oldest first, or ``None`` for an unknown transaction."""
        data = p.command(b"HISTORY", p.tx_id_arg(tx_id), *p.limit_option(limit))
        return self._call(data, p.history_reply())  # type: ignore[no-any-return]

    def deadletters(
        self, queue: str, limit: Optional[int] = None, payload: bool = False
    ) -> List[Letter]:
        """``DEADLETTERS``: the queue's dead letters in ``tx_id`` order."""
        extra = [b"payload=1"] if payload else []
        data = p.command(b"DEADLETTERS", p.queue_arg(queue), *p.limit_option(limit), *extra)
        return self._call(data, p.deadletters_reply(payload))  # type: ignore[no-any-return]

    def list(
        self,
        queue: str,
        state: str,
        after: Optional[str] = None,
        limit: Optional[int] = None,
        prefix: Optional[str] = None,
        reason: Optional[str] = None,
    ) -> ListPage:
        """``LIST``: one page of the queue's transactions in ``state``.

        ``state`` is one of ``ready``, ``leased``, ``in_flight``, ``scheduled``,
        ``succeeded``, ``failed``, ``dead``. Pass the page's ``next`` as
        ``after`` for the following page; it is ``None`` on the last one.
        """
        data = p.list_request(queue, state, after, limit, prefix, reason)
        return self._call(data, p.list_reply())  # type: ignore[no-any-return]

    def redrive(self, queue: str, tx_id: str) -> Summary:
        """``REDRIVE``: make a dead letter ready again (``OK``) or ``NOT_FOUND``."""
        data = p.command(b"REDRIVE", p.queue_arg(queue), p.tx_id_arg(tx_id))
        return self._call(data, p.summary_reply())  # type: ignore[no-any-return]

    def config(self, queue: str, **settings: Any) -> Dict[str, str]:
        """``CONFIG``: set the given settings, return all of the queue's settings.

        Values: durations as seconds or strings (``"50ms"``), bools for
        ``strict_cap``/``breaker``, numbers otherwise. The result maps each
        setting name to its value as the server printed it (``"2h"``, ``"0.1"``).
        """
        data = p.config_request(queue, settings)
        return self._call(data, p.config_reply())  # type: ignore[no-any-return]

    def stats(self) -> Dict[str, int]:
        """``STATS``: counters by name (ignore names you do not know)."""
        return self._call(p.command(b"STATS"), p.stats_reply())  # type: ignore[no-any-return]

    def backup(self, allow: float = 3600.0) -> Backup:
        """``BACKUP``: make a verified backup into the server's ``--backup-dir``.

        Returns once the backup is made and verified; ``allow`` is how many
        seconds it may take on top of the client's ``timeout``. Raises
        :class:`NotConfigured` (no ``--backup-dir``), :class:`Busy` (a backup
        is running) or :class:`BackupFailed`; the connection stays usable.
        """
        return self._call(p.command(b"BACKUP"), p.backup_reply(), extra=allow)  # type: ignore[no-any-return]

    def ping(self) -> None:
        """``PING``: raises if the server does not answer ``PONG``."""
        self._call(p.command(b"PING"), p.word_reply("PONG"))

    def _raw(self, line: Union[str, bytes]) -> str:
        """Send one raw line (or bytes) and return the first reply line; ``ERR`` raises.

        For tests and tools only: nothing is checked, so this can break framing.
        """
        return self._call(p.raw_request(line), p.raw_reply())  # type: ignore[no-any-return]
