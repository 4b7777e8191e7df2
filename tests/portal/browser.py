"""What a client sees and does in the customer portal, in a headless Chromium.

Run by tests/tests/portal.rs (`the_portal_works_in_a_browser`) with a plan (JSON: the
links the test made, what the pages must show, the API's PDF and e-invoice, where to
save downloads and screenshots) and a step:

- `answers`: an invoice's page (number, items, total), its PDF and e-invoice downloaded
  (bytes equal to the API's), its GiroCode read from the page (the SVG as the browser
  draws it, decoded by zxing-cpp: BCD, 002, SCT, BIC, name, IBAN, EUR amount, reference),
  a comment sent; one offer accepted and one declined; a renewed link that opens
  nothing; an English page; a client named <script>alert(1)</script> whose page runs
  nothing; a client's session; screenshots at 390 and 1280 pixels wide.
- `expired`: a link past its days (the test moved the account's clock) says so and whom
  to contact.

Every page is checked for messages of the Content Security Policy in the console: a
page that needed something the policy refuses would show it there. Exits non-zero with
the reason when a check fails; prints the screenshots' paths.
"""

import base64
import io
import json
import sys
import tempfile
import time
from pathlib import Path

import zxingcpp
from PIL import Image
from selenium import webdriver
from selenium.common.exceptions import NoAlertPresentException
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions
from selenium.webdriver.support.ui import WebDriverWait

CHROMIUM = "/usr/bin/chromium"
DRIVER = "/usr/bin/chromedriver"


class Portal:
    def __init__(self, plan, profile):
        self.plan = plan
        self.downloads = Path(plan["downloads"])
        self.downloads.mkdir(parents=True, exist_ok=True)
        self.shots = Path(plan["screenshots"])
        self.shots.mkdir(parents=True, exist_ok=True)
        options = Options()
        for arg in ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                    "--no-first-run", "--disable-background-networking",
                    "--disable-component-update", "--disable-sync",
                    f"--user-data-dir={profile}", "--window-size=1280,900",
                    "--hide-scrollbars", "--force-device-scale-factor=1", "--lang=de-DE"]:
            options.add_argument(arg)
        options.binary_location = CHROMIUM
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        options.add_experimental_option("prefs", {
            "download.default_directory": str(self.downloads),
            "download.prompt_for_download": False,
        })
        self.d = webdriver.Chrome(options=options, service=Service(DRIVER))
        self.d.execute_cdp_cmd("Browser.setDownloadBehavior", {
            "behavior": "allow", "downloadPath": str(self.downloads)})
        self.width(1280)

    def close(self):
        self.d.quit()

    def width(self, pixels):
        self.d.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
            "width": pixels, "height": 900, "deviceScaleFactor": 1,
            "mobile": pixels < 600})

    def get(self, url):
        self.d.get(url)
        self.no_policy_messages(url)

    def no_policy_messages(self, where):
        refused = [e["message"] for e in self.d.get_log("browser")
                   if "Content Security Policy" in e["message"]
                   or "Refused to" in e["message"]]
        check(not refused, f"{where}: the page needed what its policy refuses: {refused}")

    def text(self, css):
        return self.d.find_element(By.CSS_SELECTOR, css).text

    def shot(self, name, pixels):
        """The whole page at `pixels` wide, as a PNG under the screenshots folder."""
        self.width(pixels)
        height = self.d.execute_script(
            "return Math.max(document.body.scrollHeight, document.documentElement.scrollHeight)")
        shot = self.d.execute_cdp_cmd("Page.captureScreenshot", {
            "format": "png", "captureBeyondViewport": True,
            "clip": {"x": 0, "y": 0, "width": pixels, "height": height, "scale": 1}})
        path = self.shots / name
        path.write_bytes(base64.b64decode(shot["data"]))
        print(f"screenshot: {path}")
        self.width(1280)

    def download(self, css, suffix):
        before = set(self.downloads.iterdir())
        self.d.find_element(By.CSS_SELECTOR, css).click()
        deadline = time.time() + 30
        while time.time() < deadline:
            new = [p for p in set(self.downloads.iterdir()) - before
                   if p.suffix == suffix]
            if new and new[0].stat().st_size > 0:
                time.sleep(0.3)
                return new[0].read_bytes()
            time.sleep(0.2)
        check(False, f"no {suffix} was downloaded from {css}")

    def submit(self, button_css):
        # The click only starts the post: wait until the page it answers with replaced this
        # one (its redirect followed), or a check would read the old page.
        page = self.d.find_element(By.TAG_NAME, "html")
        self.d.find_element(By.CSS_SELECTOR, button_css).click()
        WebDriverWait(self.d, 30).until(expected_conditions.staleness_of(page))
        WebDriverWait(self.d, 30).until(
            lambda d: d.execute_script("return document.readyState") == "complete")
        self.no_policy_messages(button_css)


def check(condition, message):
    if not condition:
        raise AssertionError(message)


def girocode(portal):
    """The GiroCode of the page, read from its SVG image as the browser draws it."""
    svg = portal.d.find_element(By.CSS_SELECTOR, "figure.girocode img")
    with Image.open(io.BytesIO(svg.screenshot_as_png)) as image:
        # Readers want a quiet zone around the code: the SVG draws one, and a white margin
        # around the screenshot makes sure of it.
        gray = image.convert("L")
        framed = Image.new("L", (gray.width + 40, gray.height + 40), 255)
        framed.paste(gray, (20, 20))
        found = [r.text for r in zxingcpp.read_barcodes(framed)]
    check(len(found) == 1, f"one code on the page, found {found}")
    return found[0].split("\n")


def answers(portal, plan):
    # An invoice: its number, items and total as the PDF shows them.
    portal.get(plan["invoice"])
    check(portal.text("h1") == plan["number"], f"number: {portal.text('h1')}")
    lines = portal.text("table.lines")
    for item in plan["items"]:
        check(item in lines, f"{item} in {lines}")
    grand = portal.text("table.totals tr.grand")
    check(plan["total"] in grand, f"total {plan['total']} in {grand}")
    check("Offen" in portal.text(".doc-head"), "the status in German")
    check(portal.d.find_elements(By.TAG_NAME, "script") == [], "no script")
    fields = girocode(portal)
    want = plan["girocode"]
    check(fields[:4] == ["BCD", "002", "1", "SCT"], f"EPC header: {fields}")
    check(fields[4] == want["bic"], f"BIC: {fields}")
    check(fields[5] == want["name"], f"name: {fields}")
    check(fields[6] == want["iban"], f"IBAN: {fields}")
    check(fields[7] == want["amount"], f"amount: {fields}")
    check(fields[10] == want["reference"], f"reference: {fields}")
    print(f"girocode: {fields}")
    portal.shot("invoice-1280.png", 1280)
    portal.shot("invoice-390.png", 390)
    pdf = portal.download("a.button[href$='/pdf']", ".pdf")
    check(pdf == Path(plan["api_pdf"]).read_bytes(), "the PDF is the API's")
    xml = portal.download("a.button[href$='/e-invoice']", ".xml")
    check(xml == Path(plan["api_einvoice"]).read_bytes(), "the e-invoice is the API's")
    comment = "Bitte schicken Sie uns die Rechnung auch per Post."
    portal.d.find_element(By.ID, "comment").send_keys(comment)
    portal.submit("section.comments button[type=submit]")
    check(portal.d.current_url.endswith("?done=comment"), portal.d.current_url)
    check("Ihre Nachricht wurde gesendet" in portal.text(".notice"), "the comment's notice")
    check(comment in portal.text("ol.thread"), "the comment on the page")

    # Offers: one accepted, one declined.
    portal.get(plan["accept"])
    portal.shot("offer-390.png", 390)
    portal.shot("offer-1280.png", 1280)
    portal.d.find_element(By.ID, "name").send_keys("Erika Muster")
    portal.submit("button[value=accept]")
    check("angenommen" in portal.text(".notice"), "the acceptance's notice")
    check("Angenommen" in portal.text(".doc-head"), "WON shows as accepted")
    check(portal.d.find_elements(By.CSS_SELECTOR, "button[value=accept]") == [],
          "no buttons once answered")
    portal.get(plan["decline"])
    portal.d.find_element(By.ID, "name").send_keys("Max Mustermann")
    portal.submit("button[value=decline]")
    check("Abgelehnt" in portal.text(".doc-head"), "LOST shows as declined")

    # A renewed link opens nothing.
    portal.get(plan["renewed"])
    check(portal.text("h1") == "This link is not valid", portal.text("h1"))

    # A client who reads English.
    portal.get(plan["english"])
    check("Amount due" in portal.text("section.pay"), "an English page")

    # A client whose name is markup: shown as text, never run.
    portal.get(plan["hostile"])
    try:
        alert = portal.d.switch_to.alert
        check(False, f"an alert ran: {alert.text}")
    except NoAlertPresentException:
        pass
    check(portal.d.find_elements(By.TAG_NAME, "script") == [], "no script element")
    check("<script>alert(1)</script>" in portal.text(".recipient"),
          "the name shows as text")
    portal.shot("hostile-1280.png", 1280)

    # A client's session: the documents, each a link to its page.
    portal.get(plan["session"])
    links = [a.get_attribute("href") for a in
             portal.d.find_elements(By.CSS_SELECTOR, "table.documents a")]
    check(plan["invoice"] in links, f"the invoice in {links}")
    check(plan["renewed"] not in links, "a replaced link is not listed")
    portal.shot("session-1280.png", 1280)
    portal.shot("session-390.png", 390)
    portal.d.find_element(By.CSS_SELECTOR, f"a[href='{plan['invoice']}']").click()
    check(portal.text("h1") == plan["number"], "the session's link opens the invoice")


def expired(portal, plan):
    portal.get(plan["expired"])
    check(portal.text("h1") == "Dieser Link ist abgelaufen", portal.text("h1"))
    body = portal.text("main")
    for contact in ["Faktura Test GmbH", "rechnung@faktura.example", "+49 30 1234567"]:
        check(contact in body, f"{contact} in {body}")
    portal.shot("expired-390.png", 390)


def main():
    plan = json.loads(Path(sys.argv[1]).read_text())
    step = {"answers": answers, "expired": expired}[sys.argv[2]]
    with tempfile.TemporaryDirectory() as profile:
        portal = Portal(plan, profile)
        try:
            step(portal, plan)
        finally:
            portal.close()
    print(f"portal {sys.argv[2]}: every check passed")


if __name__ == "__main__":
    main()
