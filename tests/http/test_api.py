"""The HTTP side of tarde serve over real HTTP: auth, every endpoint of
net/HTTP_API.md, the status codes of bad requests, and hostile text."""

from __future__ import annotations

import base64
import json
import time
import unittest
from urllib.parse import quote

from http_support import HttpServer, make_dead_letters, wait_for_sample, wait_until

TOKEN = "s3cret-token"
SECURITY_HEADERS = {
    "content-security-policy": "default-src 'none'; script-src 'self'; style-src 'self'; "
    "img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; "
    "frame-ancestors 'none'",
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
}


class _AnyNow:
    """Equal to any positive integer: the server's now_ms."""

    def __eq__(self, other) -> bool:
        return isinstance(other, int) and other > 0


ANY_NOW = _AnyNow()


class ApiTest(unittest.TestCase):
    server: HttpServer

    @classmethod
    def setUpClass(cls) -> None:
        cls.server = HttpServer(token=TOKEN).start()
        cls.client = cls.server.client()

    @classmethod
    def tearDownClass(cls) -> None:
        cls.client.close()
        cls.server.stop()

    def assert_secure(self, headers) -> None:
        for name, value in SECURITY_HEADERS.items():
            self.assertEqual(headers.get(name), value, name)

    # ---- auth ---------------------------------------------------------
    def test_healthz_needs_no_token(self) -> None:
        status, headers, body = self.server.request("GET", "/healthz", token=None)
        self.assertEqual((status, body), (200, b"ok\n"))
        self.assert_secure(headers)

    def test_missing_or_wrong_token_is_401_with_www_authenticate(self) -> None:
        for path in ["/api/v1/queues", "/metrics", "/api/v1/stats", "/api/v1/tx/x"]:
            for token in [None, "wrong", TOKEN + "x", ""]:
                status, headers, body = self.server.request("GET", path, token=token)
                self.assertEqual(status, 401, (path, token))
                self.assertTrue(headers["www-authenticate"].startswith("Bearer"))
                self.assert_secure(headers)
                self.assertEqual(json.loads(body)["error"]["status"], 401)
        status, _, _ = self.server.request("POST", "/api/v1/tx/x/redrive", body={}, token=None)
        self.assertEqual(status, 401)
        status, _, _ = self.server.request("GET", "/api/v1/queues", token=None,
                                           headers={"Authorization": "Basic " + TOKEN})
        self.assertEqual(status, 401)

    def test_the_right_token_opens_the_api_and_metrics(self) -> None:
        self.assertIn("queues", self.server.get_json("/api/v1/queues"))
        status, headers, body = self.server.request("GET", "/metrics")
        self.assertEqual(status, 200)
        self.assertIn(b"tarde_handed_out_total", body)
        status, _, _ = self.server.request(
            "GET", "/api/v1/queues", token=None, headers={"Authorization": "bearer " + TOKEN})
        self.assertEqual(status, 200)

    def test_the_dashboard_files_are_open_and_run_no_inline_code(self) -> None:
        status, headers, body = self.server.request("GET", "/", token=None)
        self.assertEqual(status, 200)
        self.assertTrue(headers["content-type"].startswith("text/html"))
        self.assert_secure(headers)
        page = body.decode()
        self.assertIn('<script src="/assets/app.js" defer></script>', page)
        self.assertEqual(page.count("<script"), 1)
        self.assertNotIn("style=", page)
        self.assertNotIn("<style", page)
        status, headers, script = self.server.request("GET", "/assets/app.js", token=None)
        self.assertEqual(status, 200)
        self.assertTrue(headers["content-type"].startswith("text/javascript"))
        self.assertNotIn(b"innerHTML", script)
        self.assertNotIn(b"eval(", script)
        status, headers, _ = self.server.request("GET", "/assets/app.css", token=None)
        self.assertTrue(headers["content-type"].startswith("text/css"))
        status, _, _ = self.server.request("GET", "/assets/nothing.js", token=None)
        self.assertEqual(status, 404)

    # ---- status codes of bad requests ---------------------------------
    def test_unknown_path_is_404(self) -> None:
        for path in ["/nope", "/api/v1", "/api/v1/queues/a/b/c", "/api/v2/queues"]:
            status, headers, _ = self.server.request("GET", path)
            self.assertEqual(status, 404, path)
            self.assert_secure(headers)

    def test_wrong_method_is_405_with_allow(self) -> None:
        status, headers, _ = self.server.request("POST", "/api/v1/queues", body={})
        self.assertEqual(status, 405)
        self.assertEqual(headers["allow"], "GET, HEAD")
        status, headers, _ = self.server.request("GET", "/api/v1/queues/q/dead/redrive")
        self.assertEqual(status, 405)
        self.assertEqual(headers["allow"], "POST")
        status, _, _ = self.server.request("DELETE", "/api/v1/tx/abc")
        self.assertEqual(status, 405)
        status, _, _ = self.server.request("PUT", "/healthz", token=None)
        self.assertEqual(status, 405)

    def test_malformed_requests_are_400(self) -> None:
        for raw in [b"GET\r\n\r\n", b"GET /healthz\r\n\r\n", b"GET healthz HTTP/1.1\r\n\r\n",
                    b"GET /healthz HTTP/2.0\r\n\r\n", b"GET /healthz HTTP/1.1\r\nNoColon\r\n\r\n",
                    b"GET /healthz HTTP/1.1\r\n folded: x\r\n\r\n",
                    b"GET /healthz HTTP/1.1\nHost: x\r\n\r\n",
                    b"GET /healthz HTTP/1.1\r\nContent-Length: -1\r\n\r\n",
                    b"GET /healthz HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab",
                    b"GET /x?a=%zz HTTP/1.1\r\n\r\n"]:
            response = self.server.raw(raw)
            self.assertTrue(response.startswith(b"HTTP/1.1 400 "), (raw, response[:80]))
            self.assertIn(b"Content-Security-Policy:", response)
        status, _, _ = self.server.request("GET", "/api/v1/tx/%zz")
        self.assertEqual(status, 400)

    def test_limits_give_413_431_and_chunked_501(self) -> None:
        big = b"POST /api/v1/tx/a/redrive HTTP/1.1\r\nContent-Length: 2000000\r\n\r\n"
        self.assertTrue(self.server.raw(big).startswith(b"HTTP/1.1 413 "))
        head = b"GET /healthz HTTP/1.1\r\nX-Long: " + b"a" * 20000 + b"\r\n\r\n"
        self.assertTrue(self.server.raw(head).startswith(b"HTTP/1.1 431 "))
        many = b"GET /healthz HTTP/1.1\r\n" + b"X-A: b\r\n" * 70 + b"\r\n"
        self.assertTrue(self.server.raw(many).startswith(b"HTTP/1.1 431 "))
        chunked = b"POST /api/v1/tx/a/redrive HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"
        self.assertTrue(self.server.raw(chunked).startswith(b"HTTP/1.1 501 "))

    def test_bad_parameters_and_bodies_are_400(self) -> None:
        for path in ["/api/v1/queues/" + "q" * 65, "/api/v1/queues/q/dead?limit=0",
                     "/api/v1/queues/q/dead?limit=1001", "/api/v1/queues/q/list?state=bogus",
                     "/api/v1/queues/q/dead?payload=rot13",
                     "/api/v1/tx/a?payload=rot13", "/api/v1/rates?after=-1",
                     "/api/v1/queues/bad%20name"]:
            status, _, _ = self.server.request("GET", path)
            self.assertEqual(status, 400, path)
        for body in [b"{", b"[1]", b'"x"']:
            status, _, _ = self.server.request("POST", "/api/v1/queues/q/dead/redrive", body=body)
            self.assertEqual(status, 400, body)
        status, _, _ = self.server.request("POST", "/api/v1/queues/q/dead/redrive", body=b"{}",
                                           headers={"Content-Type": "text/plain"})
        self.assertEqual(status, 400)
        for body in [{}, {"ids": "a"}, {"ids": [1]}, {"ids": ["a b"]}, {"filter": {}},
                     {"filter": {}, "limit": 0}, {"filter": {}, "limit": 1001},
                     {"ids": ["a"], "filter": {}, "limit": 1}, {"ids": ["a"] * 1001}]:
            status, _, _ = self.server.request("POST", "/api/v1/queues/q/dead/redrive", body=body)
            self.assertEqual(status, 400, body)
        for body in [{"ids": ["a"]}, {"ids": ["a"], "state": "SENDING"},
                     {"ids": ["a"], "state": "FAILED", "reason": "has space"}]:
            status, _, _ = self.server.request("POST", "/api/v1/queues/q/dead/resolve", body=body)
            self.assertEqual(status, 400, body)

    def test_head_gets_the_headers_only(self) -> None:
        response = self.server.raw(b"HEAD /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        self.assertTrue(response.startswith(b"HTTP/1.1 200 "))
        self.assertIn(b"Content-Length: 3\r\n", response)
        self.assertTrue(response.endswith(b"\r\n\r\n"))

    # ---- reads --------------------------------------------------------
    def test_queue_summaries_count_each_state(self) -> None:
        c = self.client
        for i in range(3):
            c.enqueue("summ", f"summ-{i}", b"x")
        leased = c.reserve("summ")
        c.sent(leased.tx_id, leased.attempt)  # IN_FLIGHT
        held = c.reserve("summ")  # leased
        queues = {q["name"]: q for q in self.server.get_json("/api/v1/queues")["queues"]}
        q = queues["summ"]
        self.assertEqual((q["ready"], q["leased"], q["in_flight"], q["scheduled"], q["dead"]),
                         (1, 1, 1, 0, 0))
        self.assertEqual(q["handed_out"], 2)
        self.assertEqual(q["breaker"], "closed")
        self.assertFalse(q["paused"])
        deadline = time.monotonic() + 30
        while c.stats()["counting"] != 0 and time.monotonic() < deadline:
            time.sleep(0.01)
        self.assertFalse(self.server.get_json("/api/v1/queues/summ")["counting"])
        self.assertGreaterEqual(q["oldest_ready_age_ms"], 0)
        c.respond(leased.tx_id, leased.attempt, "CANCELLED", reason="busy")
        one = self.server.get_json("/api/v1/queues/summ")
        self.assertEqual((one["in_flight"], one["scheduled"]), (0, 1))
        self.assertEqual(one["config"]["settings"]["max_attempts"], "4")
        config = self.server.get_json("/api/v1/queues/summ/config")
        self.assertEqual(config["queue"], "summ")
        self.assertEqual(config["settings"]["lease"], "30s")
        leases = self.server.get_json("/api/v1/queues/summ/leases")["items"]
        self.assertEqual([l["tx_id"] for l in leases], [held.tx_id])
        self.assertGreater(leases[0]["expires_at_ms"], leases[0]["leased_at_ms"])
        listed = self.server.get_json("/api/v1/queues/summ/list?state=leased")["items"]
        self.assertEqual([l["tx_id"] for l in listed], [held.tx_id])
        everywhere = self.server.get_json("/api/v1/leases")["items"]
        self.assertIn(held.tx_id, [l["tx_id"] for l in everywhere])

    def test_stats_are_the_stats_command(self) -> None:
        stats = self.server.get_json("/api/v1/stats")["stats"]
        protocol = self.client.stats()
        for name in ["transactions", "sending", "ready", "leased", "dead_letters", "failed"]:
            self.assertEqual(stats[name], protocol[name], name)

    def test_a_transaction_with_its_payload_history_and_plan(self) -> None:
        c = self.client
        payload = b"\x00\xffhello"
        c.enqueue("txq", "tx-read", payload, max_attempts=3, base="1s", factor=2, jitter=0.5)
        got = self.server.get_json("/api/v1/tx/tx-read")
        self.assertEqual((got["state"], got["queue"], got["payload_bytes"]), ("SENDING", "txq", 7))
        self.assertNotIn("payload", got)
        self.assertIsNone(got["lease"])
        hexed = self.server.get_json("/api/v1/tx/tx-read?payload=hex")["payload"]
        self.assertEqual(hexed, {"encoding": "hex", "data": payload.hex()})
        b64 = self.server.get_json("/api/v1/tx/tx-read?payload=base64")["payload"]
        self.assertEqual(base64.b64decode(b64["data"]), payload)
        text = self.server.get_json("/api/v1/tx/tx-read?payload=text")["payload"]["data"]
        self.assertEqual(text, "\x00\ufffd\ufffdhello"[:1] + "\ufffdhello")
        # attempt 1 is being sent: after a CANCELLED, attempt 2 waits 1 s and attempt 3 2 s,
        # each within the jitter of +-50 %
        plan = got["plan"]
        self.assertEqual([p["attempt"] for p in plan], [2, 3])
        self.assertEqual([p["wait_ms"] for p in plan], [1000, 2000])
        self.assertEqual([p["wait_ms_min"] for p in plan], [500, 1000])
        self.assertEqual([p["wait_ms_max"] for p in plan], [1500, 3000])
        history = self.server.get_json("/api/v1/tx/tx-read/history")
        self.assertEqual([e["cause"] for e in history["events"]], ["ENQUEUE"])
        self.assertEqual(history["events"][0]["to"], "SENDING")
        status, _, _ = self.server.request("GET", "/api/v1/tx/no-such-tx")
        self.assertEqual(status, 404)
        status, _, _ = self.server.request("GET", "/api/v1/tx/no-such-tx/history")
        self.assertEqual(status, 404)
        request = c.reserve("txq")
        c.sent(request.tx_id, request.attempt)
        c.respond(request.tx_id, request.attempt, "SUCCESS")
        self.assertEqual(self.server.get_json("/api/v1/tx/tx-read")["plan"], [])

    def test_per_second_samples_count_hand_outs_answers_and_fired_retries(self) -> None:
        c = self.client
        c.enqueue("rates", "rate-1", b"x", base="1ms", jitter=0)
        request = c.reserve("rates")
        c.sent(request.tx_id, 1)
        c.respond(request.tx_id, 1, "CANCELLED")
        wait_until(lambda: c.get("rate-1").state == "SENDING", what="the retry to fire")
        sample = wait_for_sample(self.server, lambda s: s["answers"]["CANCELLED"] >= 1)
        self.assertGreaterEqual(sample["handed_out"] + 0, 0)
        wait_for_sample(self.server, lambda s: s["retries_fired"] >= 1)
        wait_for_sample(self.server, lambda s: s["handed_out"] >= 1)
        rates = self.server.get_json("/api/v1/rates")
        self.assertEqual((rates["interval_ms"], rates["capacity"]), (1000, 900))
        last = rates["samples"][-1]["at_ms"]
        self.assertEqual(self.server.get_json(f"/api/v1/rates?after={last}")["samples"], [])

    # ---- actions ------------------------------------------------------
    def test_dead_letters_page_by_cursor_and_filter(self) -> None:
        ids = [f"page-{i:02d}" for i in range(7)] + ["other-1"]
        make_dead_letters(self.client, "deadpage", ids)
        first = self.server.get_json("/api/v1/queues/deadpage/dead?limit=3")
        self.assertEqual([l["tx_id"] for l in first["items"]], ["other-1", "page-00", "page-01"])
        self.assertIsNotNone(first["next"])  # an opaque cursor
        second = self.server.get_json(
            "/api/v1/queues/deadpage/dead?limit=3&after=" + quote(first["next"]))
        self.assertEqual([l["tx_id"] for l in second["items"]], ["page-02", "page-03", "page-04"])
        last = self.server.get_json(
            "/api/v1/queues/deadpage/dead?limit=3&after=" + quote(second["next"]))
        self.assertEqual([l["tx_id"] for l in last["items"]], ["page-05", "page-06"])
        self.assertIsNone(last["next"])
        letter = first["items"][1]
        self.assertEqual((letter["failed_deliveries"], letter["last_error"]), (1, "connect-refused"))
        self.assertEqual(letter["buried_at_ms"], letter["failures"][-1]["at_ms"])
        self.assertNotIn("payload", letter)
        prefixed = self.server.get_json("/api/v1/queues/deadpage/dead?prefix=other")
        self.assertEqual([l["tx_id"] for l in prefixed["items"]], ["other-1"])
        # reason= is the whole last error, as LIST's and REDRIVE_ALL's
        self.assertEqual(len(self.server.get_json(
            "/api/v1/queues/deadpage/dead?reason=connect-refused")["items"]), 8)
        self.assertEqual(self.server.get_json(
            "/api/v1/queues/deadpage/dead?reason=refused")["items"], [])
        with_payload = self.server.get_json("/api/v1/queues/deadpage/dead?prefix=other&payload=text")
        self.assertEqual(with_payload["items"][0]["payload"],
                         {"encoding": "text", "data": "payload of other-1"})
        listed = self.server.get_json("/api/v1/queues/deadpage/list?state=dead&prefix=other")
        self.assertEqual([(l["tx_id"], l["state"], l["reason"]) for l in listed["items"]],
                         [("other-1", "SENDING", "connect-refused")])

    def test_list_pages_every_state_by_cursor(self) -> None:
        c = self.client
        c.config("states", max_deliveries=1, response_timeout="1h")
        for name in ["st-flight", "st-leased", "st-sched", "st-ok", "st-failed", "st-dead"]:
            c.enqueue("states", name, b"x", base="1h", jitter=0)
        for i in range(4):
            c.enqueue("states", f"st-ready-{i}", b"r")
        def take(name):  # requests are handed out in the order they were enqueued
            request = c.reserve("states")
            self.assertEqual(request.tx_id, name)
            return request
        request = take("st-flight")
        c.sent(request.tx_id, request.attempt)
        take("st-leased")
        request = take("st-sched")
        c.sent(request.tx_id, request.attempt)
        c.respond(request.tx_id, request.attempt, "CANCELLED")
        request = take("st-ok")
        c.sent(request.tx_id, request.attempt)
        c.respond(request.tx_id, request.attempt, "SUCCESS")
        request = take("st-failed")
        c.sent(request.tx_id, request.attempt)
        c.respond(request.tx_id, request.attempt, "REJECTED", reason="bad-card")
        request = take("st-dead")
        c.release(request.tx_id, request.attempt, reason="boom")
        def listed(state, query=""):
            page = self.server.get_json(f"/api/v1/queues/states/list?state={state}{query}")
            self.assertEqual(page["state"], state)
            return [item["tx_id"] for item in page["items"]]
        self.assertEqual(sorted(listed("ready")), [f"st-ready-{i}" for i in range(4)])
        self.assertEqual(listed("leased"), ["st-leased"])
        self.assertEqual(listed("in_flight"), ["st-flight"])
        self.assertEqual(listed("scheduled"), ["st-sched"])
        self.assertEqual(listed("succeeded"), ["st-ok"])
        self.assertEqual(listed("failed"), ["st-failed"])
        self.assertEqual(listed("dead"), ["st-dead"])
        self.assertEqual(listed("failed", "&reason=bad-card"), ["st-failed"])
        self.assertEqual(listed("failed", "&reason=other"), [])
        flying = self.server.get_json("/api/v1/queues/states/list?state=in_flight&payload=hex")
        item = flying["items"][0]
        self.assertEqual(item["due"]["kind"], "response_timeout")
        self.assertEqual(item["due"]["at_ms"] - item["updated_at_ms"], 3600 * 1000)
        self.assertEqual(item["payload"], {"encoding": "hex", "data": "78"})
        # pages of 3 by cursor cover the ready requests once each
        seen, after, pages = [], "", 0
        while True:
            page = self.server.get_json("/api/v1/queues/states/list?state=ready&limit=3"
                                        + (f"&after={quote(after)}" if after else ""))
            seen += [item["tx_id"] for item in page["items"]]
            pages += 1
            if page["next"] is None:
                break
            after = page["next"]
        self.assertEqual(sorted(seen), [f"st-ready-{i}" for i in range(4)])
        self.assertEqual(pages, 2)
        self.assertEqual(listed("ready", "&prefix=st-ready-3"), ["st-ready-3"])
        # a queue nobody used is empty, not an error
        self.assertEqual(self.server.get_json("/api/v1/queues/never-used/list?state=ready"),
                         {"now_ms": ANY_NOW, "state": "ready", "items": [], "next": None})

    def test_list_errors(self) -> None:
        for query in ["", "state=", "state=READY", "state=dead2", "state=in-flight",
                      "state=ready&limit=0", "state=ready&limit=1001", "state=ready&limit=x",
                      "state=ready&after=" + quote("\x01"), "state=dead&after=nonsense",
                      "state=ready&reason=" + quote("has space"), "state=ready&payload=rot13",
                      "state=ready&prefix=" + quote("a b")]:
            status, _, body = self.server.request("GET", "/api/v1/queues/lq/list?" + query)
            self.assertEqual(status, 400, (query, body))
            self.assertIn("message", json.loads(body)["error"])
        status, _, _ = self.server.request("GET", "/api/v1/queues/bad%20queue/list?state=ready")
        self.assertEqual(status, 400)
        status, _, _ = self.server.request("GET", "/api/v1/queues/lq/dead?after=nonsense")
        self.assertEqual(status, 400)

    def test_pause_and_resume_stop_and_restart_hand_outs(self) -> None:
        c = self.client
        c.enqueue("pausable", "pz-1", b"x")
        done = self.server.post_json("/api/v1/queues/pausable/pause", {})
        self.assertEqual(done, {"queue": "pausable", "paused": True})
        self.assertTrue(self.server.get_json("/api/v1/queues/pausable")["paused"])
        queues = {q["name"]: q for q in self.server.get_json("/api/v1/queues")["queues"]}
        self.assertTrue(queues["pausable"]["paused"])
        self.assertIsNone(c.reserve("pausable"))
        self.assertEqual(c.stats()["paused.pausable"], 1)
        self.assertEqual(c.config("pausable")["paused"], "1")
        # pausing twice is fine
        self.assertTrue(self.server.post_json("/api/v1/queues/pausable/pause", None)["paused"])
        done = self.server.post_json("/api/v1/queues/pausable/resume", {})
        self.assertEqual(done, {"queue": "pausable", "paused": False})
        self.assertFalse(self.server.get_json("/api/v1/queues/pausable")["paused"])
        self.assertEqual(c.reserve("pausable").tx_id, "pz-1")
        for path in ["/api/v1/queues/bad%20name/pause", "/api/v1/queues/" + "q" * 65 + "/resume"]:
            status, _, _ = self.server.request("POST", path, body={})
            self.assertEqual(status, 400, path)
        status, _, _ = self.server.request("POST", "/api/v1/queues/pausable/pause", body=b"[1]")
        self.assertEqual(status, 400)

    def test_new_endpoints_refuse_without_the_token_and_with_a_wrong_method(self) -> None:
        reads = ["/api/v1/queues/q/list?state=ready", "/api/v1/queues/q/dead",
                 "/api/v1/queues/q/list?state=in_flight"]
        actions = ["/api/v1/queues/q/pause", "/api/v1/queues/q/resume",
                   "/api/v1/queues/q/dead/redrive", "/api/v1/queues/q/dead/resolve"]
        for token in [None, "wrong"]:
            for path in reads:
                status, headers, _ = self.server.request("GET", path, token=token)
                self.assertEqual(status, 401, (path, token))
                self.assertIn("www-authenticate", headers)
            for path in actions:
                status, _, _ = self.server.request("POST", path, body={}, token=token)
                self.assertEqual(status, 401, (path, token))
        self.assertFalse(self.client.config("q").get("paused", "0") == "1")
        for path in actions:
            status, headers, _ = self.server.request("GET", path)
            self.assertEqual((status, headers.get("allow")), (405, "POST"), path)
        for path in reads:
            status, headers, _ = self.server.request("POST", path, body={})
            self.assertEqual(status, 405, path)
            self.assertIn("GET", headers.get("allow"))

    def test_redrive_and_resolve_a_selection_or_a_filter(self) -> None:
        c = self.client
        make_dead_letters(c, "act", ["act-1", "act-2", "act-3", "keep-1", "keep-2"])
        done = self.server.post_json("/api/v1/queues/act/dead/redrive", {"ids": ["act-1", "nope"]})
        self.assertEqual((done["selected"], done["changed"]), (2, 1))
        self.assertEqual([r["outcome"] for r in done["results"]], ["OK", "NOT_FOUND"])
        self.assertEqual(c.get("act-1").state, "SENDING")
        self.assertNotIn("act-1", [l.tx_id for l in c.deadletters("act")])
        done = self.server.post_json("/api/v1/queues/act/dead/resolve",
                                     {"filter": {"prefix": "act-"}, "limit": 1,
                                      "state": "FAILED", "reason": "given-up"})
        self.assertEqual((done["selected"], done["changed"]), (1, 1))
        self.assertEqual(c.get("act-2").state, "FAILED")
        self.assertEqual(c.get("act-2").reason, "given-up")
        self.assertEqual(c.get("act-3").state, "SENDING")  # the limit held
        done = self.server.post_json("/api/v1/queues/act/dead/redrive",
                                     {"filter": {"prefix": "keep-"}, "limit": 1000})
        self.assertEqual(done["changed"], 2)
        self.assertEqual([l.tx_id for l in c.deadletters("act")], ["act-3"])
        # resolve leaves alone what is not a dead letter of this queue
        done = self.server.post_json("/api/v1/queues/other/dead/resolve",
                                     {"ids": ["act-3"], "state": "FAILED"})
        self.assertEqual(done["changed"], 0)

    def test_redrive_and_resolve_one_transaction(self) -> None:
        c = self.client
        make_dead_letters(c, "one", ["one-1", "one-2"])
        done = self.server.post_json("/api/v1/tx/one-1/redrive", {})
        self.assertEqual((done["outcome"], done["state"]), ("OK", "SENDING"))
        status, _, body = self.server.request("POST", "/api/v1/tx/one-1/redrive", body={})
        self.assertEqual(status, 404, body)  # not a dead letter any more
        self.assertEqual(json.loads(body)["outcome"], "NOT_FOUND")
        status, _, _ = self.server.request("POST", "/api/v1/tx/none-such/redrive", body={})
        self.assertEqual(status, 404)
        done = self.server.post_json("/api/v1/tx/one-2/resolve",
                                     {"state": "FAILED", "reason": "by-hand"})
        self.assertEqual((done["outcome"], done["state"]), ("OK", "FAILED"))
        self.assertEqual(c.get("one-2").reason, "by-hand")
        # RESOLVE of a transaction that is already terminal is STALE
        status, _, body = self.server.request("POST", "/api/v1/tx/one-2/resolve",
                                              body={"state": "SUCCEEDED"})
        self.assertEqual((status, json.loads(body)["outcome"]), (409, "STALE"))
        status, _, _ = self.server.request("POST", "/api/v1/tx/one-1/resolve", body={"state": "X"})
        self.assertEqual(status, 400)

    def test_bulk_by_filter_is_the_engines_and_checks_its_filter(self) -> None:
        c = self.client
        make_dead_letters(c, "bulkf", ["bf-1", "bf-2", "bf-3"])
        c.config("bulkf", max_deliveries=1)
        c.enqueue("bulkf", "bf-other", b"x")
        request = c.reserve("bulkf")
        c.release(request.tx_id, request.attempt, reason="timeout")
        # the whole last error, not a part of it
        done = self.server.post_json("/api/v1/queues/bulkf/dead/redrive",
                                     {"filter": {"reason": "refused"}, "limit": 10})
        self.assertEqual(done, {"selected": 0, "changed": 0})
        done = self.server.post_json("/api/v1/queues/bulkf/dead/redrive",
                                     {"filter": {"reason": "timeout"}, "limit": 10})
        self.assertEqual(done, {"selected": 1, "changed": 1})
        self.assertEqual(c.get("bf-other").state, "SENDING")
        history = self.server.get_json("/api/v1/tx/bf-other/history")["events"]
        self.assertEqual(history[-1]["cause"], "REDRIVE_ALL")
        done = self.server.post_json("/api/v1/queues/bulkf/dead/resolve",
                                     {"filter": {"prefix": "bf-", "reason": "connect-refused"},
                                      "limit": 2, "state": "SUCCEEDED"})
        self.assertEqual(done["changed"], 2)
        self.assertEqual(self.server.get_json("/api/v1/tx/bf-1/history")["events"][-1]["cause"],
                         "RESOLVE_ALL")
        self.assertEqual([l.tx_id for l in c.deadletters("bulkf")], ["bf-3"])
        for body in [{"filter": {"prefix": "a b"}, "limit": 1},
                     {"filter": {"prefix": 3}, "limit": 1},
                     {"filter": {"reason": "has space"}, "limit": 1},
                     {"filter": [], "limit": 1},
                     {"filter": {}, "limit": -1},
                     {"filter": {}, "limit": "1"}]:
            status, _, _ = self.server.request("POST", "/api/v1/queues/bulkf/dead/redrive", body=body)
            self.assertEqual(status, 400, body)
        self.assertEqual([l.tx_id for l in c.deadletters("bulkf")], ["bf-3"])

    def test_history_shows_sequence_numbers_and_timer_lateness(self) -> None:
        c = self.client
        c.enqueue("hist", "h-1", b"x", base="1ms", jitter=0)
        request = c.reserve("hist")
        c.sent(request.tx_id, request.attempt)
        c.respond(request.tx_id, request.attempt, "CANCELLED")
        wait_until(lambda: c.get("h-1").state == "SENDING", what="the retry to fire")
        events = self.server.get_json("/api/v1/tx/h-1/history")["events"]
        self.assertEqual([e["seq"] for e in events], list(range(len(events))))
        self.assertEqual({e["dropped"] for e in events}, {0})
        fire = events[-1]
        self.assertEqual(fire["cause"], "timer")
        self.assertIsNotNone(fire["due_at_ms"])
        self.assertGreaterEqual(fire["late_ms"], 0)
        self.assertIsNone(events[0]["due_at_ms"])
        self.assertIsNone(events[0]["late_ms"])

    # ---- hostile text -------------------------------------------------
    def test_hostile_text_round_trips_as_json_strings(self) -> None:
        c = self.client
        tx_id = "<img/src=x/onerror=alert(1)>\"'&%"
        reason = "</script><script>alert('r')</script>"
        payload = b"<b>\xff\xfe\"\\\n\x01</b>"
        c.config("hostile", max_deliveries=1)
        c.enqueue("hostile", tx_id, payload)
        request = c.reserve("hostile")
        c.release(request.tx_id, request.attempt, reason=reason)
        quoted = "/api/v1/tx/" + "".join(
            ch if ch.isalnum() else "%{:02X}".format(ord(ch)) for ch in tx_id)
        status, headers, body = self.server.request("GET", quoted + "?payload=text")
        self.assertEqual(status, 200)
        self.assertEqual(headers["content-type"], "application/json")
        got = json.loads(body.decode("utf-8"))  # valid UTF-8, valid JSON
        self.assertEqual(got["tx_id"], tx_id)
        self.assertEqual(got["failures"][0]["reason"], reason)
        self.assertEqual(got["payload"]["data"], '<b>\ufffd\ufffd"\\\n\x01</b>')
        letters = self.server.get_json("/api/v1/queues/hostile/dead")["items"]
        self.assertEqual(letters[0]["tx_id"], tx_id)
        self.assertEqual(letters[0]["last_error"], reason)
        done = self.server.post_json("/api/v1/queues/hostile/dead/redrive", {"ids": [tx_id]})
        self.assertEqual(done["results"][0]["tx_id"], tx_id)
        self.assertEqual(c.get(tx_id).state, "SENDING")


class ListenerTest(unittest.TestCase):
    def test_off_means_no_listener_and_no_token_means_open(self) -> None:
        server = HttpServer().start()
        try:
            self.assertEqual(server.request("GET", "/api/v1/queues", token=None)[0], 200)
        finally:
            server.stop()
        off = HttpServer("--http-listen", "off").start()
        try:
            with self.assertRaises(OSError):
                off.request("GET", "/healthz")
        finally:
            off.stop()

    def test_an_explicit_address_in_use_refuses_to_start(self) -> None:
        first = HttpServer().start()
        try:
            second = HttpServer("--http-listen", f"127.0.0.1:{first.http_port}")
            with self.assertRaises(RuntimeError) as refused:
                second.start()
            self.assertIn("exited with 3", str(refused.exception))
            self.assertIn("cannot listen for HTTP", second.log())
        finally:
            first.stop()


if __name__ == "__main__":
    unittest.main()
