"""The asyncio tarde client, with pipelining.

Any number of coroutines may issue commands on one :class:`Client` at the
same time: each command is written at once and its reply is matched by
order (tarde answers in request order). Note that the server answers in
order too: a ``reserve(wait=...)`` that waits holds back the replies of the
commands issued after it on the same connection; give waiting reservations
their own client.
"""

from __future__ import annotations

import asyncio
import collections
import socket
from typing import Any, Deque, Dict, List, Optional, Sequence, Tuple, Union

from . import _protocol as p
from .errors import ProtocolError, TardeError
from .types import Backup, Event, Letter, ListPage, Request, Summary, Transaction

__all__ = ["Client"]

_Pending = Tuple[p.Parser, "asyncio.Future[Any]", float]


class Client:
    """An asyncio connection to a tarde server.

    Open it with ``client = await Client.connect(host, port, token=...)`` or
    ``async with Client(host, port) as client:``. The methods are those of
    :class:`tarde.Client`, as coroutines. ``timeout`` (seconds, ``None`` =
    none) bounds connecting and each reply, counted from when the reply is
    next in line; ``reserve(wait=...)`` adds its wait. A timeout closes the
    connection (it is out of step): the command raises :class:`TimeoutError`,
    the ones queued after it and every later one :class:`ConnectionError`.
    The client never reconnects by itself.
    """

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 7400,
        token: Optional[str] = None,
        timeout: Optional[float] = 30.0,
    ) -> None:
        if token is not None:
            p.token_arg(token, "token")
        self.host = host
        self.port = port
        self.timeout = timeout
        self._token = token
        self._reader: Optional[asyncio.StreamReader] = None
        self._writer: Optional[asyncio.StreamWriter] = None
        self._pending: Deque[_Pending] = collections.deque()
        self._wakeup: Optional[asyncio.Event] = None
        self._drain_lock: Optional[asyncio.Lock] = None
        self._task: Optional["asyncio.Task[None]"] = None
        self._failure: Optional[BaseException] = None
        self._opened = False

    @classmethod
    async def connect(
        cls,
        host: str = "127.0.0.1",
        port: int = 7400,
        token: Optional[str] = None,
        timeout: Optional[float] = 30.0,
    ) -> "Client":
        client = cls(host, port, token, timeout)
        await client.open()
        return client

    async def open(self) -> None:
        """Connect (and ``AUTH``). Called by :meth:`connect` and ``async with``."""
        if self._opened:
            raise RuntimeError("this client was already opened; make a new one")
        self._opened = True
        try:
            reader, writer = await asyncio.wait_for(
                asyncio.open_connection(self.host, self.port), self.timeout
            )
        except asyncio.TimeoutError:
            self._failure = ConnectionError("not connected")
            raise TimeoutError(f"connecting to tarde at {self.host}:{self.port} timed out") from None
        except ConnectionError:
            self._failure = ConnectionError("not connected")
            raise
        except OSError as e:
            self._failure = ConnectionError("not connected")
            raise ConnectionError(f"cannot connect to tarde at {self.host}:{self.port}: {e}") from e
        sock = writer.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._reader, self._writer = reader, writer
        self._wakeup = asyncio.Event()
        self._drain_lock = asyncio.Lock()
        self._task = asyncio.ensure_future(self._read_loop())
        if self._token is not None:
            try:
                await self._call(p.auth_request(self._token), p.word_reply("OK"))
            except BaseException:
                await self.close()
                raise

    async def __aenter__(self) -> "Client":
        if not self._opened:
            await self.open()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()

    @property
    def closed(self) -> bool:
        return self._failure is not None or not self._opened

    async def close(self) -> None:
        """Close the connection; commands still waiting raise :class:`ConnectionError`."""
        self._fail(ConnectionError("the connection is closed"))
        task, self._task = self._task, None
        if task is not None and task is not asyncio.current_task():
            task.cancel()
            try:
                await task
            except (asyncio.CancelledError, Exception):
                pass
        writer, self._writer = self._writer, None
        if writer is not None:
            writer.close()
            try:
                await writer.wait_closed()
            except (OSError, asyncio.CancelledError):
                pass

    def _fail(self, exc: BaseException, head: Optional[BaseException] = None) -> None:
        """Mark the connection failed; fail every waiting command (the first with ``head``)."""
        if self._failure is None:
            self._failure = exc
        first = True
        while self._pending:
            _, fut, _ = self._pending.popleft()
            if not fut.done():
                fut.set_exception(head if (first and head is not None) else exc)
            first = False
        if self._writer is not None:
            self._writer.close()
        if self._wakeup is not None:
            self._wakeup.set()

    async def _read_loop(self) -> None:
        assert self._reader is not None and self._wakeup is not None
        reader = self._reader
        while self._failure is None:
            if not self._pending:
                self._wakeup.clear()
                await self._wakeup.wait()
                continue
            parser, fut, extra = self._pending[0]
            try:
                if self.timeout is None:
                    result = await self._parse(reader, parser)
                else:
                    result = await asyncio.wait_for(
                        self._parse(reader, parser), self.timeout + extra
                    )
            except asyncio.TimeoutError:
                self._fail(
                    ConnectionError("the connection was closed after a timeout"),
                    TimeoutError("no reply from tarde in time"),
                )
                return
            except TardeError as e:
                self._pending.popleft()
                if not fut.done():
                    fut.set_exception(e)
                if e.closes_connection:
                    self._fail(ConnectionError(f"the connection was closed after {e.code}"))
                    return
                continue
            except (asyncio.IncompleteReadError, ConnectionError, OSError) as e:
                self._fail(ConnectionError(f"the connection was lost: {e or 'closed by tarde'}"))
                return
            except asyncio.LimitOverrunError as e:
                self._fail(ProtocolError(f"reply line too long: {e}"))
                return
            self._pending.popleft()
            if not fut.done():
                fut.set_result(result)

    @staticmethod
    async def _parse(reader: asyncio.StreamReader, parser: p.Parser) -> Any:
        need = next(parser)
        while True:
            if need < 0:
                data = await reader.readuntil(b"\n")
                data = data[:-2] if data.endswith(b"\r\n") else data[:-1]
            else:
                data = await reader.readexactly(need + 2)
                if not data.endswith(b"\r\n"):
                    raise ProtocolError("payload not followed by CRLF")
                data = data[:-2]
            try:
                need = parser.send(data)
            except StopIteration as stop:
                return stop.value

    async def _call(self, data: bytes, parser: p.Parser, extra: float = 0.0) -> Any:
        if self._failure is not None:
            raise ConnectionError(str(self._failure) or "the connection is closed")
        if self._writer is None or self._wakeup is None or self._drain_lock is None:
            raise ConnectionError("not connected: use await Client.connect(...) or async with")
        fut: "asyncio.Future[Any]" = asyncio.get_running_loop().create_future()
        self._pending.append((parser, fut, extra))
        self._wakeup.set()
        self._writer.write(data)
        transport = self._writer.transport
        if transport.get_write_buffer_size() > 1 << 20:
            async with self._drain_lock:
                try:
                    await self._writer.drain()
                except (ConnectionError, OSError) as e:
                    self._fail(ConnectionError(f"the connection was lost: {e}"))
        return await fut

    # ------------------------------------------------------------ commands

    async def enqueue(
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
        return await self._call(data, p.summary_reply())  # type: ignore[no-any-return]

    async def reserve(
        self, queue: Union[str, Sequence[str]], wait: Optional[p.Duration] = None
    ) -> Optional[Request]:
        data, extra = p.reserve_request(queue, wait)
        return await self._call(data, p.reserve_reply(), extra)  # type: ignore[no-any-return]

    async def sent(self, tx_id: str, attempt: int) -> Summary:
        data = p.command(b"SENT", p.tx_id_arg(tx_id), p.attempt_arg(attempt))
        return await self._call(data, p.summary_reply())  # type: ignore[no-any-return]

    async def release(
        self,
        tx_id: str,
        attempt: int,
        delay: Optional[p.Duration] = None,
        reason: Optional[str] = None,
    ) -> Summary:
        data = p.release_request(tx_id, attempt, delay, reason)
        return await self._call(data, p.summary_reply())  # type: ignore[no-any-return]

    async def respond(
        self,
        tx_id: str,
        attempt: int,
        outcome: str,
        reason: Optional[str] = None,
        retry_after: Optional[p.Duration] = None,
    ) -> Summary:
        data = p.respond_request(tx_id, attempt, outcome, reason, retry_after)
        return await self._call(data, p.summary_reply())  # type: ignore[no-any-return]

    async def resolve(self, tx_id: str, outcome: str, reason: Optional[str] = None) -> Summary:
        data = p.resolve_request(tx_id, outcome, reason)
        return await self._call(data, p.summary_reply())  # type: ignore[no-any-return]

    async def touch(self, tx_id: str, attempt: int) -> Summary:
        """``TOUCH``: extend the lease this connection holds (``OK``), else ``STALE``."""
        data = p.command(b"TOUCH", p.tx_id_arg(tx_id), p.attempt_arg(attempt))
        return await self._call(data, p.summary_reply())  # type: ignore[no-any-return]

    async def pause(self, queue: str) -> None:
        """``PAUSE``: the queue hands nothing out until ``resume`` (idempotent, persisted)."""
        data = p.command(b"PAUSE", p.queue_arg(queue))
        await self._call(data, p.queue_word_reply("PAUSED", queue))

    async def resume(self, queue: str) -> None:
        """``RESUME``: the queue hands out requests again (idempotent)."""
        data = p.command(b"RESUME", p.queue_arg(queue))
        await self._call(data, p.queue_word_reply("RESUMED", queue))

    async def redrive_all(
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
        return await self._call(data, p.count_reply("REDRIVEN"))  # type: ignore[no-any-return]

    async def resolve_all(
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
        return await self._call(data, p.count_reply("RESOLVED"))  # type: ignore[no-any-return]

    async def get(self, tx_id: str, payload: bool = False) -> Optional[Transaction]:
        extra = [b"payload=1"] if payload else []
        data = p.command(b"GET", p.tx_id_arg(tx_id), *extra)
        return await self._call(data, p.get_reply(payload))  # type: ignore[no-any-return]

    async def history(self, tx_id: str, limit: Optional[int] = None) -> Optional[List[Event]]:
        data = p.command(b"HISTORY", p.tx_id_arg(tx_id), *p.limit_option(limit))
        return await self._call(data, p.history_reply())  # type: ignore[no-any-return]

    async def deadletters(
        self, queue: str, limit: Optional[int] = None, payload: bool = False
    ) -> List[Letter]:
        extra = [b"payload=1"] if payload else []
        data = p.command(b"DEADLETTERS", p.queue_arg(queue), *p.limit_option(limit), *extra)
        return await self._call(data, p.deadletters_reply(payload))  # type: ignore[no-any-return]

    async def list(
        self,
        queue: str,
        state: str,
        after: Optional[str] = None,
        limit: Optional[int] = None,
        prefix: Optional[str] = None,
        reason: Optional[str] = None,
    ) -> ListPage:
        data = p.list_request(queue, state, after, limit, prefix, reason)
        return await self._call(data, p.list_reply())  # type: ignore[no-any-return]

    async def redrive(self, queue: str, tx_id: str) -> Summary:
        data = p.command(b"REDRIVE", p.queue_arg(queue), p.tx_id_arg(tx_id))
        return await self._call(data, p.summary_reply())  # type: ignore[no-any-return]

    async def config(self, queue: str, **settings: Any) -> Dict[str, str]:
        data = p.config_request(queue, settings)
        return await self._call(data, p.config_reply())  # type: ignore[no-any-return]

    async def stats(self) -> Dict[str, int]:
        return await self._call(p.command(b"STATS"), p.stats_reply())  # type: ignore[no-any-return]

    async def backup(self, allow: float = 3600.0) -> Backup:
        """``BACKUP``, as :meth:`tarde.Client.backup`."""
        return await self._call(p.command(b"BACKUP"), p.backup_reply(), extra=allow)  # type: ignore[no-any-return]

    async def ping(self) -> None:
        await self._call(p.command(b"PING"), p.word_reply("PONG"))

    async def _raw(self, line: Union[str, bytes]) -> str:
        """Send one raw line and return the first reply line (tests and tools only)."""
        return await self._call(p.raw_request(line), p.raw_reply())  # type: ignore[no-any-return]
