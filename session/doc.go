// Package session owns wdext's view of live WebDriver sessions: which
// upstream driver holds each one, the engine endpoints its new-session reply
// announced (CDP debuggerAddress, BiDi webSocketUrl), when it was last used,
// and the per-session resources extensions open (CDP connections, armed
// tracing) that must be closed when the session ends.
package session
