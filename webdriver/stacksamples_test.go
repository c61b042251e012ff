package webdriver_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/wdext/wdext/driver"
	"github.com/wdext/wdext/engine"
	"github.com/wdext/wdext/webdriver"
)

// wdext:stackSamples reaches the engine as NewSession.StackSamples, and
// stays in the request (drivers ignore a vendor's capability); a value
// that is not a boolean, or one in firstMatch, is "invalid argument"
// before any driver is asked.
func TestStackSamplesCapability(t *testing.T) {
	up := newFakeUpstream(t)
	var got []bool
	bind := func(_ context.Context, s engine.NewSession) (engine.Engine, error) {
		got = append(got, s.StackSamples)
		return nil, nil
	}
	srv := webdriver.NewServer(webdriver.Config{Upstream: driver.Remote{URL: up.url, Bind: bind}, Log: quietLog()})
	for _, body := range []string{
		`{"capabilities":{"alwaysMatch":{"wdext:stackSamples":true}}}`,
		`{"capabilities":{"alwaysMatch":{"wdext:stackSamples":false}}}`,
		`{"capabilities":{}}`,
	} {
		rec := serve(srv, httptest.NewRequest("POST", "/session", strings.NewReader(body)))
		assert.Equal(t, rec.Code, 200, rec.Body.String())
	}
	assert.DeepEqual(t, got, []bool{true, false, false})
	reqs := up.requests()
	assert.Check(t, is.Contains(string(reqs[0].Body), `"wdext:stackSamples":true`))

	for _, body := range []string{
		`{"capabilities":{"alwaysMatch":{"wdext:stackSamples":"yes"}}}`,
		`{"capabilities":{"firstMatch":[{"wdext:stackSamples":true}]}}`,
	} {
		rec := serve(srv, httptest.NewRequest("POST", "/session", strings.NewReader(body)))
		assert.Equal(t, rec.Code, 400, body)
		assert.Check(t, is.Contains(rec.Body.String(), `"error":"invalid argument"`))
		assert.Check(t, is.Contains(rec.Body.String(), "wdext:stackSamples"))
	}
	assert.Equal(t, len(up.requests()), len(reqs), "no driver was asked")
}
