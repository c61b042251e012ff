// Package e2e starts what end-to-end tests need against real Chromium: a
// managed chromedriver behind a wdext server, two-origin page servers for
// testdata, and Selenium sessions through wdext, all cleaned up when the
// test ends (browsers included: a test can count what is left).
// FakeEngineServer is its one stand-in: wdext in front of a fake driver
// with a fake engine, for the error paths a real browser cannot be made to
// take.
package e2e
