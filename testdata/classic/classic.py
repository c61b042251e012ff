"""W3C WebDriver's classic commands through wdext, as Python Selenium
drives them: python3 classic.py WDEXT_URL BROWSER PAGE_URL

PAGE_URL is testdata/classic/page.html served over HTTP. Prints a line per
check and "N passed, N failed"; exits non-zero on a failure. Run by
engine/firefox's TestClassicClients.
"""
import sys
import traceback

from selenium import webdriver
from selenium.common.exceptions import NoSuchElementException, UnexpectedAlertPresentException
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select, WebDriverWait

server, browser, page = sys.argv[1:4]
options = {"firefox": webdriver.FirefoxOptions, "chrome": webdriver.ChromeOptions}[browser]()
passed = failed = 0


def check(name, f):
    global passed, failed
    try:
        f()
        print("ok", name)
        passed += 1
    except Exception:
        print("FAIL", name)
        traceback.print_exc(file=sys.stdout)
        failed += 1


d = webdriver.Remote(server, options=options)
try:
    d.get(page)

    def navigation():
        assert d.title == "classic", d.title
        assert d.current_url == page, d.current_url
        d.find_element(By.ID, "next").click()
        WebDriverWait(d, 10).until(lambda _: d.title == "next")
        d.back()
        WebDriverWait(d, 10).until(lambda _: d.title == "classic")
        d.forward()
        WebDriverWait(d, 10).until(lambda _: d.title == "next")
        d.refresh()
        d.get(page)
    check("navigation: get, click a link, back, forward, refresh", navigation)

    def form():
        who = d.find_element(By.NAME, "who")
        who.send_keys("Firefox")
        assert who.get_attribute("value") == "Firefox"
        who.clear()
        who.send_keys("world" + Keys.ENTER)
        assert d.find_element(By.CSS_SELECTOR, "#said").text == "hello world"
        Select(d.find_element(By.ID, "pick")).select_by_value("b")
        assert d.find_element(By.ID, "pick").get_property("value") == "b"
        box = d.find_element(By.ID, "box")
        box.click()
        assert box.is_selected() and box.is_enabled() and box.is_displayed()
        assert box.tag_name == "input"
        assert box.value_of_css_property("display") != ""
        assert box.rect["width"] > 0
    check("elements: send keys, clear, submit, select, click, state", form)

    def finding():
        assert len(d.find_elements(By.TAG_NAME, "option")) == 2
        form = d.find_element(By.ID, "f")
        assert form.find_element(By.TAG_NAME, "select").get_attribute("id") == "pick"
        assert len(form.find_elements(By.XPATH, ".//option")) == 2
        assert d.find_element(By.LINK_TEXT, "next").get_attribute("id") == "next"
        try:
            d.find_element(By.ID, "nope")
            raise AssertionError("found #nope")
        except NoSuchElementException:
            pass
    # Selenium 4.8's shadow_root refuses browsers other than Chromium's:
    # the JS client checks shadow roots.
    check("finding: strategies, from an element, no such element", finding)

    def frames_and_windows():
        d.switch_to.frame(d.find_element(By.ID, "frame"))
        assert d.find_element(By.ID, "inframe").text == "in the frame"
        d.switch_to.parent_frame()
        assert d.find_element(By.ID, "said") is not None
        first = d.current_window_handle
        d.switch_to.new_window("tab")
        assert len(d.window_handles) == 2
        d.close()
        d.switch_to.window(first)
        assert d.title == "classic"
        r = d.get_window_rect()
        assert r["width"] > 0
    check("frames and windows", frames_and_windows)

    def scripts_cookies_alerts():
        assert d.execute_script("return arguments[0] + 1", 41) == 42
        assert d.execute_async_script("arguments[arguments.length - 1](document.title)") == "classic"
        d.add_cookie({"name": "flavour", "value": "oat"})
        assert d.get_cookie("flavour")["value"] == "oat"
        d.delete_cookie("flavour")
        assert d.get_cookie("flavour") is None
        d.find_element(By.ID, "alert").click()
        alert = d.switch_to.alert
        assert alert.text == "sure?"
        alert.accept()
        assert d.execute_script("return window.answer") is True
        # Unhandled: the next command dismisses it and fails (classic's
        # default, "dismiss and notify").
        d.find_element(By.ID, "alert").click()
        try:
            d.title
            raise AssertionError("no unexpected alert open")
        except UnexpectedAlertPresentException:
            pass
        assert d.execute_script("return window.answer") is False
    check("scripts, cookies, alerts", scripts_cookies_alerts)

    def actions_and_screens():
        ActionChains(d).move_to_element(d.find_element(By.ID, "who")).click().send_keys("q").perform()
        assert d.find_element(By.ID, "key").text == "q"
        assert d.get_screenshot_as_png()[:4] == b"\x89PNG"
        assert d.find_element(By.ID, "go").screenshot_as_png[:4] == b"\x89PNG"
        assert "<title>classic</title>" in d.page_source
        t = d.timeouts
        t.implicit_wait = 1
        d.timeouts = t
        assert d.timeouts.implicit_wait == 1
    check("actions, screenshots, source, timeouts", actions_and_screens)
finally:
    d.quit()

print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
