"""The dashboard in a real browser: headless chromium driven by Selenium
against a real tarde serve with traffic. Saves the screenshots of
docs/screenshots/ that README.md shows.

Needs Debian's chromium, chromium-driver and python3-selenium (scripts/deps);
skipped when they are missing. Standard library + selenium only.
"""

from __future__ import annotations

import os
import shutil
import time
import unittest
from pathlib import Path

from http_support import REPO_ROOT, HttpServer, make_dead_letters, wait_until

try:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions
    from selenium.webdriver.support.ui import Select, WebDriverWait
except ImportError:  # pragma: no cover - reported as a skip
    webdriver = None

TOKEN = "browser-token"
SHOTS = REPO_ROOT / "docs" / "screenshots"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
DRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
HOSTILE_ID = "<img/src=x/onerror=document.title='pwned'>"


@unittest.skipIf(webdriver is None or not os.path.exists(DRIVER),
                 "needs chromium, chromium-driver and python3-selenium (scripts/deps)")
class DashboardTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.server = HttpServer(token=TOKEN).start()
        cls.client = cls.server.client()
        cls.make_traffic()
        options = webdriver.ChromeOptions()
        for argument in ["--headless=new", "--no-sandbox", "--disable-gpu",
                         "--disable-dev-shm-usage", "--window-size=1280,1000"]:
            options.add_argument(argument)
        options.binary_location = CHROMIUM
        cls.browser = webdriver.Chrome(service=Service(DRIVER), options=options)
        cls.browser.set_page_load_timeout(20)
        cls.wait = WebDriverWait(cls.browser, 10)
        cls.log_in()

    @classmethod
    def tearDownClass(cls) -> None:
        cls.browser.quit()
        cls.client.close()
        cls.server.stop()

    @classmethod
    def make_traffic(cls) -> None:
        """A few queues in every state, answers of each kind and a fired retry."""
        c = cls.client
        for i in range(6):
            c.enqueue("billing", f"inv-{i:03d}", f'{{"invoice": {i}}}', base="1ms", jitter=0)
        for answer in ["SUCCESS", "CANCELLED", "TRANSIENT"]:
            request = c.reserve("billing")
            c.sent(request.tx_id, request.attempt)
            c.respond(request.tx_id, request.attempt, answer, reason="http-503")
        in_flight = c.reserve("billing")
        c.sent(in_flight.tx_id, in_flight.attempt)
        c.reserve("billing")  # stays leased
        make_dead_letters(c, "email", ["mail-001", "mail-002", "mail-003", HOSTILE_ID])
        for i in range(3):
            c.enqueue("email", f"mail-ready-{i}", "hello")
        time.sleep(2.2)  # two per-second samples for the charts

    @classmethod
    def log_in(cls) -> None:
        b = cls.browser
        b.get(f"http://127.0.0.1:{cls.server.http_port}/")
        form = cls.wait.until(expected_conditions.visibility_of_element_located((By.ID, "token-form")))
        b.find_element(By.ID, "token").send_keys(TOKEN)
        form.find_element(By.ID, "token-save").click()
        cls.wait.until(expected_conditions.presence_of_element_located((By.ID, "stats")))
        Select(b.find_element(By.ID, "poll")).select_by_value("0")  # numbers hold still

    def go(self, hash_: str, ready_id: str) -> None:
        self.browser.get(f"http://127.0.0.1:{self.server.http_port}/{hash_}")
        self.wait.until(expected_conditions.presence_of_element_located((By.ID, ready_id)))

    def shot(self, name: str) -> None:
        SHOTS.mkdir(parents=True, exist_ok=True)
        self.browser.save_screenshot(str(SHOTS / name))

    def test_overview_numbers_equal_stats(self) -> None:
        self.go("#/", "stats")
        stats = self.client.stats()
        shown = {dd.get_attribute("data-stat"): dd.text
                 for dd in self.browser.find_elements(By.CSS_SELECTOR, "#stats dd")}
        self.assertGreater(len(shown), 5)
        for name, text in shown.items():
            self.assertEqual(text, str(stats[name]), name)
        rows = {row.get_attribute("data-queue"): row
                for row in self.browser.find_elements(By.CSS_SELECTOR, "#queues tbody tr")}
        self.assertEqual(set(rows), {"billing", "email"})
        cell = lambda q, f: rows[q].find_element(By.CSS_SELECTOR, f'[data-field="{f}"]').text
        # the tests share one server: the redrive test may have run first
        self.assertEqual(cell("email", "dead"), str(len(self.client.deadletters("email"))))
        self.assertIn(cell("email", "ready"), ["3", "4"])
        self.assertEqual(cell("billing", "leased"), "1")
        self.assertEqual(cell("billing", "in_flight"), "1")
        self.assertEqual(len(self.browser.find_elements(By.CSS_SELECTOR, "#charts .chart svg")), 4)
        self.assertTrue(self.browser.find_elements(By.CSS_SELECTOR, "#charts polyline"))
        self.shot("overview.png")

    def test_dark_color_scheme_is_followed(self) -> None:
        background = lambda: self.browser.execute_script(
            "return getComputedStyle(document.body).backgroundColor")
        self.go("#/", "stats")
        light = background()
        self.browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {
            "features": [{"name": "prefers-color-scheme", "value": "dark"}]})
        try:
            self.go("#/", "stats")
            self.assertNotEqual(background(), light)
            self.shot("overview-dark.png")
        finally:
            self.browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})

    def test_hostile_text_is_shown_as_text(self) -> None:
        self.go("#/dead/email", "dead")
        ids = [row.get_attribute("data-tx")
               for row in self.browser.find_elements(By.CSS_SELECTOR, "#dead tbody tr")]
        self.assertIn(HOSTILE_ID, ids)
        self.assertEqual(self.browser.find_elements(By.CSS_SELECTOR, "#dead img"), [])
        self.assertNotEqual(self.browser.title, "pwned")

    def test_transaction_page_shows_history_plan_and_payload(self) -> None:
        self.go("#/tx/inv-001", "timeline")
        events = self.browser.find_elements(By.CSS_SELECTOR, "#timeline li")
        self.assertGreaterEqual(len(events), 3)
        self.assertIn("ENQUEUE", events[0].text)
        self.assertTrue(self.browser.find_element(By.ID, "countdown").text)
        payload = self.browser.find_element(By.ID, "payload")
        self.assertIsNone(payload.get_attribute("open"))  # collapsed
        payload.find_element(By.TAG_NAME, "summary").click()
        self.assertIn('"invoice": 1', self.browser.find_element(By.ID, "payload-data").text)
        self.shot("transaction.png")

    def test_queue_page_tabs_and_in_flight_page(self) -> None:
        self.go("#/queue/billing", "config")
        tabs = [b.get_attribute("data-state")
                for b in self.browser.find_elements(By.CSS_SELECTOR, ".tabs button")]
        self.assertEqual(tabs, ["ready", "leased", "in_flight", "scheduled", "dead"])
        self.browser.find_element(By.CSS_SELECTOR, '.tabs button[data-state="leased"]').click()
        self.wait.until(lambda b: b.find_elements(By.CSS_SELECTOR, "#list tbody tr"))
        self.shot("queue.png")
        self.go("#/inflight", "leases")
        rows = self.browser.find_elements(By.CSS_SELECTOR, "#leases tbody tr")
        self.assertEqual(len(rows), self.client.stats()["leased"])
        self.shot("in-flight.png")

    def test_a_dead_letter_redriven_from_the_page_is_sending_again(self) -> None:
        self.assertIn("mail-002", [l.tx_id for l in self.client.deadletters("email")])
        self.go("#/dead/email", "dead")
        self.shot("dead-letters.png")
        box = self.browser.find_element(By.CSS_SELECTOR, '#dead tr[data-tx="mail-002"] input.select')
        box.click()
        self.browser.find_element(By.ID, "redrive-selected").click()
        alert = self.wait.until(expected_conditions.alert_is_present())
        self.assertIn("Redrive 1 dead letter of email", alert.text)
        alert.accept()
        wait_until(lambda: "mail-002" not in [l.tx_id for l in self.client.deadletters("email")],
                   what="the redrive")
        self.assertEqual(self.client.get("mail-002").state, "SENDING")
        self.assertFalse(self.client.get("mail-002").extra.get("dead_lettered") == "1")

    def test_pausing_a_queue_from_the_page_stops_reserve(self) -> None:
        # Needs the engine's PAUSE (branch admin); until it is merged the API
        # answers 501 and this test is skipped.
        status, _, _ = self.server.request("POST", "/api/v1/queues/nothing/resume", body={})
        if status == 501:
            self.skipTest("the engine has no PAUSE yet (expected to pass once admin is merged)")
        self.client.enqueue("paused-q", "p-1", "x")
        self.go("#/queue/paused-q", "pause")
        self.browser.find_element(By.ID, "pause").click()
        self.wait.until(expected_conditions.presence_of_element_located((By.ID, "resume")))
        self.assertIsNone(self.client.reserve("paused-q"))
        self.browser.find_element(By.ID, "resume").click()
        self.wait.until(expected_conditions.presence_of_element_located((By.ID, "pause")))
        self.assertIsNotNone(self.client.reserve("paused-q"))


if __name__ == "__main__":
    unittest.main()
