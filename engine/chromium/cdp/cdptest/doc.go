// Package cdptest is a fake Chrome DevTools endpoint for tests of CDP
// clients: /json/version names its browser websocket, and a handler the
// test gives answers each command that arrives there. No browser needed.
package cdptest
