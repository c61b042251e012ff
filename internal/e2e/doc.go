// Package e2e holds what end-to-end tests share whatever the browser: a
// wdext server in front of an upstream (Serve), page servers on four
// origins for testdata, Selenium and raw sessions through wdext, process
// counting, all cleaned up when the test ends. Each engine's test package
// (engine/chromium/chromiumtest, engine/webkitgtk/webkitgtktest) starts its
// browser on top of it. FakeEngineServer is its one stand-in: wdext in
// front of a fake driver with a fake engine, for the error paths a real
// browser cannot be made to take.
//
// Every test that needs a browser starts with its engine's Require check
// (Require here): it skips under -short (make race runs the unit tests
// that way) and when the browser is missing, unless WDEXT_REQUIRE_BROWSER
// is set (make test), where a missing browser fails the test.
package e2e
