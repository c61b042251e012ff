package webdriver

import (
	"bufio"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"
)

// logged writes one debug line per command: method, path, status,
// duration and session.
func (s *Server) logged(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.cfg.Log.Enabled(r.Context(), slog.LevelDebug) {
			next.ServeHTTP(w, r) // nothing to note: skip the bookkeeping
			return
		}
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w}
		next.ServeHTTP(rec, r)
		s.cfg.Log.Debug("command",
			"method", r.Method, "path", r.URL.Path, "status", rec.status,
			"duration", time.Since(start), "session", sessionOf(r.URL.Path))
	})
}

func sessionOf(path string) string {
	rest, ok := strings.CutPrefix(path, "/session/")
	if !ok {
		return ""
	}
	id, _, _ := strings.Cut(rest, "/")
	return id
}

// statusRecorder notes the status; Unwrap lets http.ResponseController
// reach Flush and Hijack (streaming, websockets) on the real writer.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(p []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.ResponseWriter.Write(p)
}

func (r *statusRecorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// Hijack hands the connection over (BiDi websockets).
func (r *statusRecorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	r.status = http.StatusSwitchingProtocols
	return http.NewResponseController(r.ResponseWriter).Hijack()
}
