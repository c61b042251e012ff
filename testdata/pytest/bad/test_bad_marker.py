"""Markers the plugin refuses: the test errors at setup, before its fixtures
open a session, naming what is wrong."""
import pytest


@pytest.mark.leak_check(iterations=2, repeat=3)
def test_bad_marker(page):
    pass


@pytest.mark.leak_check(iterations=0)
def test_bad_iterations(page):
    pass
