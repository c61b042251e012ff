// Package session owns wdext's view of live WebDriver sessions: which
// upstream driver holds each one, what its new-session reply said
// (browserName, capabilities, the BiDi webSocketUrl before wdext rewrote
// it), when it was last used, and the per-session resources extensions
// keep (the session's engine, command state) that must be closed when the
// session ends. It knows no engine: an engine is one such resource
// (package engine).
//
// The registry also keeps wdext's session limit (wdext serve
// --max-sessions): Reserve holds a slot for a session while it is being
// created, so that concurrent New Session requests never exceed it.
package session
