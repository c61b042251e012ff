"""The pytest plugin's end-to-end suite (cmd/wdext TestClientPytest): a
session of the wdext server at $WDEXT_URL on the page $WDEXT_PAGE
(testdata/leaks/driver.html), the way a project's conftest.py sets one up."""
import os

import pytest
from selenium import webdriver

pytest_plugins = ["pytest_wdext"]


@pytest.fixture
def driver():
    d = webdriver.Remote(os.environ["WDEXT_URL"], options=webdriver.ChromeOptions())
    yield d
    d.quit()


@pytest.fixture
def page(driver):
    driver.get(os.environ["WDEXT_PAGE"])
    return driver
