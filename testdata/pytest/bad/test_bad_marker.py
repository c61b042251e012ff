"""A marker with an option the plugin does not have: the test fails, naming it."""
import pytest


@pytest.mark.leak_check(iterations=2, repeat=3)
def test_bad_marker(page):
    pass
