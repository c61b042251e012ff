package wire

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
)

// maxReply bounds a reply Call reads: it stops a broken peer, not a large
// answer (a drained allocation log of a million entries is ~200 MB).
const maxReply = 1 << 30

// Call sends one WebDriver command: method url with params (marshalled,
// or sent as is when a []byte) and decodes the reply's value into value
// unless it is nil. A W3C error reply comes back as a *Error; a failure to
// reach the remote end as the transport's error, wrapped in a
// *TransportError.
//
// It is the one WebDriver client of the project: wdext's own calls to
// drivers (driver.SessionClient) and its client library (wdclient) both
// send commands through it.
func Call(ctx context.Context, hc *http.Client, method, url string, params, value any) error {
	var body io.Reader
	switch p := params.(type) {
	case nil:
	case []byte:
		body = bytes.NewReader(p)
	default:
		b, err := json.Marshal(params)
		if err != nil {
			return fmt.Errorf("%s %s: encoding parameters: %w", method, url, err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, body)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", ContentType)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return &TransportError{Err: err}
	}
	defer resp.Body.Close()
	reply, err := io.ReadAll(io.LimitReader(resp.Body, maxReply+1))
	if err != nil {
		return &TransportError{Err: fmt.Errorf("reading the reply: %w", err)}
	}
	if len(reply) > maxReply {
		return fmt.Errorf("%s %s: the reply exceeds %d bytes", method, url, maxReply)
	}
	if resp.StatusCode != http.StatusOK {
		if we, ok := ParseError(reply); ok {
			return we
		}
		return fmt.Errorf("%s %s: %s: %.200s", method, url, resp.Status, reply)
	}
	if value == nil {
		return nil
	}
	var v struct {
		Value json.RawMessage `json:"value"`
	}
	if err := json.Unmarshal(reply, &v); err != nil {
		return fmt.Errorf("%s %s: the reply is not JSON: %w", method, url, err)
	}
	if err := json.Unmarshal(v.Value, value); err != nil {
		return fmt.Errorf("%s %s: decoding the reply's value %.200s: %w", method, url, v.Value, err)
	}
	return nil
}

// TransportError is Call's failure to reach the remote end or read its
// reply.
type TransportError struct{ Err error }

func (e *TransportError) Error() string { return e.Err.Error() }
func (e *TransportError) Unwrap() error { return e.Err }
