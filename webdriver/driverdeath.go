package webdriver

import (
	"sync"

	"github.com/wdext/wdext/driver"
)

// driverDeaths tells, at error level, of a managed driver process that
// exits while it holds sessions: every one of them is lost, and a client
// learns it only at its next command.
type driverDeaths struct {
	mu      sync.Mutex
	watched map[<-chan struct{}]bool // by Instance.Done
	stop    chan struct{}            // closed by Shutdown: wdext ends them itself
	stopped bool
}

// watchDriver watches the process of in, once, until it exits or the
// server shuts down. An unmanaged instance (no Done) is not watched.
func (s *Server) watchDriver(in *driver.Instance) {
	if in.Done == nil {
		return
	}
	d := &s.deaths
	d.mu.Lock()
	if d.stopped || d.watched[in.Done] {
		d.mu.Unlock()
		return
	}
	if d.watched == nil {
		d.watched, d.stop = map[<-chan struct{}]bool{}, make(chan struct{})
	}
	d.watched[in.Done] = true
	stop := d.stop
	d.mu.Unlock()
	go func() { // owned by the server: ends when the driver exits, or at Shutdown
		select {
		case <-in.Done:
		case <-stop:
			return
		}
		d.mu.Lock()
		delete(d.watched, in.Done)
		d.mu.Unlock()
		var lost []string
		for _, sess := range s.cfg.Sessions.All() {
			if sess.Gone == in.Done {
				lost = append(lost, sess.ID)
			}
		}
		if len(lost) > 0 {
			s.cfg.Log.Error("driver process exited: its sessions are lost", "upstream", in.URL.Redacted(), "sessions", lost)
		} else {
			s.cfg.Log.Debug("driver process exited", "upstream", in.URL.Redacted())
		}
	}()
}

// stopWatching ends the watches: from now on wdext ends the drivers
// itself.
func (d *driverDeaths) stopWatching() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.stopped && d.stop != nil {
		close(d.stop)
	}
	d.stopped = true
}
