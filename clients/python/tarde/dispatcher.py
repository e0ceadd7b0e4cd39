"""A dispatcher: worker threads that take requests from a queue and call a handler."""

from __future__ import annotations

import collections
import logging
import random
import signal
import threading
import time
from typing import Any, Callable, Dict, List, Optional, Tuple

from . import _protocol as p
from .answers import Answer
from .client import Client
from .errors import Internal, TardeError
from .types import Request

__all__ = ["Dispatcher"]

log = logging.getLogger("tarde.dispatcher")

Handler = Callable[[Request], Answer]


class _Worker:
    def __init__(self, index: int) -> None:
        self.index = index
        self.lock = threading.Lock()
        self.client: Optional[Client] = None
        self.in_call: Optional[Request] = None
        self.abandoned = False
        self.thread: Optional[threading.Thread] = None


class Dispatcher:
    """Runs ``concurrency`` worker threads, each with its own connection, that

    1. ``RESERVE`` the queue's next request (waiting ``reserve_wait`` seconds
       at most, so that a stop is noticed);
    2. send ``SENT`` immediately before calling ``handler(request)``;
    3. ``RESPOND`` with the :class:`~tarde.Answer` the handler returns. An
       exception in the handler answers ``TRANSIENT`` with the exception's
       class name as reason (a return value that is not an ``Answer`` counts
       as a ``TypeError``).

    :meth:`run` blocks until :meth:`stop` is called or, when ``run()`` is on
    the main thread, until SIGTERM or SIGINT arrives (a second one skips the
    wait for running calls). Stopping stops
    reserving, lets running handler calls finish for up to
    ``shutdown_timeout`` seconds, hands back (``RELEASE``, reason
    ``SHUTDOWN``) a request reserved but not yet sent, and closes. A call
    still running at the deadline is answered ``TRANSIENT`` reason
    ``SHUTDOWN``: the same attempt, with the same idempotency key, goes out
    again after the transient backoff (its late result is ignored).

    A lost connection is reopened with capped, jittered exponential backoff
    (``backoff_base`` doubling up to ``backoff_cap`` seconds); an answer not
    yet acknowledged is sent again on the new connection (a repeat is
    ``STALE``, harmless). An ``Unauthorized``, ``BadArgument`` or
    ``BadCommand`` reply is a mistake that retrying cannot fix: the
    dispatcher stops and :meth:`run` raises it.
    """

    def __init__(
        self,
        queue: str,
        handler: Handler,
        host: str = "127.0.0.1",
        port: int = 7400,
        token: Optional[str] = None,
        concurrency: int = 8,
        shutdown_timeout: float = 30.0,
        *,
        reserve_wait: float = 1.0,
        timeout: Optional[float] = 30.0,
        backoff_base: float = 0.1,
        backoff_cap: float = 10.0,
    ) -> None:
        p.queue_arg(queue)
        if token is not None:
            p.token_arg(token, "token")
        if not callable(handler):
            raise TypeError("handler must be callable")
        if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
            raise ValueError(f"concurrency must be an int >= 1, got {concurrency!r}")
        if shutdown_timeout < 0 or reserve_wait <= 0 or backoff_base <= 0 or backoff_cap < backoff_base:
            raise ValueError("shutdown_timeout >= 0, reserve_wait > 0 and 0 < backoff_base <= backoff_cap")
        p.duration_ms(reserve_wait, "reserve_wait")
        self.queue = queue
        self.handler = handler
        self.host = host
        self.port = port
        self.token = token
        self.concurrency = concurrency
        self.shutdown_timeout = shutdown_timeout
        self.reserve_wait = reserve_wait
        self.timeout = timeout
        self.backoff_base = backoff_base
        self.backoff_cap = backoff_cap
        self._stopping = threading.Event()
        self._hard_stop = threading.Event()
        self._force = threading.Event()
        self._started = False
        self._workers: List[_Worker] = []
        self._counts: Dict[str, int] = collections.Counter()
        self._counts_lock = threading.Lock()
        self._fatal: Optional[BaseException] = None

    # ------------------------------------------------------------ control

    @property
    def stopping(self) -> bool:
        return self._stopping.is_set()

    def stop(self) -> None:
        """Ask :meth:`run` to stop (returns at once; safe from any thread and from handlers)."""
        self._stopping.set()

    def counters(self) -> Dict[str, int]:
        """Counts since start: ``reserved``, ``calls`` (handler calls), ``answered``,
        one per outcome (``success``, ``cancelled``, ``transient``, ``rejected``),
        ``handler_errors``, ``stale``, ``released``, ``reconnects``, ``abandoned``."""
        with self._counts_lock:
            return dict(self._counts)

    def _count(self, name: str, n: int = 1) -> None:
        with self._counts_lock:
            self._counts[name] += n

    def run(self) -> None:
        """Start the workers and block until stopped (see the class documentation)."""
        if self._started:
            raise RuntimeError("a Dispatcher runs once; make a new one")
        self._started = True
        on_main = threading.current_thread() is threading.main_thread()
        previous: Dict[int, Any] = {}
        if on_main:
            for sig in (signal.SIGTERM, signal.SIGINT):
                previous[sig] = signal.signal(sig, self._on_signal)
        try:
            for i in range(self.concurrency):
                w = _Worker(i)
                w.thread = threading.Thread(
                    target=self._work, args=(w,), name=f"tarde-{self.queue}-{i}", daemon=True
                )
                self._workers.append(w)
                w.thread.start()
            while not self._stopping.wait(0.2):
                pass
            deadline = time.monotonic() + self.shutdown_timeout
            for w in self._workers:
                assert w.thread is not None
                while w.thread.is_alive() and time.monotonic() < deadline and not self._force.is_set():
                    w.thread.join(min(0.2, max(0.0, deadline - time.monotonic())))
            self._abandon()
            for w in self._workers:
                assert w.thread is not None
                if w.in_call is None:
                    w.thread.join(1.0)
        finally:
            self._hard_stop.set()
            self._stopping.set()
            for sig, handler in previous.items():
                signal.signal(sig, handler)
        if self._fatal is not None:
            raise self._fatal

    def _on_signal(self, signum: int, frame: Any) -> None:
        if self._stopping.is_set():
            log.info("signal %d again: not waiting for running calls", signum)
            self._force.set()
        else:
            log.info("signal %d: stopping the dispatcher of %s", signum, self.queue)
        self.stop()

    def _abandon(self) -> None:
        """At the shutdown deadline: answer calls still running TRANSIENT, close every connection."""
        self._hard_stop.set()
        for w in self._workers:
            with w.lock:
                w.abandoned = True
                req, client = w.in_call, w.client
                w.client = None
            if client is None:
                continue
            if req is not None:
                try:
                    client.respond(req.tx_id, req.attempt, "TRANSIENT", reason="SHUTDOWN")
                    self._count("abandoned")
                    log.warning(
                        "handler still running at shutdown for %s: answered TRANSIENT SHUTDOWN", req.key
                    )
                except (TardeError, ConnectionError, TimeoutError, OSError) as e:
                    log.error("could not answer %s at shutdown: %s", req.key, e)
            client.close()

    # ------------------------------------------------------------ workers

    def _backoff(self, failures: int) -> None:
        ceiling = min(self.backoff_cap, self.backoff_base * (2 ** min(failures - 1, 30)))
        delay = ceiling / 2 + random.uniform(0, ceiling / 2)
        event = self._hard_stop if self._stopping.is_set() else self._stopping
        event.wait(delay)

    def _drop(self, w: _Worker) -> None:
        with w.lock:
            client, w.client = w.client, None
        if client is not None:
            client.close()

    @staticmethod
    def _release_slot(w: _Worker) -> bool:
        """The worker no longer holds a request; False if the shutdown deadline took it over."""
        with w.lock:
            w.in_call = None
            return not w.abandoned

    def _call_handler(self, w: _Worker, req: Request) -> Optional[Answer]:
        """Call the handler (``w.in_call`` is set); None if the shutdown deadline answered for us."""
        if w.abandoned:
            return None
        self._count("calls")
        try:
            answer = self.handler(req)
            if not isinstance(answer, Answer):
                log.error("handler returned %r for %s, not an Answer", type(answer).__name__, req.key)
                answer = Answer.transient("TypeError")
                self._count("handler_errors")
        except Exception as e:
            log.warning("handler raised %s for %s: answering TRANSIENT", type(e).__name__, req.key, exc_info=True)
            answer = Answer.transient(type(e).__name__)
            self._count("handler_errors")
        return answer if self._release_slot(w) else None

    def _work(self, w: _Worker) -> None:
        failures = 0
        connected_before = False
        pending_sent: Optional[Request] = None  # reserved; SENT not acknowledged yet
        sent_retry = False
        pending_answer: Optional[Tuple[Request, Answer]] = None
        while not w.abandoned:
            client = w.client
            if client is None:
                if self._stopping.is_set() and pending_answer is None and pending_sent is None:
                    break
                try:
                    client = Client(self.host, self.port, self.token, self.timeout)
                except (ConnectionError, TimeoutError, OSError) as e:
                    failures += 1
                    log.warning("cannot connect to tarde at %s:%s: %s", self.host, self.port, e)
                    self._backoff(failures)
                    continue
                except TardeError as e:
                    if e.closes_connection or isinstance(e, Internal):
                        failures += 1
                        log.warning("tarde refused the connection: %s", e)
                        self._backoff(failures)
                        continue
                    self._fail(e)
                    break
                with w.lock:
                    if w.abandoned:
                        client.close()
                        break
                    w.client = client
                if connected_before:
                    self._count("reconnects")
                    log.info("worker %d reconnected to tarde", w.index)
                connected_before = True
            try:
                if pending_answer is not None:
                    req, answer = pending_answer
                    summary = client.respond(
                        req.tx_id, req.attempt, answer.outcome, answer.reason, answer.retry_after
                    )
                    pending_answer = None
                    failures = 0
                    self._count("answered")
                    self._count(answer.outcome.lower())
                    if summary.status == "STALE":
                        self._count("stale")
                    continue
                if pending_sent is None:
                    if self._stopping.is_set():
                        break
                    got = client.reserve(self.queue, wait=self.reserve_wait)
                    failures = 0
                    if got is None:
                        continue
                    self._count("reserved")
                    if self._stopping.is_set():
                        client.release(got.tx_id, got.attempt, reason="SHUTDOWN")
                        self._count("released")
                        continue
                    pending_sent, sent_retry = got, False
                req = pending_sent
                # From here until its answer is queued, a shutdown deadline answers
                # this request TRANSIENT for us (see _abandon).
                with w.lock:
                    if w.abandoned:
                        break
                    w.in_call = req
                summary = client.sent(req.tx_id, req.attempt)
                pending_sent = None
                mine = summary.status == "OK" or (
                    # After a lost reply: our own SENT may have been applied.
                    sent_retry
                    and summary.status == "STALE"
                    and summary.state == "IN_FLIGHT"
                    and summary.attempt == req.attempt
                )
                if not mine:
                    self._release_slot(w)
                    self._count("stale")
                    continue
                if self._stopping.is_set() and sent_retry:
                    # Confirmed only now, while stopping: let it go out again later.
                    if not self._release_slot(w):
                        break
                    pending_answer = (req, Answer.transient("SHUTDOWN"))
                    continue
                answer = self._call_handler(w, req)
                if answer is None:
                    break
                pending_answer = (req, answer)
            except Internal as e:
                failures += 1
                log.warning("tarde could not commit (%s); retrying", e)
                if pending_sent is not None:
                    sent_retry = True
                self._backoff(failures)
            except (ConnectionError, TimeoutError, OSError) as e:
                self._lost(w, e)
                failures += 1
                if pending_sent is not None:
                    sent_retry = True
                self._backoff(failures)
            except TardeError as e:
                if not e.closes_connection:
                    self._fail(e)
                    break
                self._lost(w, e)
                failures += 1
                if pending_sent is not None:
                    sent_retry = True
                self._backoff(failures)
        if pending_answer is not None:
            log.error(
                "dispatcher stopped before tarde acknowledged the answer for %s", pending_answer[0].key
            )
        self._drop(w)

    def _lost(self, w: _Worker, e: BaseException) -> None:
        if not w.abandoned:
            log.warning("worker %d lost its tarde connection: %s", w.index, e)
        self._drop(w)

    def _fail(self, e: BaseException) -> None:
        log.error("dispatcher of %s stops: %s", self.queue, e)
        if self._fatal is None:
            self._fatal = e
        self.stop()
