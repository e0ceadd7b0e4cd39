#!/usr/bin/env python3
"""The `contrib` suite: contrib/prometheus and contrib/grafana against a live server.

- alerts.yml passes `promtool check rules`, and alerts_test.yml (a firing and
  a silent case for every alert) passes `promtool test rules`;
- a live /metrics page, after traffic that reaches every family (a client's
  reason with a double quote and a backslash among it), passes
  `promtool check metrics`;
- contrib/grafana/tarde.json is valid JSON and every metric its queries use
  is on that page (or is tarde_stuck_transactions, the reconciler's gauge).

Usage: contrib_test.py <source dir> <tarde binary>. promtool comes with
Debian's prometheus package (scripts/deps installs it); without it the
promtool checks are skipped and say so. Standard library only.
"""
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.request

SOURCE = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".")
TARDE = sys.argv[2] if len(sys.argv) > 2 else os.path.join(SOURCE, "build", "bin", "tarde")
PROMETHEUS = os.path.join(SOURCE, "contrib", "prometheus")
DASHBOARD = os.path.join(SOURCE, "contrib", "grafana", "tarde.json")
PROMTOOL = shutil.which("promtool")
NO_PROMTOOL = "promtool not found: install Debian's prometheus package (scripts/deps does)"
# Families a page must have once the traffic below ran.
FAMILIES = [
    "tarde_uptime_seconds", "tarde_connections", "tarde_connections_total", "tarde_commands_total",
    "tarde_build_info", "process_cpu_seconds_total", "process_resident_memory_bytes",
    "process_virtual_memory_bytes", "process_open_fds", "process_max_fds",
    "process_start_time_seconds", "tarde_commits_total", "tarde_commits_inline_total",
    "tarde_commits_failed_total", "tarde_commit_latency_seconds", "tarde_commands_per_commit",
    "tarde_answers_total", "tarde_retries_scheduled_total", "tarde_failures_total",
    "tarde_dead_lettered_total", "tarde_timer_lateness_seconds", "tarde_sweep_running",
    "tarde_sweep_scanned", "tarde_transactions", "tarde_ready", "tarde_leased",
    "tarde_dead_letters", "tarde_handed_out_total", "tarde_due_in_memory",
    "tarde_timers_fired_total", "tarde_counting", "tarde_stale_dropped_total",
    "tarde_breaker_state", "tarde_breaker_open", "tarde_oldest_ready_age_seconds",
]
# Metrics other branches add; the dashboard may use them before they land.
PLANNED = {"tarde_stuck_transactions"}
HOSTILE_REASON = 'a"b\\c'


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LineClient:
    """The protocol, one request and one reply line at a time."""

    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.buffer = b""

    def line(self):
        while b"\r\n" not in self.buffer:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("server closed the connection")
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\r\n", 1)
        return line.decode("latin-1")

    def command(self, text):
        self.sock.sendall(text.encode("latin-1") + b"\r\n")
        return self.line()

    def enqueue(self, args, payload=b"x"):
        self.sock.sendall(f"ENQUEUE {args} {len(payload)}\r\n".encode() + payload + b"\r\n")
        return self.line()

    def close(self):
        self.sock.close()


def scraped_families(page):
    """The family of every sample line: its name without a histogram suffix."""
    declared = set(re.findall(r"^# TYPE (\S+) ", page, re.M))
    families = set()
    for line in page.splitlines():
        if not line or line.startswith("#"):
            continue
        name = re.match(r"[a-zA-Z_:][a-zA-Z0-9_:]*", line).group(0)
        for suffix in ("_bucket", "_sum", "_count"):
            if name not in declared and name.endswith(suffix):
                name = name[: -len(suffix)]
        families.add(name)
    return families


class LiveServer:
    """tarde serve with --metrics-listen in a temporary data directory."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="tarde-contrib-")
        self.metrics_port = free_port()
        self.log_path = os.path.join(self.dir, "log")
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen(
                [TARDE, "serve", "--data", os.path.join(self.dir, "data"), "--listen",
                 "127.0.0.1:0", "--metrics-listen", f"127.0.0.1:{self.metrics_port}",
                 "--sync", "none"],
                stdout=log, stderr=log, stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while True:
            with open(self.log_path, encoding="utf-8", errors="replace") as log:
                found = re.search(r"tarde listening on 127\.0\.0\.1:(\d+)\"", log.read())
            if found:
                self.port = int(found.group(1))
                break
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("tarde serve did not start: " + open(self.log_path).read())
            time.sleep(0.02)

    def page(self):
        url = f"http://127.0.0.1:{self.metrics_port}/metrics"
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.read().decode("utf-8")

    def stop(self):
        self.proc.terminate()
        self.proc.wait(10)
        shutil.rmtree(self.dir, ignore_errors=True)


def drive_traffic(port):
    """Reaches every labeled family: answers, a failure with a hostile
    reason, a dead letter, a retry fired by its timer, a stale message."""
    c = LineClient(port)
    assert c.command("CONFIG q base=50ms jitter=0 max_deliveries=1").startswith("CONFIG")
    for tx in ("A", "B", "C"):
        assert c.enqueue(f"q {tx}").startswith("CREATED")
    assert c.command("RESERVE q").startswith("REQUEST A 1")
    c.line()  # the payload
    assert c.command("RESPOND A 1 CANCELLED").startswith("OK")
    assert c.command("SENT A 1").startswith("STALE")
    assert c.command("RESERVE q wait=2s").startswith("REQUEST B 1")
    c.line()
    assert c.command("RELEASE B 1").startswith("BURIED")
    assert c.command(f"RESPOND C 1 REJECTED reason={HOSTILE_REASON}").startswith("OK")
    assert c.command("RESERVE q wait=2s").startswith("REQUEST A 2")  # the retry, by its timer
    c.line()
    c.close()


class PromtoolRules(unittest.TestCase):
    def setUp(self):
        if PROMTOOL is None:
            self.skipTest(NO_PROMTOOL)

    def test_rules_pass_promtool_check_rules(self):
        run = subprocess.run([PROMTOOL, "check", "rules", "alerts.yml"], cwd=PROMETHEUS,
                             capture_output=True, text=True)
        self.assertEqual(run.returncode, 0, run.stdout + run.stderr)

    def test_rules_pass_their_unit_tests(self):
        run = subprocess.run([PROMTOOL, "test", "rules", "alerts_test.yml"], cwd=PROMETHEUS,
                             capture_output=True, text=True)
        self.assertEqual(run.returncode, 0, run.stdout + run.stderr)


class RulesShape(unittest.TestCase):
    def test_every_alert_has_a_runbook_and_a_firing_and_a_silent_test(self):
        with open(os.path.join(PROMETHEUS, "alerts.yml"), encoding="utf-8") as f:
            rules = f.read()
        with open(os.path.join(PROMETHEUS, "alerts_test.yml"), encoding="utf-8") as f:
            tests = f.read()
        alerts = re.findall(r"^\s*- alert: (\w+)$", rules, re.M)
        self.assertGreaterEqual(len(alerts), 9)
        self.assertEqual(len(re.findall(r"^\s+runbook: ", rules, re.M)), len(alerts))
        for alert in alerts:
            with self.subTest(alert=alert):
                cases = re.findall(rf"alertname: {alert}\n\s+exp_alerts:( \[\])?", tests)
                self.assertIn(" []", cases)  # a case where it stays silent
                self.assertIn("", cases)  # and one where it fires


class LivePage(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = LiveServer()
        drive_traffic(cls.server.port)
        cls.page = cls.server.page()

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()

    def test_page_passes_promtool_check_metrics(self):
        if PROMTOOL is None:
            self.skipTest(NO_PROMTOOL)
        run = subprocess.run([PROMTOOL, "check", "metrics"], input=self.page,
                             capture_output=True, text=True)
        self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
        self.assertEqual(run.stdout + run.stderr, "")  # not even a lint warning

    def test_page_has_every_family(self):
        families = scraped_families(self.page)
        for family in FAMILIES:
            with self.subTest(family=family):
                self.assertIn(family, families)

    def test_a_hostile_reason_is_one_escaped_label_value(self):
        self.assertIn('tarde_failures_total{queue="q",reason="a\\"b\\\\c"} 1\n', self.page)

    def test_dashboard_queries_only_metrics_the_page_has(self):
        with open(DASHBOARD, encoding="utf-8") as f:
            dashboard = json.load(f)
        exprs = []

        def collect(node):
            if isinstance(node, dict):
                for key, value in node.items():
                    if key in ("expr", "query", "definition") and isinstance(value, str):
                        exprs.append(value)
                    else:
                        collect(value)
            elif isinstance(node, list):
                for item in node:
                    collect(item)

        collect(dashboard)
        self.assertGreater(len(exprs), 20)
        declared = set(re.findall(r"^# TYPE (\S+) ", self.page, re.M))
        used = set()
        for expr in exprs:
            used.update(re.findall(r"\b((?:tarde|process)_[a-z_]+)\b", expr))
        self.assertIn("tarde_stuck_transactions", used)
        for name in sorted(used):
            family = name
            for suffix in ("_bucket", "_sum", "_count"):
                if family not in declared and family.endswith(suffix):
                    family = family[: -len(suffix)]
            with self.subTest(metric=name):
                self.assertTrue(family in declared or family in PLANNED, name)


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
