"""The console in a real browser: Debian's headless Chromium, driven by
Selenium through Debian's chromedriver, on a phone-sized viewport (390×844).

The demo game is crawled and drafted by ``bansha cycle`` against the local simulator; the
console runs in uvicorn on 127.0.0.1 (a free port, in a thread). The browser logs in with the
token, approves the day's result, confirms a 潜水 flag; the next ``bansha cycle`` posts the
result exactly once. Screenshots are kept in ``artifacts/`` (gitignored).

Skipped only when Chromium, chromedriver or Selenium is missing and ``CI`` is unset; in CI a
missing browser fails.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import missing_cjk_font
from tests.pipeline.console.support import (
    MORNING,
    TOKEN,
    Served,
    at,
    draft_state,
    make_app,
    result_draft,
)

REPO = Path(__file__).resolve().parents[3]
ARTIFACTS = REPO / "artifacts"
PHONE = {"width": 390, "height": 844, "pixelRatio": 1.0}
WAIT_S = 30.0  # bounded, generous: the browser shares two cores with the rest of the suite
FLAG = "d2-qianshui-汤圆"  # m135.txt:311 潜水 → 黄牌


def _tools() -> tuple[str, str] | str:
    """(chromium, chromedriver), or why they cannot be used."""
    chromium = os.environ.get("BANSHA_CHROMIUM") or shutil.which("chromium")
    driver = (
        os.environ.get("BANSHA_CHROMEDRIVER")
        or shutil.which("chromedriver")
        or (
            "/usr/lib/chromium/chromedriver"
            if Path("/usr/lib/chromium/chromedriver").exists()
            else None
        )
    )
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install selenium)"
    if not chromium:
        return "no Chromium binary (Debian: apt-get install -y chromium)"
    if not driver:
        return "no chromedriver (Debian: apt-get install -y chromium-driver)"
    font = missing_cjk_font()
    if font:
        return font
    return chromium, driver


@pytest.fixture(scope="module")
def tools() -> tuple[str, str]:
    found = _tools()
    if isinstance(found, str):
        if os.environ.get("CI"):
            pytest.fail(f"CI 中浏览器测试必须运行：{found}")
        pytest.skip(f"{found}; in CI (CI set) this test fails instead")
    return found


@pytest.fixture
def browser(tools: tuple[str, str], tmp_path: Path) -> Iterator[Any]:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    chromium, driver_path = tools
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--hide-scrollbars",
        "--lang=zh-CN",
        "--disable-quic",
        f"--user-data-dir={tmp_path / 'chromium-profile'}",  # a new, empty profile each time
    ):
        options.add_argument(flag)
    options.add_experimental_option(
        "mobileEmulation",
        {
            "deviceMetrics": PHONE,
            "userAgent": "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 "
            "(KHTML, like Gecko) Chrome/120.0 Mobile Safari/537.36",
        },
    )
    driver = webdriver.Chrome(service=Service(driver_path), options=options)
    driver.set_page_load_timeout(WAIT_S)
    try:
        yield driver
    finally:
        driver.quit()


def _shot(driver: Any, name: str) -> Path:
    """The whole page (not just the viewport), as a PNG in artifacts/."""
    import base64

    ARTIFACTS.mkdir(exist_ok=True)
    size = driver.execute_cdp_cmd("Page.getLayoutMetrics", {})["cssContentSize"]
    shot = driver.execute_cdp_cmd(
        "Page.captureScreenshot",
        {
            "format": "png",
            "captureBeyondViewport": True,
            "clip": {"x": 0, "y": 0, "width": size["width"], "height": size["height"], "scale": 1},
        },
    )
    path = ARTIFACTS / name
    path.write_bytes(base64.b64decode(shot["data"]))
    return path


def _fits_the_phone(driver: Any) -> None:
    width = driver.execute_script("return document.documentElement.scrollWidth")
    viewport = driver.execute_script("return window.innerWidth")
    assert viewport == PHONE["width"]
    assert width <= viewport, (
        f"{driver.current_url}: page is {width}px wide on a {viewport}px phone"
    )


def test_log_in_approve_and_confirm_on_a_phone(morning, browser):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    started = time.monotonic()
    wait = WebDriverWait(browser, WAIT_S)
    draft = result_draft(morning)
    before = len(morning.director_posts())
    with Served(lambda port: make_app(morning, MORNING, port=port)) as served:
        # nothing without a login
        browser.get(served.url + "/g/m135-demo/drafts")
        wait.until(ec.presence_of_element_located((By.ID, "token")))
        assert browser.current_url == served.url + "/login"
        _fits_the_phone(browser)
        _shot(browser, "console-login.png")
        browser.find_element(By.ID, "token").send_keys(TOKEN)
        browser.find_element(By.ID, "login").click()

        # the overview: the game with its drafts and flags waiting
        card = wait.until(
            ec.presence_of_element_located((By.CSS_SELECTOR, "[data-game='m135-demo']"))
        )
        assert "[M135]『让子弹飞』" in card.text
        assert "待批准草稿" in card.text and "待确认违规" in card.text
        assert "上一轮" in card.text and "论坛" in card.text
        _fits_the_phone(browser)
        _shot(browser, "console-overview.png")

        # the drafts: the result is urgent; open it, look, approve
        card.find_element(By.LINK_TEXT, "草稿").click()
        wait.until(ec.staleness_of(card))
        item = wait.until(
            ec.presence_of_element_located((By.CSS_SELECTOR, f"li[data-draft='{draft['id']}']"))
        )
        assert "urgent" in item.get_attribute("class")
        _fits_the_phone(browser)
        item.find_element(By.CSS_SELECTOR, "a.draft-link").click()
        wait.until(ec.staleness_of(item))
        preview = wait.until(ec.presence_of_element_located((By.ID, "preview")))
        assert "第2天投票结果" in preview.text  # rendered, not BBCode
        assert "[b]" not in preview.text
        assert "[b]" in browser.find_element(By.ID, "body").get_attribute("value")
        _fits_the_phone(browser)
        _shot(browser, "console-draft.png")
        approve = browser.find_element(By.ID, "approve")
        approve.click()
        wait.until(ec.staleness_of(approve))
        flash = wait.until(ec.presence_of_element_located((By.CSS_SELECTOR, ".flash")))
        assert f"已批准第 {draft['id']} 号草稿" in flash.text
        assert draft_state(morning, draft["id"]) == "approved"
        assert len(morning.director_posts()) == before  # the console posted nothing

        # the day: confirm a 潜水 flag (m135.txt:311: a yellow card)
        browser.get(served.url + "/g/m135-demo/day/2")
        flag = wait.until(ec.presence_of_element_located((By.ID, f"flag-{FLAG}")))
        assert "待确认" in flag.text
        _fits_the_phone(browser)
        # giving a card asks once more: the browser keeps the form until the box is ticked
        flag.find_element(By.CSS_SELECTOR, "form.confirm button").click()
        assert "待确认" in browser.find_element(By.ID, f"flag-{FLAG}").text
        flag.find_element(By.CSS_SELECTOR, "form.confirm input[name=sure]").click()
        flag.find_element(By.CSS_SELECTOR, "form.confirm button").click()
        wait.until(ec.staleness_of(flag))
        flag = wait.until(ec.presence_of_element_located((By.ID, f"flag-{FLAG}")))
        assert "已确认" in flag.text and "黄牌" in flag.text
        assert "status-confirmed" in flag.get_attribute("class")
        _shot(browser, "console-day.png")
        scripts = browser.execute_script("return document.scripts.length")
        assert scripts == 0  # the pages need no JavaScript

    store = morning.store()
    try:
        (decision,) = list(store.db.query("SELECT * FROM flag_decisions"))
    finally:
        store.close()
    assert (decision["flag_id"], decision["status"], decision["card"]) == (
        FLAG,
        "confirmed",
        "黄牌",
    )

    # the next cycle posts the approved result, exactly once
    morning.cycle(at("2026-12-03T09:05:00+08:00"))
    morning.cycle(at("2026-12-03T09:10:00+08:00"))
    posted = morning.director_posts()[before:]
    assert len(posted) == 1 and "第2天投票结果" in posted[0].revisions[-1].message
    assert draft_state(morning, draft["id"]) == "posted"

    for name in (
        "console-login.png",
        "console-overview.png",
        "console-draft.png",
        "console-day.png",
    ):
        png = (ARTIFACTS / name).read_bytes()
        assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) > 5_000
    assert time.monotonic() - started < 90
