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
)

// ReadBody reads a request body, turning an over-limit body (see
// Guard.MaxBody) into "invalid argument".
func ReadBody(r *http.Request) ([]byte, error) {
	if r.Body == nil {
		return nil, nil
	}
	body, err := io.ReadAll(r.Body)
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return nil, Errorf(InvalidArgument, "request body exceeds the limit of %d bytes (see --max-body)", tooBig.Limit)
	}
	if err != nil {
		return nil, Errorf(InvalidArgument, "reading request body: %v", err)
	}
	return body, nil
}

// DecodeArgs decodes a command's JSON parameters into v. An empty body is
// the same as {} (clients differ); anything that is not a JSON object, or
// whose members have the wrong types, is "invalid argument".
func DecodeArgs(body []byte, v any) error {
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return nil
	}
	if body[0] != '{' {
		return Errorf(InvalidArgument, "parameters must be a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return Errorf(InvalidArgument, "parameter %q: expected %s, got JSON %s", te.Field, te.Type, te.Value)
		}
		return Errorf(InvalidArgument, "malformed JSON parameters: %v", err)
	}
	if dec.More() {
		return Errorf(InvalidArgument, "malformed JSON parameters: trailing data")
	}
	if _, err := dec.Token(); err != io.EOF {
		return Errorf(InvalidArgument, "malformed JSON parameters: trailing data")
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
		return nil, Errorf(InvalidArgument, "malformed JSON: %v", err)
	}
	if m == nil {
		return nil, Errorf(InvalidArgument, "parameters must be a JSON object")
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, Errorf(InvalidArgument, "malformed JSON: trailing data")
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
		return Errorf(InvalidArgument, "unknown parameter %q (the command takes %s)", unknown[0], want)
	}
	return DecodeArgs(body, v)
}
