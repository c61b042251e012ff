"""Leak checks as a pytest user writes them, with Selenium element
commands on testdata/leaks/driver.html: "render" draws the list anew (the
rows a test looked up are detached, and only chromedriver holds them),
"leak" also keeps a detached div a click."""
import pytest
from selenium.webdriver.common.by import By

import wdext


def render(page):
    page.find_element(By.ID, "render").click()
    rows = page.find_elements(By.CSS_SELECTOR, "li.row")
    assert len(rows) == 20
    assert rows[0].text.startswith("row ")


@pytest.mark.leak_check(iterations=3)
def test_marked_render_does_not_leak(page):
    render(page)


@pytest.mark.xfail(raises=wdext.LeakError, strict=True, reason="the page keeps a detached div a click")
@pytest.mark.leak_check(iterations=3)
def test_marked_leak_fails(page):
    page.find_element(By.ID, "leak").click()


def test_fixture(page, check_leaks):
    assert check_leaks(lambda: render(page), iterations=3)["leaks"] == []
    with pytest.raises(wdext.LeakError) as e:
        check_leaks(lambda: page.find_element(By.ID, "leak").click(), iterations=4)
    assert "detached-dom HTMLDivElement div.kept: +1 per iteration (4 in all)" in str(e.value), str(e.value)
    assert [(g["kind"], g["countDelta"]) for g in e.value.report["leaks"]] == [("detached-dom", 4)]

