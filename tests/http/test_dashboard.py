"""The dashboard in a real browser: headless chromium driven by Selenium
against a real tarde serve with traffic. Every check runs; none is skipped.

Screenshots go to $TARDE_SCREENSHOT_DIR (CTest sets it inside the build
directory), else to a temporary directory, so that a test run leaves the
source tree alone. With TARDE_UPDATE_SCREENSHOTS=1 they replace those of
docs/screenshots/ that README.md shows.

Needs Debian's chromium, chromium-driver and python3-selenium (scripts/deps);
fails when they are missing. Standard library + selenium only.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
import unittest
from pathlib import Path

from http_support import REPO_ROOT, HttpServer, make_dead_letters, wait_until

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions
from selenium.webdriver.support.ui import Select, WebDriverWait

TOKEN = "browser-token"
if os.environ.get("TARDE_UPDATE_SCREENSHOTS") == "1":
    SHOTS = REPO_ROOT / "docs" / "screenshots"
else:
    SHOTS = Path(os.environ.get("TARDE_SCREENSHOT_DIR")
                 or Path(tempfile.gettempdir()) / "tarde-dashboard-screenshots")
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
DRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
HOSTILE_ID = "<img/src=x/onerror=document.title='pwned'>"


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
        """Queues in every state, answers of each kind, fired retries, and a few
        seconds of steady traffic so that the charts have something to show."""
        c = cls.client
        c.config("billing", response_timeout="10m", lease="10m")  # held for the whole run
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
        cls.steady_traffic(seconds=4.5)

    @classmethod
    def steady_traffic(cls, seconds: float) -> None:
        """A dispatcher on queue "orders" for a while, on a client of its own:
        requests enqueued, handed out and answered, some to be retried."""
        c = cls.server.client()
        # Retries far off or soon: nothing fires once the traffic stopped,
        # so that the overview and STATS agree whenever they are read.
        c.config("orders", transient_base="100ms", transient_cap="100ms")
        answers = ["SUCCESS", "SUCCESS", "SUCCESS", "CANCELLED", "TRANSIENT", "SUCCESS"]
        deadline = time.monotonic() + seconds
        n = 0
        while time.monotonic() < deadline:
            for _ in range(5):
                c.enqueue("orders", f"ord-{n:05d}", f'{{"order": {n}}}', base="1h", jitter=0.2)
                n += 1
            for i in range(4):
                request = c.reserve("orders")
                if request is None:
                    break
                c.sent(request.tx_id, request.attempt)
                c.respond(request.tx_id, request.attempt, answers[(n + i) % len(answers)],
                          reason="http-503")
            time.sleep(0.1)
        c.close()
        time.sleep(0.5)  # the last TRANSIENT answers are re-sent

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
        """Shows the page of `hash_`, freshly rendered: the ids of the page
        shown before are cleared first, so that waiting for `ready_id` waits
        for the new page (the same hash again is re-rendered by "Refresh now")."""
        b = self.browser
        b.execute_script("document.querySelectorAll('#page [id]').forEach(e => e.removeAttribute('id'))")
        url = f"http://127.0.0.1:{self.server.http_port}/{hash_}"
        same = b.current_url == url
        b.get(url)
        if same:
            b.find_element(By.ID, "refresh").click()
        self.wait.until(expected_conditions.presence_of_element_located((By.ID, ready_id)))
        # a part left out or a list not flattened must not show as text
        text = b.find_element(By.ID, "page").text
        for leak in ["null", "undefined", "[object", "NaN"]:
            self.assertNotIn(leak, text, hash_)

    def show_tab(self, state: str) -> None:
        """Clicks the queue page's tab of `state` and waits for the list it
        renders: the ids of the page shown before are cleared first, so that
        rows of the previous render cannot satisfy the wait and then go stale."""
        b = self.browser
        b.execute_script("document.querySelectorAll('#page [id]').forEach(e => e.removeAttribute('id'))")
        b.find_element(By.CSS_SELECTOR, f'.tabs button[data-state="{state}"]').click()
        self.wait.until(lambda b: b.find_elements(By.CSS_SELECTOR, "#list tbody tr td"))

    def tx_ids(self, rows_css: str) -> list[str]:
        """The data-tx of every row `rows_css` matches, read in one script."""
        return self.browser.execute_script(
            "return [...document.querySelectorAll(arguments[0])].map(r => r.dataset.tx)", rows_css)

    def shot(self, name: str) -> None:
        SHOTS.mkdir(parents=True, exist_ok=True)
        self.browser.save_screenshot(str(SHOTS / name))

    def test_overview_numbers_equal_stats(self) -> None:
        self.go("#/", "stats")
        stats = self.client.stats()
        shown = {dd.get_attribute("data-stat"): dd.text
                 for dd in self.browser.find_elements(By.CSS_SELECTOR, "#stats dd")}
        self.assertGreater(len(shown), 5)
        # the store was counted long before: no note that counts are partial
        self.assertEqual(stats["counting"], 0)
        self.assertFalse(self.browser.find_element(By.ID, "counting").is_displayed())
        for name, text in shown.items():
            self.assertEqual(text, str(stats[name]), name)
        rows = {row.get_attribute("data-queue"): row
                for row in self.browser.find_elements(By.CSS_SELECTOR, "#queues tbody tr")}
        self.assertTrue({"billing", "email", "orders"} <= set(rows), set(rows))
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
        ids = self.tx_ids("#dead tbody tr")
        self.assertIn(HOSTILE_ID, ids)
        self.assertEqual(self.browser.find_elements(By.CSS_SELECTOR, "#dead img"), [])
        self.assertNotEqual(self.browser.title, "pwned")

    def test_transaction_page_shows_history_plan_and_payload(self) -> None:
        self.go("#/tx/inv-001", "timeline")
        events = self.browser.find_elements(By.CSS_SELECTOR, "#timeline li")
        self.assertGreaterEqual(len(events), 3)
        self.assertIn("ENQUEUE", events[0].text)
        self.assertIn("attempt 0, next 1", events[0].text)
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
        self.assertEqual(tabs, ["ready", "leased", "in_flight", "scheduled", "succeeded",
                                "failed", "dead"])
        # the config is shown as name/value pairs, as CONFIG prints them
        names = [dt.text for dt in self.browser.find_elements(By.CSS_SELECTOR, "#config dt")]
        values = [dd.text for dd in self.browser.find_elements(By.CSS_SELECTOR, "#config dd")]
        self.assertEqual(dict(zip(names, values)), self.client.config("billing"))
        self.show_tab("succeeded")
        self.go("#/queue/orders", "config")
        self.show_tab("scheduled")
        scheduled = self.tx_ids("#list tbody tr")
        self.assertTrue(scheduled)
        self.assertEqual({self.client.get(tx).state for tx in scheduled}, {"SCHEDULED"})
        self.go("#/queue/billing", "config")
        self.show_tab("leased")
        leased = self.browser.find_element(By.CSS_SELECTOR, "#list tbody tr")
        attempt = leased.find_elements(By.TAG_NAME, "td")[2].text
        self.assertEqual(attempt, str(self.client.get(leased.get_attribute("data-tx")).next_attempt))
        self.assertNotEqual(attempt, "0")
        self.shot("queue.png")
        self.go("#/inflight", "leases")
        rows = self.browser.find_elements(By.CSS_SELECTOR, "#leases tbody tr")
        self.assertEqual(len(rows), self.client.stats()["leased"])
        flying = self.tx_ids("#inflight tbody tr")
        self.assertTrue(flying)
        self.assertEqual({self.client.get(tx).state for tx in flying}, {"IN_FLIGHT"})
        # billing answers are due within its response_timeout of 10 min
        billing = [row for row in self.browser.find_elements(By.CSS_SELECTOR, "#inflight tbody tr")
                   if row.find_elements(By.TAG_NAME, "td")[1].text == "billing"]
        self.assertEqual(len(billing), 1)
        cells = [td.text for td in billing[0].find_elements(By.TAG_NAME, "td")]
        self.assertRegex(cells[3], r"^\d{4}-")  # in flight since
        self.assertRegex(cells[5], r"^(9\.\d|10\.0) min$")  # answer due in
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

    def test_bulk_redrive_of_a_filter_from_the_page_states_the_count(self) -> None:
        make_dead_letters(self.client, "bulk", [f"blk-{i}" for i in range(5)] + ["zz-1"])
        self.go("#/dead/bulk", "dead")
        prefix = self.browser.find_element(By.ID, "filter-prefix")
        prefix.send_keys("blk-")
        self.browser.find_element(By.ID, "apply-filter").click()
        self.wait.until(lambda b: len(b.find_elements(By.CSS_SELECTOR, "#dead tbody tr")) == 5)
        self.browser.find_element(By.ID, "redrive-matching").click()
        alert = self.wait.until(expected_conditions.alert_is_present())
        self.assertEqual(alert.text, "Redrive 5 dead letters of bulk?")
        alert.accept()
        wait_until(lambda: [l.tx_id for l in self.client.deadletters("bulk")] == ["zz-1"],
                   what="the bulk redrive")
        for i in range(5):
            self.assertEqual(self.client.get(f"blk-{i}").state, "SENDING")
        history = self.client.history("blk-0")
        self.assertEqual(history[-1].cause, "REDRIVE_ALL")

    def test_dismissing_the_confirm_changes_nothing(self) -> None:
        make_dead_letters(self.client, "kept", ["kept-1", "kept-2"])
        self.go("#/dead/kept", "dead")
        self.browser.find_element(By.ID, "redrive-matching").click()
        alert = self.wait.until(expected_conditions.alert_is_present())
        self.assertEqual(alert.text, "Redrive 2 dead letters of kept?")
        alert.dismiss()
        time.sleep(0.3)
        self.assertEqual([l.tx_id for l in self.client.deadletters("kept")], ["kept-1", "kept-2"])

    def test_pausing_a_queue_from_the_page_stops_reserve(self) -> None:
        self.client.enqueue("paused-q", "p-1", "x")
        self.go("#/queue/paused-q", "pause")
        self.browser.find_element(By.ID, "pause").click()
        self.wait.until(expected_conditions.presence_of_element_located((By.ID, "resume")))
        self.assertEqual(self.client.stats()["paused.paused-q"], 1)
        self.assertIsNone(self.client.reserve("paused-q"))
        self.go("#/", "queues")
        row = self.browser.find_element(By.CSS_SELECTOR, '#queues tr[data-queue="paused-q"]')
        self.assertEqual(row.find_element(By.CSS_SELECTOR, '[data-field="paused"]').text, "paused")
        self.go("#/queue/paused-q", "resume")
        self.browser.find_element(By.ID, "resume").click()
        self.wait.until(expected_conditions.presence_of_element_located((By.ID, "pause")))
        self.assertEqual(self.client.stats()["paused.paused-q"], 0)
        request = self.client.reserve("paused-q")
        self.assertIsNotNone(request)
        self.assertEqual(request.tx_id, "p-1")

    def test_polling_follows_the_interval_and_pauses_while_the_tab_is_hidden(self) -> None:
        b = self.browser
        self.go("#/", "stats")
        # The page's API calls, counted by the browser's resource timing.
        calls = lambda: b.execute_script(
            "return performance.getEntriesByType('resource')"
            ".filter(e => e.name.includes('/api/v1/stats')).length")
        # The tab's visibility, as the browser would report it on a switch.
        set_hidden = lambda hidden: b.execute_script(
            "Object.defineProperty(document, 'hidden', {value: arguments[0], configurable: true});"
            "document.dispatchEvent(new Event('visibilitychange'))", hidden)
        b.execute_script("performance.setResourceTimingBufferSize(10000); performance.clearResourceTimings()")
        try:
            Select(b.find_element(By.ID, "poll")).select_by_value("2")
            time.sleep(6.5)
            self.assertGreaterEqual(calls(), 2)  # every 2 s; the clock is real, so 1 s is spare
            set_hidden(True)
            time.sleep(0.5)  # a refresh already under way may still land
            hidden_calls = calls()
            time.sleep(4.5)
            self.assertEqual(calls(), hidden_calls)
            set_hidden(False)  # shown again: one refresh at once, then polling again
            WebDriverWait(b, 5).until(lambda _: calls() > hidden_calls)
        finally:
            Select(b.find_element(By.ID, "poll")).select_by_value("0")
            b.execute_script("delete document.hidden")


if __name__ == "__main__":
    unittest.main()
