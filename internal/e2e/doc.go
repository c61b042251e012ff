// Package e2e starts what end-to-end tests need against real Chromium: a
// managed chromedriver behind a wdext server, two-origin page servers for
// testdata, and Selenium sessions through wdext, all cleaned up when the
// test ends (browsers included: a test can count what is left).
package e2e
