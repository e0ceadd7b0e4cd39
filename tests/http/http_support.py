"""A real ``tarde serve`` with its HTTP listener, for the HTTP and dashboard tests.

Reuses the Python client's test support (clients/python/tests/support.py):
the server binary is ``$TARDE_BIN`` (set by CTest), the client is the
Python client of this repository. Standard library only.
"""

from __future__ import annotations

import http.client
import importlib.util
import json
import socket
import sys
import time
from pathlib import Path
from typing import Any, Dict, Optional, Tuple

REPO_ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO_ROOT / "clients" / "python"))

_spec = importlib.util.spec_from_file_location(
    "tarde_client_test_support", REPO_ROOT / "clients" / "python" / "tests" / "support.py")
support = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(support)

import tarde  # noqa: E402

free_port = support.free_port
wait_until = support.wait_until


class HttpServer(support.TardeServer):
    """tarde serve with --http-listen on a free loopback port."""

    def __init__(self, *args: str, token: Optional[str] = None) -> None:
        self.http_port = free_port()
        super().__init__("--http-listen", f"127.0.0.1:{self.http_port}", *args, token=token)

    def client(self) -> "tarde.Client":
        return tarde.Client("127.0.0.1", self.port, token=self.token)

    def request(self, method: str, path: str, body: Any = None, token: Optional[str] = "default",
                headers: Optional[Dict[str, str]] = None) -> Tuple[int, Dict[str, str], bytes]:
        """One HTTP request; the server's own token unless ``token`` says otherwise."""
        connection = http.client.HTTPConnection("127.0.0.1", self.http_port, timeout=10)
        sent = dict(headers or {})
        if token == "default":
            token = self.token
        if token is not None:
            sent["Authorization"] = "Bearer " + token
        data = None
        if body is not None:
            data = body if isinstance(body, bytes) else json.dumps(body).encode()
            sent.setdefault("Content-Type", "application/json")
        connection.request(method, path, body=data, headers=sent)
        response = connection.getresponse()
        payload = response.read()
        got = {name.lower(): value for name, value in response.getheaders()}
        connection.close()
        return response.status, got, payload

    def get_json(self, path: str, **kwargs: Any) -> Any:
        status, _, body = self.request("GET", path, **kwargs)
        if status != 200:
            raise AssertionError(f"GET {path}: {status} {body!r}")
        return json.loads(body)

    def post_json(self, path: str, body: Any, expect: int = 200) -> Any:
        status, _, payload = self.request("POST", path, body=body)
        if status != expect:
            raise AssertionError(f"POST {path}: {status} {payload!r}")
        return json.loads(payload)

    def raw(self, data: bytes) -> bytes:
        """Sends bytes as they are and returns everything until the server closes."""
        with socket.create_connection(("127.0.0.1", self.http_port), timeout=10) as s:
            s.sendall(data)
            chunks = []
            while True:
                try:
                    chunk = s.recv(65536)
                except ConnectionResetError:
                    break
                if not chunk:
                    break
                chunks.append(chunk)
            return b"".join(chunks)


def make_dead_letters(client: "tarde.Client", queue: str, ids) -> None:
    """Each id becomes a dead letter of `queue`: one delivery allowed, released once."""
    client.config(queue, max_deliveries=1)
    for tx_id in ids:
        client.enqueue(queue, tx_id, b"payload of " + tx_id.encode())
    for _ in ids:
        request = client.reserve(queue)
        assert request is not None
        client.release(request.tx_id, request.attempt, reason="connect-refused")


def wait_for_sample(server: HttpServer, predicate, timeout: float = 10.0):
    def found():
        samples = server.get_json("/api/v1/rates")["samples"]
        return next((s for s in samples if predicate(s)), None)
    return wait_until(found, timeout=timeout, interval=0.2, what="a per-second sample")
