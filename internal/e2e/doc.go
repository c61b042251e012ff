// Package e2e starts what end-to-end tests need against real Chromium: a
// managed chromedriver behind a wdext server, two-origin page servers for
// testdata, and Selenium sessions through wdext, all cleaned up when the
// test ends (browsers included: a test can count what is left).
// FakeEngineServer is its one stand-in: wdext in front of a fake driver
// with a fake engine, for the error paths a real browser cannot be made to
// take.
//
// Every test that needs a browser starts with one of its Require checks:
// it skips under -short (make race runs the unit tests that way) and
// when the browser is missing, unless WDEXT_REQUIRE_BROWSER is set (make
// test), where a missing browser fails the test.
package e2e
