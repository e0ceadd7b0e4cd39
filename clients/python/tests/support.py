"""Starting a real tarde server for the tests.

The binary is ``$TARDE_BIN`` when set, else ``<repo>/build/bin/tarde``.
Tests that need it are skipped when neither exists (and fail when
``TARDE_BIN`` names a file that does not).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest
import uuid
from pathlib import Path
from typing import Callable, List, Optional

HERE = Path(__file__).resolve().parent
PYTHON_ROOT = HERE.parent  # clients/python
REPO_ROOT = HERE.parents[2]
EXAMPLES = REPO_ROOT / "examples"

if str(PYTHON_ROOT) not in sys.path:
    sys.path.insert(0, str(PYTHON_ROOT))

import tarde  # noqa: E402


def tarde_bin() -> Optional[Path]:
    env = os.environ.get("TARDE_BIN")
    if env:
        return Path(env)
    default = REPO_ROOT / "build" / "bin" / "tarde"
    return default if default.exists() else None


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_until(predicate: Callable[[], object], timeout: float = 10.0, interval: float = 0.01, what: str = "condition") -> object:
    """Poll ``predicate`` until it returns something true; fail after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(interval)


def wait_for_commands(client: "tarde.Client", before: int, n: int = 1, timeout: float = 10.0) -> None:
    """Wait until the server has counted ``n`` commands from other connections.

    ``before`` is ``client.stats()["commands"]`` read earlier; every STATS
    call made here counts one more command of its own.
    """
    calls = [0]

    def arrived() -> bool:
        calls[0] += 1
        return client.stats()["commands"] >= before + calls[0] + n

    wait_until(arrived, timeout=timeout, what=f"{n} command(s) from other connections")


def unique(prefix: str = "TX") -> str:
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


class TardeServer:
    """One ``tarde serve`` process on a free loopback port with its own data directory."""

    def __init__(self, *args: str, token: Optional[str] = None) -> None:
        binary = tarde_bin()
        if binary is None:
            raise unittest.SkipTest("no tarde binary: build it (build/bin/tarde) or set TARDE_BIN")
        if not binary.exists():
            raise RuntimeError(f"TARDE_BIN={binary} does not exist")
        self.binary = binary
        self.args: List[str] = list(args)
        self.token = token
        self.tmp = Path(tempfile.mkdtemp(prefix="tarde-pytest-"))
        self.data = self.tmp / "data"
        self.log_path = self.tmp / "server.log"
        self.port = free_port()
        self.proc: Optional["subprocess.Popen[bytes]"] = None
        if token is not None:
            token_file = self.tmp / "token"
            token_file.write_text(token + "\n")
            token_file.chmod(0o600)
            self.args += ["--auth-token-file", str(token_file)]

    def start(self) -> "TardeServer":
        cmd = [
            str(self.binary),
            "serve",
            "--listen",
            f"127.0.0.1:{self.port}",
            "--data",
            str(self.data),
            "--sync",
            "none",
            *self.args,
        ]
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(cmd, stdout=log, stderr=log, stdin=subprocess.DEVNULL)
        self._wait_ready()
        return self

    def _wait_ready(self, timeout: float = 10.0) -> None:
        deadline = time.monotonic() + timeout
        while True:
            assert self.proc is not None
            if self.proc.poll() is not None:
                raise RuntimeError(f"tarde exited with {self.proc.returncode}:\n{self.log()}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1.0) as s:
                    s.sendall(b"PING\r\n")
                    if s.recv(64).startswith(b"PONG"):
                        return
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"tarde did not answer PING within {timeout}s:\n{self.log()}")
            time.sleep(0.02)

    def log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-4000:]
        except OSError:
            return ""

    def stop(self, sig: int = signal.SIGTERM) -> Optional[int]:
        proc, self.proc = self.proc, None
        if proc is None:
            return None
        if proc.poll() is None:
            proc.send_signal(sig)
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(10)
        return proc.returncode

    def restart(self) -> None:
        self.stop()
        self.start()

    def cleanup(self) -> None:
        self.stop(signal.SIGKILL)
        shutil.rmtree(self.tmp, ignore_errors=True)

    def client(self, **kw: object) -> tarde.Client:
        kw.setdefault("token", self.token)
        kw.setdefault("timeout", 10.0)
        return tarde.Client("127.0.0.1", self.port, **kw)  # type: ignore[arg-type]


class ServerTestCase(unittest.TestCase):
    """A test class with its own server (``server_args``), started once for the class."""

    server_args: tuple = ()
    server_token: Optional[str] = None
    server: TardeServer

    @classmethod
    def setUpClass(cls) -> None:
        super().setUpClass()
        cls.server = TardeServer(*cls.server_args, token=cls.server_token)
        try:
            cls.server.start()
        except BaseException:
            cls.server.cleanup()
            raise

    @classmethod
    def tearDownClass(cls) -> None:
        cls.server.cleanup()
        super().tearDownClass()

    def client(self, **kw: object) -> tarde.Client:
        c = self.server.client(**kw)
        self.addCleanup(c.close)
        return c

    @property
    def port(self) -> int:
        return self.server.port
