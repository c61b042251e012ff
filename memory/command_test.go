package memory

import (
	"errors"
	"testing"
	"time"

	"github.com/wdext/wdext/wire"
	"gotest.tools/v3/assert"
)

func TestParseMeasureArgs(t *testing.T) {
	for _, c := range []struct {
		body string
		want MeasureArgs
	}{
		{``, MeasureArgs{Timeout: DefaultTimeout}},
		{`{}`, MeasureArgs{Timeout: DefaultTimeout}},
		{`{"source": "api"}`, MeasureArgs{Source: wire.SourceAPI, Timeout: DefaultTimeout}},
		{`{"source": "engine", "timeout": 250}`, MeasureArgs{Source: wire.SourceEngine, Timeout: 250 * time.Millisecond}},
		{`{"source": null, "timeout": null}`, MeasureArgs{Timeout: DefaultTimeout}},
		{`{"timeout": 0}`, MeasureArgs{}},
		{`{"timeout": 1e3}`, MeasureArgs{Timeout: time.Second}},
		{`{"timeout": 9007199254740991}`, MeasureArgs{Timeout: 100 * 365 * 24 * time.Hour}},
		// Unknown members are ignored: Python's Selenium adds sessionId.
		{`{"sessionId": "x", "source": "engine"}`, MeasureArgs{Source: wire.SourceEngine, Timeout: DefaultTimeout}},
	} {
		got, err := ParseMeasureArgs([]byte(c.body))
		assert.NilError(t, err, c.body)
		assert.Equal(t, got, c.want, c.body)
	}
	for _, body := range []string{
		`{"source": "heap"}`, `{"source": "API"}`, `{"source": ""}`, `{"source": 1}`, `{"source": true}`,
		`{"timeout": -1}`, `{"timeout": 0.5}`, `{"timeout": "10"}`, `{"timeout": 9007199254740992}`, `{"timeout": {}}`,
		`[]`, `null`, `"api"`, `{"source": "api"`, `{} {}`,
	} {
		_, err := ParseMeasureArgs([]byte(body))
		assertInvalid(t, err, body)
	}
}

func TestParseGCArgs(t *testing.T) {
	got, err := ParseGCArgs(nil)
	assert.NilError(t, err)
	assert.Equal(t, got, GCArgs{Timeout: DefaultTimeout})
	got, err = ParseGCArgs([]byte(`{"timeout": 1500}`))
	assert.NilError(t, err)
	assert.Equal(t, got, GCArgs{Timeout: 1500 * time.Millisecond})
	for _, body := range []string{`{"timeout": -1}`, `{"source": "engine"}`, `[]`} {
		_, err := ParseGCArgs([]byte(body))
		assertInvalid(t, err, body)
	}
	// The error names what gc takes, not measure's parameters.
	_, err = ParseGCArgs([]byte(`{"force": true}`))
	assert.ErrorContains(t, err, `unknown parameter "force" (the command takes parameters timeout)`)
}

func assertInvalid(t *testing.T, err error, body string) {
	t.Helper()
	var we *wire.Error
	assert.Assert(t, errors.As(err, &we), "%s: %v", body, err)
	assert.Equal(t, we.Code, wire.InvalidArgument, body)
}
