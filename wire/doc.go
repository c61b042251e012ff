// Package wire owns what wdext's clients send and get back, so that a
// client library imports it without the server or any engine: the W3C
// error model (codes, HTTP statuses, the error envelope, and writing a reply in it: WriteValue, WriteError), the extension
// commands' paths, and their parameters and results (Measure Memory's
// MemoryMeasurement, GC results, census arguments, allocation log, GC log,
// live objects, the leak check's LeakReport). Call is the one WebDriver
// command client, used by wdext to ask drivers (driver.SessionClient) and
// by webdriver/wdclient.
//
// It imports only the standard library.
package wire
