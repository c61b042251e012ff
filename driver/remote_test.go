package driver_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wdext/wdext/driver"
	"gotest.tools/v3/assert"
)

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

func TestRemote(t *testing.T) {
	var notReady atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `{"value":{"ready":%v}}`, !notReady.Load())
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	r := driver.Remote{URL: u}
	assert.Assert(t, !r.Managed())
	in, err := r.Current(ctx(t))
	assert.NilError(t, err)
	assert.Equal(t, in.URL, u)
	assert.Assert(t, in.Alive(), "a remote is assumed alive")
	assert.Assert(t, r.Ready(ctx(t)))
	notReady.Store(true)
	assert.Assert(t, !r.Ready(ctx(t)))
	srv.Close()
	assert.Assert(t, !r.Ready(ctx(t)))
	assert.NilError(t, r.Close())
}
