"""A pytest plugin for wdext's leak check: a test body as the action.

Load it from a ``conftest.py`` (with this folder on ``PYTHONPATH``)::

    pytest_plugins = ["pytest_wdext"]

Then mark a test, and its body is the action of a leak check
(``wdext.check_leaks``): the fixtures are set up once, the body runs
``warmup`` times, then ``iterations`` times between ``leaks/start`` and
``leaks/stop``, and the test fails with ``wdext.LeakError``, which lists
what grew, one group per line::

    @pytest.mark.leak_check(iterations=5, warmup=1)
    def test_dialog_does_not_leak(page):       # page: a fixture that opened the app
        page.find_element(By.ID, "open").click()
        page.find_element(By.ID, "close").click()

or ask for the ``check_leaks`` fixture, which returns the verdict::

    def test_dialog(page, check_leaks):
        report = check_leaks(lambda: page.find_element(By.ID, "open").click(), iterations=3)

Both find the session in the test's fixtures: the one named by the ini
option ``wdext_driver_fixture`` (default ``driver``), else the one fixture
whose value is a Selenium ``WebDriver``. The verdict of a marked test is
kept in its ``user_properties`` as ``wdext_leaks`` (JSON), which
``--junitxml`` writes as a property of the test case.
"""

import json

import pytest
from selenium.webdriver.remote.webdriver import WebDriver

import wdext

MARKER = "leak_check"


def pytest_addoption(parser):
    parser.addini("wdext_driver_fixture", "the fixture that gives the WebDriver session of a leak check", default="driver")


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        f"{MARKER}(iterations=5, warmup=1): run the test body as the action of a wdext leak check, "
        "and fail the test when the verdict names a leak",
    )


def _driver(fixtures, config):
    """The test's WebDriver session among its fixture values."""
    name = config.getini("wdext_driver_fixture")
    if isinstance(fixtures.get(name), WebDriver):
        return fixtures[name]
    drivers = {k: v for k, v in fixtures.items() if isinstance(v, WebDriver)}
    if len(drivers) == 1:
        return next(iter(drivers.values()))
    found = ", ".join(sorted(drivers)) or "none"
    pytest.fail(
        f"a wdext leak check needs the test's WebDriver session: use a fixture named {name!r} "
        f"(or set wdext_driver_fixture in the ini file); WebDriver fixtures found: {found}",
        pytrace=False,
    )


def _options(mark):
    """The marker's iterations and warmup, checked."""
    if mark.args:
        pytest.fail(f"@pytest.mark.{MARKER} takes keywords only: iterations=N, warmup=N", pytrace=False)
    opts = {"iterations": 5, "warmup": 1}
    for k, v in mark.kwargs.items():
        if k not in opts:
            pytest.fail(f"@pytest.mark.{MARKER} has no option {k!r} (it takes iterations and warmup)", pytrace=False)
        opts[k] = v
    if not isinstance(opts["iterations"], int) or opts["iterations"] < 1 or not isinstance(opts["warmup"], int) or opts["warmup"] < 0:
        pytest.fail(f"@pytest.mark.{MARKER} needs iterations >= 1 and warmup >= 0, not {opts['iterations']!r} and {opts['warmup']!r}", pytrace=False)
    return opts


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    """Checks a marked test's marker before its fixtures open a browser."""
    mark = item.get_closest_marker(MARKER)
    if mark is not None:
        _options(mark)


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem):
    """Runs a marked test's body as the action of a leak check."""
    mark = pyfuncitem.get_closest_marker(MARKER)
    if mark is None:
        return None
    opts = _options(mark)
    driver = _driver(pyfuncitem.funcargs, pyfuncitem.config)
    args = {name: pyfuncitem.funcargs[name] for name in pyfuncitem._fixtureinfo.argnames}
    try:
        report = wdext.check_leaks(driver, lambda: pyfuncitem.obj(**args), **opts)
    except wdext.LeakError as e:
        pyfuncitem.user_properties.append(("wdext_leaks", json.dumps(e.report)))
        raise
    pyfuncitem.user_properties.append(("wdext_leaks", json.dumps(report)))
    return True


@pytest.fixture
def check_leaks(request):
    """check_leaks(action, iterations=5, warmup=1): wdext.check_leaks on the
    test's WebDriver session; returns the verdict, raises wdext.LeakError
    when it names a leak."""
    fixtures = {n: request.getfixturevalue(n) for n in request.fixturenames if n not in ("check_leaks", "request")}
    driver = _driver(fixtures, request.config)

    def check(action, iterations=5, warmup=1):
        return wdext.check_leaks(driver, action, iterations=iterations, warmup=warmup)

    return check
