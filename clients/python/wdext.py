"""wdext's extension commands for Selenium's Python client.

One call each, on the ``webdriver.Remote`` session of a wdext server (or of a
Selenium Grid whose nodes relay to wdext)::

    import wdext
    driver = webdriver.Remote("http://127.0.0.1:4444", options=webdriver.ChromeOptions())
    wdext.force_sample(driver)
    m = wdext.measure_memory(driver, source="engine")   # {"bytes": ..., "breakdown": [...]}

Each function registers its command with the driver's command executor (the
way Selenium's own Chromium driver adds its vendor commands) and runs it
with ``driver.execute``: parameters are sent as JSON
(``application/json;charset=UTF-8``, which a Grid requires), and a W3C error
raises Selenium's own exception for its code (``InvalidArgumentException``,
``UnknownMethodException`` for "unsupported operation", ...).

Checked with Debian's python3-selenium 4.8; nothing but selenium is needed.
Add it to a project by copying this file, or putting its folder on
``PYTHONPATH``. The commands are documented in wdext's docs/memory.md and docs/forcesample.md.
"""

__all__ = [
    "force_sample",
    "measure_memory",
    "collect_garbage",
    "take_census",
    "set_allocations",
    "drain_allocations",
    "start_gc_log",
    "stop_gc_log",
    "gc_log",
    "start_live_objects",
    "stop_live_objects",
    "leak_start",
    "leak_stop",
    "leak_iteration",
    "check_leaks",
    "LeakError",
    "COMMANDS",
]

# name -> (HTTP method, path): the extension commands wdext serves.
COMMANDS = {
    "wdext:forceSample": ("POST", "/session/$sessionId/forcesample"),
    "wdext:measureMemory": ("POST", "/session/$sessionId/wdext/memory/measure"),
    "wdext:collectGarbage": ("POST", "/session/$sessionId/wdext/memory/gc"),
    "wdext:takeCensus": ("POST", "/session/$sessionId/wdext/memory/census"),
    "wdext:setAllocations": ("POST", "/session/$sessionId/wdext/memory/allocations"),
    "wdext:drainAllocations": ("POST", "/session/$sessionId/wdext/memory/allocations/drain"),
    "wdext:collectGCLog": ("POST", "/session/$sessionId/wdext/memory/gc-log"),
    "wdext:gcLog": ("GET", "/session/$sessionId/wdext/memory/gc-log"),
    "wdext:startLiveObjects": ("POST", "/session/$sessionId/wdext/memory/live-objects/start"),
    "wdext:stopLiveObjects": ("POST", "/session/$sessionId/wdext/memory/live-objects/stop"),
    "wdext:leakStart": ("POST", "/session/$sessionId/wdext/memory/leaks/start"),
    "wdext:leakStop": ("POST", "/session/$sessionId/wdext/memory/leaks/stop"),
    "wdext:leakIteration": ("POST", "/session/$sessionId/wdext/memory/leaks/iteration"),
}


def _execute(driver, name, params=None):
    executor = driver.command_executor
    method, path = COMMANDS[name]
    if hasattr(executor, "add_command"):  # Selenium >= 4.x that has it
        executor.add_command(name, method, path)
    else:  # Selenium 4.8: the table its own Chromium connection extends
        executor._commands[name] = (method, path)
    # A dict, even empty: a POST carries a JSON object.
    return driver.execute(name, dict(params or {}))["value"]


def _ms(timeout):
    """A timeout in seconds (a number or a timedelta) as whole milliseconds."""
    if timeout is None:
        return None
    seconds = timeout.total_seconds() if hasattr(timeout, "total_seconds") else float(timeout)
    return max(1, int(round(seconds * 1000)))


def _some(**kw):
    return {k: v for k, v in kw.items() if v is not None}


def force_sample(driver):
    """Every started Profiler of the session takes one sample (JS
    Self-Profiling "Force Sample"). Returns None."""
    return _execute(driver, "wdext:forceSample")


def measure_memory(driver, source=None, timeout=None):
    """Measures the memory of the current top-level browsing context: a
    MemoryMeasurement dict (``bytes``, ``breakdown``). source: "api",
    "engine" or None (wdext's default); timeout in seconds."""
    return _execute(driver, "wdext:measureMemory", _some(source=source, timeout=_ms(timeout)))


def collect_garbage(driver, timeout=None):
    """A full GC in every isolate of the page, its out-of-process frames and
    workers: ``{"targets": [{"type", "url", "usedBefore", "usedAfter"}]}``."""
    return _execute(driver, "wdext:collectGarbage", _some(timeout=_ms(timeout)))


def take_census(driver, breakdown=None, targets=None):
    """A Debugger.Memory-style census of the page's heap, grouped by
    breakdown (a dict such as ``{"by": "objectClass"}``; None for the
    default). targets "all": one census per frame process and worker."""
    return _execute(driver, "wdext:takeCensus", _some(breakdown=breakdown, targets=targets))


def set_allocations(driver, tracking=None, probability=None, max_log_length=None):
    """Sets the allocation log's options (None keeps one) and returns them
    all (``trackingAllocationSites``, ``allocationSamplingProbability``,
    ``maxAllocationsLogLength``, ...)."""
    return _execute(driver, "wdext:setAllocations", _some(
        trackingAllocationSites=tracking,
        allocationSamplingProbability=probability,
        maxAllocationsLogLength=max_log_length))


def drain_allocations(driver):
    """Returns and clears the allocation log: ``{"log": [...], "overflowed"}``."""
    return _execute(driver, "wdext:drainAllocations")


def start_gc_log(driver):
    """Starts logging garbage collections (it holds the browser's tracing:
    forcesample is refused meanwhile). Returns ``{"collecting": True}``."""
    return _execute(driver, "wdext:collectGCLog", {"collect": True})


def stop_gc_log(driver):
    """Stops logging garbage collections."""
    return _execute(driver, "wdext:collectGCLog", {"collect": False})


def gc_log(driver):
    """The collections logged since the last call: ``{"collecting",
    "entries": [{"collections", "reason", ...}], "dataLossOccurred"}``."""
    return _execute(driver, "wdext:gcLog")


def start_live_objects(driver):
    """Starts recording the page's allocations."""
    return _execute(driver, "wdext:startLiveObjects")


def stop_live_objects(driver):
    """Stops recording: the objects allocated since start_live_objects and
    still alive, by creation site (``{"liveObjects": [...], ...}``)."""
    return _execute(driver, "wdext:stopLiveObjects")


def leak_start(driver, targets=None):
    """Starts a leak check of the page: a GC, a baseline heap snapshot, and
    allocation sites recorded from now on. Run the scenario N times, then
    leak_stop(driver, N). targets="all" checks each isolate of the page, its
    out-of-process frames and workers, on its own. Returns None."""
    return _execute(driver, "wdext:leakStart", _some(targets=targets))


def leak_stop(driver, iterations):
    """Ends the leak check after the scenario ran iterations times: the
    verdict ``{"iterations", "bytesBefore", "bytesAfter", "leaks": [{"kind",
    "name", "countDelta", "perIteration", "bytesDelta", "retainedBytes",
    "retainedPerIteration", "retainerPath", "createdFrom"}]}``, ``"leaks": []`` when nothing grew at every
    iteration; after targets="all", ``{"iterations", "targets": [{"type",
    "url", "targetId", "report", "error"}]}``, a verdict per isolate."""
    return _execute(driver, "wdext:leakStop", {"iterations": iterations})


def leak_iteration(driver):
    """Marks the end of an iteration of the check under way (each but the
    last, or each): where the engine can, the verdict then knows which
    iteration made each new object, and a structure re-made at every
    iteration, of which a framework keeps the last copies, is no leak at
    any N. check_leaks marks them. Returns None."""
    return _execute(driver, "wdext:leakIteration", {})


class LeakError(AssertionError):
    """A leak check whose verdict names groups that grew. ``report`` is the
    verdict; the message lists one group per line."""

    def __init__(self, report):
        self.report = report
        lines = [f"wdext: {len(report['leaks'])} leak group(s) over {report['iterations']} iterations:"]
        lines += ["  " + describe_leak(leak) for leak in report["leaks"]]
        super().__init__("\n".join(lines))


def describe_leak(leak):
    """One group of a verdict on one line: kind and name, growth, what it
    retains, retainer path and creation site."""
    s = (f"{leak['kind']} {leak['name']}: +{leak['perIteration']} per iteration "
         f"({leak['countDelta']} in all), retains {leak.get('retainedPerIteration', 0)} B per iteration")
    if leak.get("retainerPath"):
        s += "; via " + " \u2192 ".join(leak["retainerPath"])
    f = leak.get("createdFrom")
    if f:
        s += f"; created in {f['functionName'] or '(anonymous)'} {f['url']}:{f['line']}:{f['column']}"
    return s


def check_leaks(driver, action, iterations=5, warmup=1):
    """The leak check in one call: runs action() warmup times (a first run
    loads code and fills caches, which is no leak), starts a leak check of
    the current page, runs action() iterations times, marking where each
    ended (leak_iteration), and stops. Returns the
    verdict; raises LeakError (an AssertionError) when it names any group.
    When action raises, the check is stopped and the exception goes on."""
    if iterations < 1 or warmup < 0:
        raise ValueError(f"check_leaks needs iterations >= 1 and warmup >= 0, not {iterations} and {warmup}")
    for _ in range(warmup):
        action()
    leak_start(driver)
    for i in range(iterations):
        try:
            if i > 0:
                leak_iteration(driver)
            action()
        except BaseException:
            try:  # end the check: its verdict, of a scenario cut short, means nothing
                leak_stop(driver, max(i, 1))
            except Exception:
                pass
            raise
    report = leak_stop(driver, iterations)
    if report["leaks"]:
        raise LeakError(report)
    return report
