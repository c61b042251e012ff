package webdriver

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"sort"
	"strings"

	"github.com/wdext/wdext/wire"
)

// ReadBody reads a request body. A body the Guard read in is handed over
// as it is, without a copy; an over-limit, stalled or unreadable body is
// "invalid argument" (see Guard).
func ReadBody(r *http.Request) ([]byte, error) {
	if r.Body == nil {
		return nil, nil
	}
	if b, ok := r.Body.(*body); ok {
		p, err := b.bytes(r.Context())
		if err != nil {
			return nil, bodyError(err, b.wait)
		}
		return p, nil
	}
	var p []byte
	var err error
	if n := r.ContentLength; n > 0 && n <= maxSizedRead {
		// A length known, from the client or from the Guard: read into
		// a buffer of that size, rather than grow one.
		p = make([]byte, n)
		_, err = io.ReadFull(r.Body, p)
		if err == nil {
			var probe [1]byte
			if m, _ := r.Body.Read(probe[:]); m > 0 {
				err = errors.New("body longer than its Content-Length")
			}
		}
	} else {
		p, err = io.ReadAll(r.Body)
	}
	if err != nil {
		return nil, bodyError(err, 0)
	}
	return p, nil
}

// maxSizedRead bounds the length ReadBody trusts for an allocation up
// front: a larger claim is read as a body of unknown length.
const maxSizedRead = 1 << 30

// DecodeArgs decodes a command's JSON parameters into v. An empty body is
// the same as {} (clients differ); anything that is not a JSON object, or
// whose members have the wrong types, is "invalid argument".
func DecodeArgs(body []byte, v any) error {
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return nil
	}
	if body[0] != '{' {
		return wire.Errorf(wire.InvalidArgument, "parameters must be a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return wire.Errorf(wire.InvalidArgument, "parameter %q: expected %s, got JSON %s", te.Field, te.Type, te.Value)
		}
		return wire.Errorf(wire.InvalidArgument, "malformed JSON parameters: %v", err)
	}
	if dec.More() {
		return wire.Errorf(wire.InvalidArgument, "malformed JSON parameters: trailing data")
	}
	if _, err := dec.Token(); err != io.EOF {
		return wire.Errorf(wire.InvalidArgument, "malformed JSON parameters: trailing data")
	}
	return nil
}

// decodeObject decodes a JSON object keeping numbers exactly as sent, so
// that re-encoding it changes nothing the client wrote.
func decodeObject(body []byte) (map[string]any, error) {
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		return nil, wire.Errorf(wire.InvalidArgument, "malformed JSON: %v", err)
	}
	if m == nil {
		return nil, wire.Errorf(wire.InvalidArgument, "parameters must be a JSON object")
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, wire.Errorf(wire.InvalidArgument, "malformed JSON: trailing data")
	}
	return m, nil
}

// DecodeParams is the one policy of wdext's extension commands for their
// parameters: DecodeArgs, and a member other than known is "invalid
// argument", so that a misspelt option is an error rather than silently
// ignored. The exception is "sessionId", which Selenium clients (the
// Python one, and the older JSON-wire ones) put into every command's
// parameters.
func DecodeParams(body []byte, v any, known ...string) error {
	var members map[string]json.RawMessage
	if err := DecodeArgs(body, &members); err != nil {
		return err
	}
	var unknown []string
	for k := range members {
		if k != "sessionId" && !slices.Contains(known, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		want := "no parameters"
		if len(known) > 0 {
			want = "parameters " + strings.Join(known, ", ")
		}
		return wire.Errorf(wire.InvalidArgument, "unknown parameter %q (the command takes %s)", unknown[0], want)
	}
	return DecodeArgs(body, v)
}
