"""Drives a real browser through wdext.py: python3 test_wdext.py WDEXT_URL PAGE_URL

WDEXT_URL is a wdext server (or a Grid in front of wdext nodes), PAGE_URL
testdata/readme/app.html served with Document-Policy: js-profiling (wdext's
Go test cmd/wdext TestClientPython runs it so). Prints one line per check
and "N passed, N failed"; exits non-zero on a failure.
"""
import os
import sys
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from selenium import webdriver  # noqa: E402
from selenium.common.exceptions import InvalidArgumentException  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402

import wdext  # noqa: E402


def check_force_sample(driver):
    driver.execute_script("window.profiler = new Profiler({sampleInterval: 600000, maxBufferSize: 100})")
    t0 = driver.execute_script("return performance.now()")
    assert wdext.force_sample(driver) is None
    wdext.force_sample(driver)
    wdext.force_sample(driver)
    t1 = driver.execute_script("return performance.now()")
    samples = driver.execute_async_script("profiler.stop().then(trace => arguments[0](trace.samples))")
    forced = sum(t0 < s["timestamp"] < t1 for s in samples)
    assert forced == 3, f"{forced} samples between the marks, want 3: {samples}"


def check_measure(driver):
    m = wdext.measure_memory(driver, source="engine", timeout=30)
    assert m["bytes"] > 0 and isinstance(m["breakdown"], list), m
    urls = {a["url"] for b in m["breakdown"] for a in b["attribution"]}
    assert any(u.endswith("/worker.js") for u in urls), urls


def check_bad_argument(driver):
    try:
        wdext.measure_memory(driver, source="nonsense")
    except InvalidArgumentException as e:
        assert "source" in e.msg, e.msg
    else:
        raise AssertionError("source nonsense was accepted")


def check_gc(driver):
    r = wdext.collect_garbage(driver)
    types = sorted(t["type"] for t in r["targets"])
    assert types == ["iframe", "page", "worker"], r


def check_census(driver):
    c = wdext.take_census(driver, {"by": "objectClass"})
    assert c["Foo"] == {"count": 1000, "bytes": 16000}, c.get("Foo")


def check_live_objects(driver):
    wdext.start_live_objects(driver)
    # With a large array, which V8 never moves, so that it keeps its
    # allocation stack whatever the GCs do (small objects can lose theirs).
    driver.execute_script("class Bar {}; window.bars = [Array.from({length: 10}, () => new Bar()), new Array(100000).fill(1)]")
    r = wdext.stop_live_objects(driver)
    # What V8's allocation tracker attributes varies (see wdext's own
    # engine tests): here, that the command answered in its shape.
    assert isinstance(r["liveObjects"], list) and r["count"] > 0, r


def check_allocations(driver):
    s = wdext.set_allocations(driver, tracking=True, probability=1)
    assert s["trackingAllocationSites"] is True, s
    driver.execute_script("window.big = Array.from({length: 1000}, (_, i) => ({i}))")
    log = wdext.drain_allocations(driver)
    assert isinstance(log["log"], list) and len(log["log"]) > 0, log
    wdext.set_allocations(driver, tracking=False)


def check_leaks(driver):
    try:
        wdext.leak_stop(driver, 3)
    except InvalidArgumentException as e:
        assert "leaks/start" in e.msg, e.msg
    else:
        raise AssertionError("leak_stop before leak_start was accepted")
    assert wdext.leak_start(driver) is None
    for _ in range(3):
        driver.execute_script("(window.kept = window.kept || []).push({leak: 1}, {leak: 2})")
    r = wdext.leak_stop(driver, 3)
    assert r["iterations"] == 3, r
    kept = [l for l in r["leaks"] if l["kind"] == "objects" and "kept (property)" in l["retainerPath"]]
    assert kept and kept[0]["countDelta"] == 6 and kept[0]["perIteration"] == 2, r


# Two buttons: a re-render that leaks nothing, and one that also keeps a
# detached div a click.
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "testdata", "leak-buttons.js")) as f:
    BUTTONS = f.read()


def check_check_leaks(driver):
    driver.execute_script(BUTTONS)

    def click(button):
        driver.find_element(By.CSS_SELECTOR, button).click()
        rows = driver.find_elements(By.CSS_SELECTOR, "#rows li")
        assert len(rows) == 20 and rows[0].text == "row 0", rows

    r = wdext.check_leaks(driver, lambda: click("#render"), iterations=3)
    assert r["leaks"] == [], r
    try:
        wdext.check_leaks(driver, lambda: click("#leak"), iterations=3)
    except wdext.LeakError as e:
        groups = [(g["kind"], g["name"], g["perIteration"]) for g in e.report["leaks"]]
        assert groups == [("detached-dom", "HTMLDivElement div.kept", 1)], e
        assert "\n  detached-dom HTMLDivElement div.kept: +1 per iteration" in str(e), e
    else:
        raise AssertionError("a detached div kept per click was no leak")


def check_gc_log(driver):
    assert wdext.start_gc_log(driver)["collecting"] is True
    wdext.collect_garbage(driver)
    log = wdext.gc_log(driver)
    assert isinstance(log["entries"], list), log
    assert wdext.stop_gc_log(driver)["collecting"] is False


def main():
    server, page = sys.argv[1], sys.argv[2]
    driver = webdriver.Remote(server, options=webdriver.ChromeOptions())
    passed = failed = 0
    try:
        driver.get(page)
        assert driver.execute_async_script("ready.then(arguments[0])") is True
        for check in (check_force_sample, check_measure, check_bad_argument, check_gc,
                      check_census, check_live_objects, check_allocations, check_gc_log,
                      check_leaks, check_check_leaks):
            try:
                check(driver)
                print("ok", check.__name__)
                passed += 1
            except Exception:
                print("FAIL", check.__name__)
                traceback.print_exc()
                failed += 1
    finally:
        driver.quit()
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
