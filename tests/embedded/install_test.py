#!/usr/bin/env python3
"""Installs tarde into a temporary prefix, builds examples/embedded out of
tree against it (find_package(tarde) + tarde::tarde), runs it, then checks
its data directory with tarde-dump and serves it with `tarde serve`: the
embedded engine and the server share one format. A small program built
against tarde::client reads a transaction from that server too.

usage: install_test.py SOURCE_DIR BUILD_DIR
"""
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time


def run(args, **kwargs):
    print("+", " ".join(args), flush=True)
    result = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            **kwargs)
    if result.returncode != 0:
        print(result.stdout)
        raise SystemExit(f"failed ({result.returncode}): {' '.join(args)}")
    return result.stdout


def request(port, line):
    with socket.create_connection(("127.0.0.1", port), timeout=5) as conn:
        conn.sendall(line.encode() + b"\r\n")
        data = b""
        while not data.endswith(b"\r\n"):
            chunk = conn.recv(4096)
            if not chunk:
                break
            data += chunk
        return data.decode()


CLIENT_CMAKE = """cmake_minimum_required(VERSION 3.25)
project(tarde_client_check LANGUAGES CXX)
set(CMAKE_CXX_STANDARD 20)
find_package(tarde CONFIG REQUIRED)
add_executable(client_check main.cc)
target_link_libraries(client_check PRIVATE tarde::client)
"""

CLIENT_MAIN = """#include <tarde/clients/cpp/client.h>

#include <cstdio>
#include <string>

int main(int argc, char** argv) {
  auto client = tarde::client::Client::connect("127.0.0.1", std::stoi(argv[1]));
  if (!client.is_ok()) return 1;
  if (!client.value()->ping().is_ok()) return 2;
  auto tx = client.value()->get("TX-2");
  if (!tx.is_ok()) return 3;
  std::printf("client: TX-2 %s attempt %u\\n", tx.value().state.c_str(), tx.value().attempt);
  return tx.value().state == "SUCCEEDED" ? 0 : 4;
}
"""


def build_client_check(work, prefix):
    source = os.path.join(work, "client-src")
    os.makedirs(source)
    with open(os.path.join(source, "CMakeLists.txt"), "w", encoding="utf-8") as out:
        out.write(CLIENT_CMAKE)
    with open(os.path.join(source, "main.cc"), "w", encoding="utf-8") as out:
        out.write(CLIENT_MAIN)
    binary = os.path.join(work, "client-build")
    run(["cmake", "-S", source, "-B", binary, "-DCMAKE_PREFIX_PATH=" + prefix])
    run(["cmake", "--build", binary, "-j2"])
    return os.path.join(binary, "client_check")


def serve_and_read(build, data, client_check):
    server = subprocess.Popen([os.path.join(build, "bin", "tarde"), "serve", "--listen",
                               "127.0.0.1:0", "--data", data],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        port = None
        deadline = time.time() + 15
        lines = []
        while port is None and time.time() < deadline:
            line = server.stdout.readline()
            if not line:
                break
            lines.append(line)
            found = re.search(r"tarde listening on 127\.0\.0\.1:(\d+)", line)
            if found:
                port = int(found.group(1))
        if port is None:
            raise SystemExit("tarde serve did not start:\n" + "".join(lines))
        pong = request(port, "PING")
        if pong != "PONG\r\n":
            raise SystemExit(f"PING answered {pong!r}")
        tx = request(port, "GET TX-1")
        print("tarde serve:", tx.strip())
        if not tx.startswith("TX id=TX-1 ") or "state=SUCCEEDED" not in tx:
            raise SystemExit(f"GET TX-1 answered {tx!r}")
        print(run([client_check, str(port)]))
    finally:
        server.terminate()
        server.wait(timeout=10)
    if server.returncode != 0:
        raise SystemExit(f"tarde serve exited {server.returncode} after SIGTERM")


def main(source, build):
    work = tempfile.mkdtemp(prefix="tarde-install-")
    try:
        prefix = os.path.join(work, "prefix")
        run(["cmake", "--install", build, "--prefix", prefix])
        # The public headers name neither RocksDB nor Asio.
        for name in ("embedded.h", "types.h", "clients/cpp/client.h", "clients/cpp/replies.h"):
            with open(os.path.join(prefix, "include", "tarde", name), encoding="utf-8") as header:
                text = header.read()
            for banned in ("#include <asio", "#include <rocksdb", "#include <spdlog"):
                if banned in text:
                    raise SystemExit(f"installed tarde/{name} has {banned}")
        example = os.path.join(work, "example")
        run(["cmake", "-S", os.path.join(source, "examples", "embedded"), "-B", example,
             "-DCMAKE_PREFIX_PATH=" + prefix, "-DCMAKE_BUILD_TYPE=Release"])
        run(["cmake", "--build", example, "-j2"])
        data = os.path.join(work, "data")
        out = run([os.path.join(example, "tarde-embedded-example"), data], timeout=60)
        print(out)
        if "all 3 transactions succeeded" not in out:
            raise SystemExit("the example did not finish")
        print(run([os.path.join(build, "bin", "tarde-dump"), data, "check"]))
        client_check = build_client_check(work, prefix)
        serve_and_read(build, data, client_check)
        print("install test: ok")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
