"""The console and the playground in a real browser: headless Chromium driven by Selenium against a running
`chorus serve` with sandbox providers (started by scripts/browser-test, which passes its address and how to run
`chorus admin`).

Environment: CHORUS_URL (the server), CHORUS_ADMIN (a command that runs `chorus admin` against the server's database),
CHORUS_ARTIFACTS (where screenshots go), CHROME_BINARY and CHROMEDRIVER.
"""

import base64
import json
import math
import os
import re
import shlex
import struct
import subprocess
import time
import unittest
import urllib.error
import urllib.parse
import urllib.request
import uuid
import wave

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import Select, WebDriverWait

BASE = os.environ["CHORUS_URL"].rstrip("/")
ARTIFACTS = os.environ.get("CHORUS_ARTIFACTS", "browser-artifacts")
PASSWORD = "correct horse battery"


def http(method, path, body=None, token=None, headers=None, form=None):
    """One request to the server; returns (status, parsed JSON or text, headers)."""
    data = None
    all_headers = dict(headers or {})
    if body is not None:
        data = json.dumps(body).encode()
        all_headers["Content-Type"] = "application/json"
    elif form is not None:
        data = urllib.parse.urlencode(form).encode()
        all_headers["Content-Type"] = "application/x-www-form-urlencoded"
    if token:
        all_headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(BASE + path, data=data, method=method, headers=all_headers)
    opener = urllib.request.build_opener(NoRedirect)
    try:
        with opener.open(request, timeout=30) as response:
            status, raw, response_headers = response.status, response.read(), response.headers
    except urllib.error.HTTPError as error:
        status, raw, response_headers = error.code, error.read(), error.headers
    text = raw.decode("utf-8", "replace")
    try:
        return status, json.loads(text), response_headers
    except ValueError:
        return status, text, response_headers


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def user_id_of(token):
    """The account id in an access token (its `sub`)."""
    payload = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))["sub"]


def admin(action, email):
    command = shlex.split(os.environ["CHORUS_ADMIN"]) + [action, email]
    result = subprocess.run(command, capture_output=True, text=True, timeout=120)
    if result.returncode != 0:
        raise AssertionError(f"chorus admin {action} failed: {result.stdout}{result.stderr}")


def register(email):
    status, body, _ = http("POST", "/auth/register", {"email": email, "password": PASSWORD})
    assert status == 200, body
    return body["access_token"]


class BrowserTests(unittest.TestCase):
    """Ordered: each test builds on the accounts and calls of the ones before (test_NN_ names)."""

    driver = None
    email = f"player-{uuid.uuid4().hex[:8]}@chorus.test"
    friend = f"friend-{uuid.uuid4().hex[:8]}@chorus.test"
    operator = f"operator-{uuid.uuid4().hex[:8]}@chorus.test"

    @classmethod
    def setUpClass(cls):
        os.makedirs(ARTIFACTS, exist_ok=True)
        # The fake microphone plays a steady tone (its default beeps are short and quiet enough that a 2 s recording
        # can sit under the sandbox transcriber's silence level): 1 s of 440 Hz at a third of full scale, looped.
        tone = os.path.join(ARTIFACTS, "microphone-tone.wav")
        with wave.open(tone, "wb") as file:
            file.setnchannels(1)
            file.setsampwidth(2)
            file.setframerate(48000)
            file.writeframes(b"".join(
                struct.pack("<h", int(10000 * math.sin(2 * math.pi * 440 * i / 48000))) for i in range(48000)))
        options = webdriver.ChromeOptions()
        options.binary_location = os.environ.get("CHROME_BINARY", "/usr/bin/chromium")
        for argument in [
            "--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--window-size=1280,2000",
            "--use-fake-ui-for-media-stream", "--use-fake-device-for-media-stream", "--autoplay-policy=no-user-gesture-required",
            f"--use-file-for-fake-audio-capture={tone}",
        ]:
            options.add_argument(argument)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        service = Service(executable_path=os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver"))
        cls.driver = webdriver.Chrome(service=service, options=options)
        cls.driver.set_script_timeout(30)

    @classmethod
    def tearDownClass(cls):
        if cls.driver:
            cls.driver.quit()

    def tearDown(self):
        # Console errors of the page are a failure of the page.
        errors = [entry for entry in self.driver.get_log("browser") if entry["level"] == "SEVERE"]
        expected = [e for e in errors if " 403 " in e["message"] or " 401 " in e["message"] or " 402 " in e["message"]]
        unexpected = [e["message"] for e in errors if e not in expected]
        self.assertEqual(unexpected, [], "errors in the browser console")

    # MARK: helpers

    def shot(self, name):
        self.driver.save_screenshot(os.path.join(ARTIFACTS, f"{name}.png"))

    def wait(self, condition, timeout=30, message=""):
        return WebDriverWait(self.driver, timeout, poll_frequency=0.1).until(condition, message)

    def text(self, element_id):
        return self.driver.find_element(By.ID, element_id).text

    def usage(self, name):
        return self.driver.find_element(By.CSS_SELECTOR, f'#usage dd[data-name="{name}"]').text

    def fill(self, element_id, value):
        field = self.driver.find_element(By.ID, element_id)
        field.clear()
        field.send_keys(value)

    def cut_off(self):
        """The visible text of the page that is cut off or out of the window: a label, heading, button, link, list
        item or paragraph wider than its box or past the window's edges, and any option of a select wider than the
        room the select gives its text (a select cannot wrap: Chromium shows the start of a long option and hides the
        rest, as the Narrator list did)."""
        return self.driver.execute_script(r"""
            const problems = [];
            const width = document.documentElement.clientWidth;
            const visible = (el) => el.getClientRects().length > 0 && getComputedStyle(el).visibility !== 'hidden'
              && !el.closest('.visually-hidden');
            const name = (el) => el.id ? `#${el.id}` : `${el.tagName.toLowerCase()} "${el.textContent.trim().slice(0, 40)}"`;
            const context = document.createElement('canvas').getContext('2d');
            for (const el of document.querySelectorAll('h1, h2, h3, label, button, a, summary, dt, dd, li, p, select, input, textarea')) {
              if (!visible(el)) continue;
              const box = el.getBoundingClientRect();
              if (box.left < -0.5 || box.right > width + 0.5) problems.push(`${name(el)} is outside the window (${Math.round(box.left)} to ${Math.round(box.right)} of ${width} px)`);
              if (el.tagName === 'SELECT') {
                const style = getComputedStyle(el);
                context.font = `${style.fontWeight} ${style.fontSize} ${style.fontFamily}`;
                // The text's room: the inner width less the padding and the drop-down arrow (about 24 px).
                const room = el.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight) - 24;
                for (const option of el.options) {
                  const needed = context.measureText(option.text).width;
                  if (needed > room) problems.push(`${name(el)}: the option "${option.text}" is cut off (${Math.ceil(needed)} px of text, ${Math.floor(room)} px of room)`);
                }
              } else if (!['INPUT', 'TEXTAREA'].includes(el.tagName) && el.clientWidth > 0 && el.scrollWidth > el.clientWidth + 1) {
                problems.push(`${name(el)} is wider than its box (${el.scrollWidth} > ${el.clientWidth} px)`);
              }
            }
            return problems;""")

    def playground_token(self):
        return self.driver.execute_script("return JSON.parse(sessionStorage.getItem('chorus.tokens')).access_token")

    def console_sign_in(self, email):
        self.driver.get(BASE + "/console/login")
        self.fill("email", email)
        self.fill("password", PASSWORD)
        self.driver.find_element(By.CSS_SELECTOR, "form button[type=submit]").click()

    # MARK: the home page and the playground

    def test_00_home_page(self):
        # GET / outside production: what the server is, that it runs the sandbox, and where to go next.
        self.driver.get(BASE + "/")
        self.assertEqual(self.driver.title, "Home · Chorus development")
        self.assertIn("version", self.text("server-facts"))
        self.assertIn("Everything runs against the built-in sandbox", self.text("sandbox-note"))
        links = {a.get_attribute("id"): a.get_attribute("href") for a in self.driver.find_elements(By.CSS_SELECTOR, "#links a")}
        self.assertEqual(links, {"link-playground": BASE + "/playground", "link-console": BASE + "/console",
                                 "link-openapi": BASE + "/openapi.json", "link-health": BASE + "/health"})
        self.assertIn("docs/configuration.md", self.text("docs"))
        self.assertEqual(self.cut_off(), [])
        self.shot("00-home")
        # The icon the page links is served (and no page logs a failed favicon request: see tearDown).
        icon = self.driver.find_element(By.CSS_SELECTOR, 'link[rel="icon"]').get_attribute("href")
        status, svg, headers = http("GET", urllib.parse.urlparse(icon).path)
        self.assertEqual((status, headers["Content-Type"]), (200, "image/svg+xml"))
        self.assertTrue(svg.startswith("<svg"))
        self.driver.find_element(By.ID, "link-playground").click()
        self.wait(lambda d: d.current_url == BASE + "/playground", message="the link leads to the playground")

    def test_01_sign_up(self):
        self.driver.get(BASE + "/playground")
        # The signed-out page says what Chorus is and that it all runs against the sandbox, beside the sign-in form.
        self.wait(lambda d: d.find_element(By.ID, "auth-form").is_displayed(), message="the sign-in form")
        intro = self.text("intro")
        for product in ["AI phone calls", "Family voice messages", "Bedtime stories"]:
            self.assertIn(product, intro)
        self.assertIn("no real phone calls, no real money, no real OpenAI, Twilio or ElevenLabs", self.text("sandbox-intro"))
        sections = self.driver.find_elements(By.CSS_SELECTOR, "#signed-out > section")
        self.assertEqual(len({round(section.location["y"]) for section in sections}), 1, "the intro beside the form")
        self.assertEqual(self.cut_off(), [])
        self.shot("01-playground-signed-out")
        self.assertTrue(self.driver.find_element(By.ID, "signed-in").get_attribute("hidden"))
        # Every input has a label.
        for field in self.driver.find_elements(By.CSS_SELECTOR, "input:not([type=hidden]), select, textarea"):
            labels = self.driver.find_elements(By.CSS_SELECTOR, f'label[for="{field.get_attribute("id")}"]')
            self.assertTrue(labels, f"a label for #{field.get_attribute('id')}")
        self.fill("auth-email", self.email)
        self.fill("auth-password", PASSWORD)
        self.driver.find_element(By.ID, "sign-up").click()
        self.wait(lambda d: d.find_element(By.ID, "signed-in").is_displayed(), message="signed in")
        self.wait(lambda d: self.usage("Trial calls left") != "", message="usage shown")
        self.assertEqual(self.text("who-email"), self.email)
        # An empty panel says so.
        self.wait(lambda d: d.find_element(By.ID, "no-conversation").is_displayed(), message="no conversation yet")
        self.wait(lambda d: d.find_element(By.ID, "no-hero").is_displayed(), message="no hero yet")
        self.shot("02-playground-signed-in")

        # Signing out and in again.
        self.driver.find_element(By.ID, "sign-out").click()
        self.wait(lambda d: d.find_element(By.ID, "signed-out").is_displayed(), message="signed out")
        self.assertFalse(self.driver.find_element(By.ID, "signed-in").is_displayed())
        self.fill("auth-email", self.email)
        self.fill("auth-password", "wrong password")
        self.driver.find_element(By.ID, "sign-in").click()
        self.wait(lambda d: self.text("auth-error") != "", message="a wrong password is refused")
        self.fill("auth-password", PASSWORD)
        self.driver.find_element(By.ID, "sign-in").click()
        self.wait(lambda d: d.find_element(By.ID, "signed-in").is_displayed(), message="signed in again")
        self.assertFalse(self.driver.find_element(By.ID, "signed-out").is_displayed())

    def test_02_call_watched_live(self):
        self.wait(lambda d: len(Select(d.find_element(By.ID, "call-scenario")).options) > 0, message="scenarios loaded")
        Select(self.driver.find_element(By.ID, "call-scenario")).select_by_value("default")
        trial_before = int(self.usage("Trial calls left"))
        self.driver.find_element(By.ID, "place-call").click()
        # A transcript line appears while the call is still going on.
        seen_live = self.wait(
            lambda d: d.find_elements(By.CSS_SELECTOR, "#call-transcript li") and self.text("call-status") or False,
            timeout=40, message="a transcript line appears")
        self.assertNotIn(seen_live, ["completed", "busy", "no-answer", "failed", "canceled"], "the line came during the call")
        self.shot("03-playground-call-live")
        self.wait(lambda d: self.text("call-status") == "completed", timeout=60, message="the call ends")
        self.wait(lambda d: d.find_element(By.ID, "call-recording").is_displayed(), timeout=20, message="the recording is offered")
        speakers = {li.get_attribute("class") for li in self.driver.find_elements(By.CSS_SELECTOR, "#call-transcript li")}
        self.assertEqual(speakers, {"assistant", "callee"})
        time_text = self.text("call-time")
        used, limit = [int(x) for x in time_text.replace(" s", "").split(" / ")]
        self.assertTrue(0 < used <= limit, time_text)
        # The recording is a real WAV file of the call.
        src = self.driver.find_element(By.ID, "call-audio").get_attribute("src")
        with urllib.request.urlopen(src, timeout=30) as response:
            wav = response.read()
        self.assertEqual(wav[:4], b"RIFF")
        self.assertGreater(len(wav), 8000 * 2)
        self.wait(lambda d: int(self.usage("Trial calls left")) == trial_before - 1, message="the call is counted")
        self.shot("04-playground-call-ended")
        # The page matches the API.
        status, detail, _ = http("GET", f"/mobile/calls/{self.text('call-sid')}", token=self.playground_token())
        self.assertEqual(status, 200)
        self.assertEqual(len(detail["transcript"]), len(self.driver.find_elements(By.CSS_SELECTOR, "#call-transcript li")))
        # The call can be reported (seed 000 "Reporting and Moderation System"); the report is pending.
        self.driver.find_element(By.ID, "report-call").click()
        self.wait(lambda d: d.find_element(By.ID, "report-form").is_displayed(), message="the report form opens")
        Select(self.driver.find_element(By.ID, "report-reason")).select_by_value("offensive")
        self.fill("report-description", "The persona was rude.")
        self.driver.find_element(By.ID, "report-submit").click()
        self.wait(lambda d: self.text("report-result").startswith("Thank you"), message="the report is filed")
        status, reports, _ = http("GET", "/mobile/reports", token=self.playground_token())
        self.assertEqual(status, 200)
        self.assertEqual([(r["call_sid"], r["reason"], r["status"]) for r in reports["reports"]],
                         [(self.text("call-sid"), "offensive", "pending")])

    def test_02b_voice_preview(self):
        # Seed 000 "Preview Voices": the ▶ Preview button beside the custom scenario's voice list plays the server's
        # sample of the chosen voice.
        self.driver.find_element(By.CSS_SELECTOR, "#call-form + details summary").click()
        self.wait(lambda d: d.find_element(By.ID, "preview-voice").is_displayed(), message="the custom scenario form opens")
        Select(self.driver.find_element(By.ID, "custom-voice")).select_by_value("echo")
        self.driver.find_element(By.ID, "preview-voice").click()
        self.wait(lambda d: self.text("preview-status") in ("Playing Echo.", ""), timeout=40, message="the sample plays")
        audio = self.driver.find_element(By.ID, "voice-preview-audio")
        self.assertTrue(audio.get_attribute("src").endswith("/mobile/voices/echo/preview"))
        # The element loaded and decoded real audio (a duration, enough data to play).
        self.wait(lambda d: d.execute_script(
            "const a = document.getElementById('voice-preview-audio'); return a.readyState >= 2 && a.duration > 0.5"),
            message="the sample is loaded")
        self.shot("04b-playground-voice-preview")
        status, body, headers = http("GET", "/mobile/voices/echo/preview")
        self.assertEqual(status, 200)
        self.assertIn(headers["Content-Type"], ("audio/mpeg", "audio/wav"))
        self.driver.find_element(By.CSS_SELECTOR, "#call-form + details summary").click()

    def test_03_buy_plan(self):
        button = self.wait(EC.element_to_be_clickable((By.CSS_SELECTOR, 'button[data-product="speech_assistant_premium_monthly"]')))
        button.click()
        self.wait(lambda d: self.usage("Plan") == "Premium", message="the plan is premium")
        self.assertTrue(self.text("purchase-result"))
        self.shot("05-playground-plan-bought")
        status, body, _ = http("GET", "/mobile/subscription-status", token=self.playground_token())
        self.assertEqual((status, body["is_subscribed"]), (200, True))
        self.assertIn("premium", body["subscription_tier"])

    def test_04_voice_message(self):
        friend = register(self.friend)
        # The friend invites the player: the invitation shows on the page and the player accepts it.
        status, _, _ = http("POST", "/conversations", {"kind": "direct", "member_emails": [self.email]}, token=friend)
        self.assertEqual(status, 201)
        accept = self.wait(EC.element_to_be_clickable((By.CSS_SELECTOR, '#invitations button[data-action="accept"]')))
        accept.click()
        self.wait(lambda d: self.text("messages-status") == "Invitation accepted.", message="the invitation is accepted")
        self.fill("conversation-email", self.friend)
        self.driver.find_element(By.CSS_SELECTOR, "#conversation-form button").click()
        self.wait(lambda d: self.text("messages-status") == "Conversation ready.", message="a conversation")
        self.assertFalse(self.driver.find_element(By.ID, "no-conversation").is_displayed())
        record = self.driver.find_element(By.ID, "record")
        record.click()
        self.wait(lambda d: record.get_attribute("aria-pressed") == "true", message="recording")
        time.sleep(2)
        # Issue 21: the recording streams to GET /audio/stream while it is made (the fake microphone's beeps, PCM16 at
        # 24 kHz through the AudioWorklet); the sandbox transcription session's transcript fills the review box.
        self.assertIn("transcribing as you speak", self.text("messages-status"))
        record.click()
        self.wait(lambda d: "transcribed while recording" in self.text("messages-status"), timeout=40,
                  message=f"the recording is transcribed while recording (status: {self.text('messages-status')!r})")
        self.assertTrue(self.driver.find_element(By.ID, "review").is_displayed())
        transcript = self.driver.find_element(By.ID, "review-transcript").get_attribute("value")
        self.assertRegex(transcript, r"^This is a sandbox transcription of \d+\.\d seconds of audio\.$")
        seconds = float(re.search(r"of (\d+\.\d) seconds", transcript).group(1))
        self.assertTrue(1.0 <= seconds <= 6.0, f"about 2 s were streamed, the sandbox heard {seconds} s")
        # The review player plays the WAV the page built from the PCM it streamed.
        self.wait(lambda d: d.execute_script(
            "const a = document.getElementById('review-audio'); return a.readyState >= 1 && a.duration > 1"),
            timeout=20, message="the review audio loads")
        self.shot("06-playground-voice-review")
        self.driver.find_element(By.ID, "send-voice").click()
        self.wait(lambda d: d.find_elements(By.CSS_SELECTOR, "#messages li audio"), message="the message is in the thread")
        self.shot("07-playground-voice-sent")

    def test_04b_voice_message_upload_fallback(self):
        # When the stream cannot start (here its socket is pointed at a path that refuses the upgrade), the recording
        # the page made is uploaded and transcribed as a file, and the status line says so.
        self.driver.execute_script("""
            const Original = window.WebSocket;
            window.chorusOriginalWebSocket = Original;
            window.WebSocket = class extends Original {
              constructor(url, ...rest) { super(String(url).replace('/audio/stream', '/audio/no-stream'), ...rest); }
            };""")
        try:
            record = self.driver.find_element(By.ID, "record")
            record.click()
            self.wait(lambda d: "the live transcription could not start" in self.text("messages-status"), timeout=20,
                      message="the failed stream is announced while recording")
            self.assertEqual(record.get_attribute("aria-pressed"), "true")
            time.sleep(1.5)
            record.click()
            self.wait(lambda d: "Review it, then send." in self.text("messages-status"), timeout=40,
                      message=f"the recording is uploaded instead (status: {self.text('messages-status')!r})")
            self.assertIn("uploading instead", self.text("messages-status"))
            transcript = self.driver.find_element(By.ID, "review-transcript").get_attribute("value")
            self.assertRegex(transcript, r"^This is a sandbox transcription of \d+\.\d seconds of audio\.$")
            before = len(self.driver.find_elements(By.CSS_SELECTOR, "#messages li audio"))
            self.driver.find_element(By.ID, "send-voice").click()
            self.wait(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#messages li audio")) == before + 1,
                      message="the uploaded message is in the thread")
            # The refused upgrade is the one error in the console (tearDown fails on any other).
            errors = [e["message"] for e in self.driver.get_log("browser") if e["level"] == "SEVERE"]
            self.assertTrue(errors and all("/audio/no-stream" in message for message in errors), errors)
        finally:
            self.driver.execute_script("window.WebSocket = window.chorusOriginalWebSocket;")

    def test_05_story(self):
        self.fill("hero-name", "Mia")
        # An HD avatar (issue 21): drawn, then shown beside the form at the image's full size.
        Select(self.driver.find_element(By.ID, "hero-avatar")).select_by_value("hd")
        self.driver.find_element(By.CSS_SELECTOR, "#hero-form button").click()
        self.wait(lambda d: "Mia is ready for a story." == self.text("story-status"), timeout=40, message="a hero with an avatar")
        avatar = self.driver.find_element(By.ID, "hero-avatar-out")
        self.wait(lambda d: avatar.is_displayed() and d.execute_script("return arguments[0].naturalWidth", avatar) == 1024,
                  message="the avatar is shown")
        self.assertEqual(avatar.get_attribute("alt"), "Mia's avatar")
        self.assertFalse(self.driver.find_element(By.ID, "no-hero").is_displayed())
        self.fill("story-length", "1")
        self.fill("story-pictures", "1")
        self.driver.find_element(By.ID, "make-story").click()
        self.wait(lambda d: self.text("story-status") == "The story is ready.", timeout=90, message="the story is made")
        self.assertIn("Mia", self.text("story-text"))
        self.assertTrue(self.driver.find_elements(By.CSS_SELECTOR, "#story-audio audio"))
        picture = self.wait(lambda d: d.find_elements(By.CSS_SELECTOR, "#story-pictures-out img"), message="a picture")[0]
        self.wait(lambda d: d.execute_script("return arguments[0].complete && arguments[0].naturalWidth > 0", picture), message="drawn")
        self.shot("08-playground-story")
        # Every list is filled now: nothing on the page is cut off (the Narrator list said "Coral: Warm and nurturing
        # - ideal for bedt"); the narrator's description is under the list, and follows the choice.
        self.assertEqual(self.cut_off(), [])
        narrator = Select(self.driver.find_element(By.ID, "story-voice"))
        self.assertGreater(len(narrator.options), 1)
        first = self.text("story-voice-description")
        self.assertTrue(first)
        narrator.select_by_index(1)
        self.wait(lambda d: self.text("story-voice-description") not in ("", first), message="the description follows the narrator")
        # No large empty area: the stories section takes the whole width of the page's grid, its two forms side by side.
        main = self.driver.find_element(By.ID, "signed-in").rect
        stories = self.driver.find_element(By.CSS_SELECTOR, "section[aria-labelledby=stories-h]").rect
        self.assertGreater(stories["width"], main["width"] * 0.9)
        hero, story = self.driver.find_element(By.ID, "hero-form").rect, self.driver.find_element(By.ID, "story-form").rect
        self.assertEqual(round(hero["y"]), round(story["y"]), "the hero form beside the story form")

    # MARK: console

    def test_06_console_refuses_non_admins(self):
        register(self.operator)
        self.console_sign_in(self.operator)
        self.wait(lambda d: "not an administrator" in d.page_source, message="refused")
        self.shot("09-console-not-admin")
        # An operator whose role is taken away gets 403 on every console route, pages and API alike.
        admin("grant", self.operator)
        self.console_sign_in(self.operator)
        self.wait(lambda d: d.current_url.rstrip("/").endswith("/console"), message="signed in")
        cookie = self.driver.get_cookie("chorus_console")["value"]
        csrf = self.driver.find_element(By.CSS_SELECTOR, 'meta[name="csrf-token"]').get_attribute("content")
        admin("revoke", self.operator)
        _, contract, _ = http("GET", "/openapi.json")
        routes = [
            (method.upper(), path)
            for path, item in contract["paths"].items() if path.startswith("/console") and not path.startswith("/console/login")
            for method in item if method in ("get", "post")
        ]
        self.assertGreaterEqual(len(routes), 12)
        for method, path in routes:
            concrete = path.replace("{user_id}", "00000000-0000-0000-0000-000000000000").replace("{call_id}", "1")
            concrete = concrete.replace("{story_id}", "x").replace("{job_id}", "1")
            status, _, _ = http(method, concrete, headers={"Cookie": f"chorus_console={cookie}", "X-CSRF-Token": csrf},
                                body={} if method == "POST" else None)
            self.assertEqual(status, 403, f"{method} {concrete}")
        self.driver.get(BASE + "/console")
        self.assertIn("not an administrator", self.driver.page_source)

    def test_07_console_overview_matches_api(self):
        admin("grant", self.operator)
        self.console_sign_in(self.operator)
        self.wait(lambda d: d.find_elements(By.CSS_SELECTOR, "#calls dd"), message="the overview")
        self.wait(lambda d: "(live)" in self.text("live-state"), message="the live view is connected")
        overview = self.driver.execute_async_script(
            "const done = arguments[0]; fetch('/console/api/overview').then((r) => r.json()).then(done)")
        rows = dict(zip([e.text for e in self.driver.find_elements(By.CSS_SELECTOR, "#calls dt")],
                        [e.text for e in self.driver.find_elements(By.CSS_SELECTOR, "#calls dd")]))
        self.assertEqual(rows["Today"], str(overview["calls"]["today"]))
        self.assertEqual(rows["In progress"], str(overview["calls"]["in_progress"]))
        self.assertEqual(rows["Answered today"], str(overview["calls"]["answered_today"]))
        users = dict(zip([e.text for e in self.driver.find_elements(By.CSS_SELECTOR, "#users dt")],
                         [e.text for e in self.driver.find_elements(By.CSS_SELECTOR, "#users dd")]))
        self.assertEqual(users["Accounts"], str(overview["users"]["total"]))
        # And the API matches what happened: three accounts, the one call, the premium plan, providers used.
        self.assertEqual(overview["users"]["total"], 3)
        self.assertEqual((overview["calls"]["today"], overview["calls"]["answered_today"]), (1, 1))
        self.assertIn({"name": "premium", "count": 1}, overview["users"]["by_plan"])
        providers = {(p["provider"], p["operation"]) for p in overview["providers"]}
        self.assertIn(("twilio", "create_call"), providers)
        self.assertIn(("openai", "chat.completions"), providers)
        self.assertEqual(len(self.driver.find_elements(By.CSS_SELECTOR, "#providers tr")), len(overview["providers"]))
        self.shot("10-console-overview")

        # A call placed now shows up live, then leaves the list.
        BrowserTests.caller_token = register(f"caller-{uuid.uuid4().hex[:8]}@chorus.test")
        status, _, _ = http("POST", "/mobile/make-call", {"phone_number": "+15555550199", "scenario": "default"}, token=self.caller_token)
        self.assertEqual(status, 200)
        # (The table is redrawn every second: read its text in one go.)
        self.wait(lambda d: "+15•••••••99" in self.text("live-calls"), message="the call live")
        self.shot("11-console-live-call")
        # The live call opens its detail view, with its owner (looked up by the call's id).
        self.driver.execute_script("document.querySelector('#live-calls button.link').click()")
        self.wait(lambda d: self.detail_title().startswith("Call "), message="the live call's detail view")
        self.wait(lambda d: self.facts("call-facts").get("User", "").startswith("caller-"), message="the call's owner")
        self.wait(lambda d: "No call in progress" in self.text("live-calls"), timeout=60, message="the call leaves the list")

    def facts(self, element_id):
        """A detail view's facts (its <dl>) as a dict, read in one go."""
        return self.driver.execute_script(
            "return Object.fromEntries([...document.querySelectorAll(`#${arguments[0]} dt`)]"
            ".map((dt) => [dt.textContent, dt.nextElementSibling.textContent]))", element_id)

    def detail_title(self):
        """The open detail view's title, read in one go (the view is redrawn after each action)."""
        return self.driver.execute_script("return document.getElementById('detail-title')?.textContent ?? ''")

    def live_text(self, element_id):
        """An element's text read in one go, for elements a redraw replaces."""
        return self.driver.execute_script("return document.getElementById(arguments[0])?.innerText ?? ''", element_id)

    def look_up(self, text):
        self.fill("lookup-q", text)
        self.driver.find_element(By.CSS_SELECTOR, "#lookup button[type=submit]").click()

    def confirm(self, label, yes):
        """Presses a destructive action's button, then its "Yes" (the console asks first, in place)."""
        self.driver.find_element(By.XPATH, f'//button[normalize-space()="{label}"]').click()
        self.wait(EC.element_to_be_clickable((By.XPATH, f'//button[normalize-space()="{yes}"]'))).click()

    def drain_expected_errors(self, statuses):
        """The browser logs every 4xx answer as an error: the ones a test asked for are read (and so cleared) here."""
        errors = [e["message"] for e in self.driver.get_log("browser") if e["level"] == "SEVERE"]
        self.assertEqual([m for m in errors if not any(f" {s} " in m for s in statuses)], [], "only the expected errors")

    def test_08_look_up_a_user_and_act(self):
        # A user looked up by email, typed as people do: the detail view, with its actions.
        grantee = f"grantee-{uuid.uuid4().hex[:8]}@chorus.test"
        user_id = user_id_of(register(grantee))
        self.driver.get(BASE + "/console")
        self.wait(lambda d: d.find_elements(By.CSS_SELECTOR, "#audit li"), message="the overview")
        self.look_up(f"  {grantee.upper()} ")
        self.wait(lambda d: self.detail_title() == f"User {grantee}", message="the user's detail view")
        facts = self.facts("user-facts")
        self.assertTrue(facts["Plan"].startswith("Trial ("), facts["Plan"])
        self.assertEqual((facts["App sessions"], facts["Add-on calls left"]), ("1", "0"))
        self.assertIn("No calls yet.", self.live_text("detail"))
        self.shot("16-console-lookup-user")

        # Grant calls from the view: the answer inline, the view and the audit log show it.
        self.fill("grant-calls", "2")
        self.driver.find_element(By.CSS_SELECTOR, "#grant-form button[type=submit]").click()
        self.wait(lambda d: self.live_text("user-action-result") == "2 calls for 30 days", message="the grant is confirmed")
        self.assertTrue(self.facts("user-facts")["Add-on calls left"].startswith("2 (until "))
        self.wait(lambda d: any("grant_calls" in li.text and user_id in li.text
                                for li in d.find_elements(By.CSS_SELECTOR, "#audit li")), message="the audit log")
        audit = self.driver.execute_async_script(
            "const done = arguments[0]; fetch('/console/api/audit').then((r) => r.json()).then(done)")
        entry = audit["entries"][0]
        self.assertEqual((entry["actor"], entry["action"], entry["target"]), (self.operator, "grant_calls", f"user:{user_id}"))

        # Revoking sessions asks first: Cancel changes nothing; Yes signs the user out everywhere.
        self.driver.find_element(By.XPATH, '//button[normalize-space()="Revoke sessions"]').click()
        self.wait(EC.element_to_be_clickable((By.XPATH, '//button[normalize-space()="Cancel"]'))).click()
        self.assertEqual(self.facts("user-facts")["App sessions"], "1")
        self.confirm("Revoke sessions", "Yes, revoke")
        self.wait(lambda d: self.live_text("user-action-result") == "1 app session revoked", message="the sessions are revoked")
        self.assertEqual(self.facts("user-facts")["App sessions"], "0")
        self.shot("17-console-user-acted-on")

    def test_08b_look_up_a_call_and_refund(self):
        # The call of test_07, looked up by its Twilio SID: status, times, cost, transcript, and a refund asked first.
        status, history, _ = http("GET", "/mobile/call-history", token=self.caller_token)
        self.assertEqual(status, 200)
        call = history["call_history"][0]
        self.look_up(call["call_sid"])
        self.wait(lambda d: self.detail_title() == f"Call {call['id']}", message="the call's detail view")
        facts = self.facts("call-facts")
        self.assertEqual((facts["Call SID"], facts["Number"]), (call["call_sid"], "+15•••••••99"))
        self.assertTrue(facts["Status"].startswith("completed"), facts["Status"])
        self.assertTrue(facts["Cost"].startswith("$"), facts["Cost"])
        self.assertTrue(self.driver.find_elements(By.CSS_SELECTOR, "#call-transcript li"), "the transcript is shown")
        self.confirm("Refund", "Yes, refund")
        self.wait(lambda d: self.live_text("call-action-result").startswith("1 call returned to user"), message="refunded")
        self.shot("18-console-lookup-call")
        # A second refund is refused, inline; the owner's link opens the user.
        self.confirm("Refund", "Yes, refund")
        self.wait(lambda d: "not charged" in self.live_text("call-action-result"), message="the second refund is refused")
        self.assertIn("bad", self.driver.find_element(By.ID, "call-action-result").get_attribute("class"))
        self.driver.find_element(By.CSS_SELECTOR, "#call-facts button.link").click()
        self.wait(lambda d: self.detail_title().startswith("User caller-"), message="the owner's view")

        # The call reported in test_02 opens from the report queue.
        self.wait(lambda d: d.find_elements(By.CSS_SELECTOR, "#reports button.link"), message="the report queue")
        self.driver.execute_script("document.querySelector('#reports button.link').click()")
        self.wait(lambda d: self.detail_title().startswith("Call ") and self.facts("call-facts").get("User") == self.email,
                  message="the reported call's view")

        # The player's story (test_05), opened from the player's view: owner, hero, stages, the text.
        self.look_up(self.email)
        self.wait(lambda d: self.detail_title() == f"User {self.email}", message="the player's view")
        self.assertEqual(self.facts("user-facts")["Plan"], "Premium")
        self.driver.execute_script("document.querySelector('#user-stories button.link').click()")
        self.wait(lambda d: self.facts("story-facts").get("Hero") == "Mia", message="the story's view")
        self.assertEqual(self.facts("story-facts")["User"], self.email)
        self.assertIn("Mia", self.live_text("detail"))
        self.shot("19-console-story")

        # Unknown keys and input that is none of them: the reason inline.
        self.look_up("nobody@chorus.test")
        self.wait(lambda d: self.live_text("lookup-error") == "No account has the email nobody@chorus.test", message="unknown email")
        self.look_up("4155550123")
        self.wait(lambda d: "country code" in self.live_text("lookup-error"), message="a number without its country code")
        self.assertEqual(self.live_text("detail"), "")
        self.drain_expected_errors([404, 409, 422])

    def test_09_changes_without_csrf_are_refused(self):
        result = self.driver.execute_async_script(
            """const done = arguments[0];
            fetch('/console/api/calls/1/refund', { method: 'POST' }).then((r) => done(r.status));""")
        self.assertEqual(result, 403)
        result = self.driver.execute_async_script(
            """const done = arguments[0];
            fetch('/console/logout', { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: 'x=1' })
              .then((r) => done(r.status));""")
        self.assertEqual(result, 403)
        # The sign-in form without its token is refused too.
        status, _, _ = http("POST", "/console/login", form={"email": self.operator, "password": PASSWORD})
        self.assertEqual(status, 403)
        # Still signed in: the refused posts changed nothing.
        self.driver.get(BASE + "/console")
        self.wait(lambda d: d.find_elements(By.CSS_SELECTOR, "#calls dd"), message="still signed in")
        self.shot("13-console-after-refused-posts")

    def test_10_phone_sized(self):
        # The playground on a phone-sized screen: one column, nothing wider than the screen.
        self.driver.set_window_size(390, 844)
        try:
            self.driver.get(BASE + "/playground")
            self.wait(lambda d: d.find_element(By.ID, "signed-in").is_displayed(), message="still signed in")
            self.wait(lambda d: len(Select(d.find_element(By.ID, "story-voice")).options) > 0, message="the lists are filled")
            overflow = self.driver.execute_script("return document.documentElement.scrollWidth - document.documentElement.clientWidth")
            self.assertLessEqual(overflow, 0, "no horizontal scrolling")
            sections = self.driver.find_elements(By.CSS_SELECTOR, "#signed-in > section")
            self.assertEqual(len({round(section.location["x"]) for section in sections}), 1, "one column")
            self.assertEqual(self.cut_off(), [], "nothing cut off on a phone")
            # Keyboard: the first controls are reached with Tab, in order, with a visible focus.
            self.driver.execute_script("document.activeElement && document.activeElement.blur()")
            focused = []
            for _ in range(3):
                ActionChains(self.driver).send_keys(Keys.TAB).perform()
                element = self.driver.switch_to.active_element
                focused.append(element.get_attribute("id") or element.text)
            self.assertEqual(focused, ["sign-out", "Buy Basic Plan", "Buy Premium Plan"], "Tab follows the page's order")
            outline = self.driver.execute_script("return getComputedStyle(document.activeElement).outlineStyle")
            self.assertNotEqual(outline, "none")
            self.shot("14-playground-phone")
            # The custom scenario's voice list too (in a closed disclosure; opened after the Tab order is checked,
            # since a click moves where Tab starts from).
            self.driver.find_element(By.CSS_SELECTOR, "#call-form + details summary").click()
            self.wait(lambda d: d.find_element(By.ID, "custom-voice").is_displayed(), message="the custom scenario form opens")
            self.assertTrue(self.text("custom-voice-description"))
            self.assertEqual(self.cut_off(), [], "nothing cut off in the custom scenario form")
            self.driver.find_element(By.CSS_SELECTOR, "#call-form + details summary").click()
            # The home page on a phone too.
            self.driver.get(BASE + "/")
            self.assertEqual(self.cut_off(), [], "nothing cut off on the home page")
            self.assertLessEqual(self.driver.execute_script(
                "return document.documentElement.scrollWidth - document.documentElement.clientWidth"), 0)
            self.shot("15-home-phone")
            # And the signed-out playground (its intro above the sign-in form).
            self.driver.get(BASE + "/playground")
            self.wait(lambda d: d.find_element(By.ID, "sign-out").is_displayed(), message="signed in")
            self.driver.find_element(By.ID, "sign-out").click()
            self.wait(lambda d: d.find_element(By.ID, "signed-out").is_displayed(), message="signed out")
            self.assertEqual(self.cut_off(), [], "nothing cut off on the signed-out page")
            self.assertLessEqual(self.driver.execute_script(
                "return document.documentElement.scrollWidth - document.documentElement.clientWidth"), 0)
            self.shot("15-playground-signed-out-phone")
        finally:
            self.driver.set_window_size(1280, 2000)


if __name__ == "__main__":
    unittest.main(verbosity=2)
