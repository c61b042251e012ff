package wpt

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// response is a file or wrapper response being built, before pipes have
// had their say and before it is written.
type response struct {
	status int // 0 means 200
	header http.Header
	body   []byte
	// file, if set, is the body instead of body: a regular file of size
	// bytes, not read yet. It streams when written (Range and HEAD read
	// only what they send) unless something must rewrite it (load).
	file *os.File
	size int64
}

// load reads a file body into memory, for what rewrites it; a file larger
// than maxBuffered is an error.
func (resp *response) load() error {
	if resp.file == nil {
		return nil
	}
	f := resp.file
	resp.file = nil
	defer f.Close()
	body, err := readLimited(f, resp.size, maxBuffered, filepath.Base(f.Name()))
	if err != nil {
		return err
	}
	resp.body = body
	return nil
}

// close releases a file body that was not written.
func (resp *response) close() {
	if resp != nil && resp.file != nil {
		resp.file.Close()
		resp.file = nil
	}
}

// pipeCall is one function of a pipe= query value, e.g. header(A,b).
type pipeCall struct {
	name string
	args []string
}

// parsePipes splits "sub|header(Name,Value)|status(404)" like wptserve's
// PipeTokenizer: arguments end at "," or ")", and a backslash escapes the
// next character (\n, \r and \t mean control characters).
func parsePipes(s string) ([]pipeCall, error) {
	var calls []pipeCall
	var cur strings.Builder
	inArgs := false
	flushName := func() {
		if cur.Len() > 0 {
			calls = append(calls, pipeCall{name: cur.String()})
		}
		cur.Reset()
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case inArgs && c == '\\' && i+1 < len(s):
			i++
			switch s[i] {
			case 'n':
				cur.WriteByte('\n')
			case 'r':
				cur.WriteByte('\r')
			case 't':
				cur.WriteByte('\t')
			default:
				cur.WriteByte(s[i])
			}
		case inArgs && (c == ',' || c == ')'):
			calls[len(calls)-1].args = append(calls[len(calls)-1].args, cur.String())
			cur.Reset()
			inArgs = c == ','
		case inArgs:
			cur.WriteByte(c)
		case c == '(':
			if cur.Len() == 0 {
				return nil, fmt.Errorf("pipe arguments without a function in %q", s)
			}
			flushName()
			inArgs = true
		case c == '|':
			flushName()
		default:
			cur.WriteByte(c)
		}
	}
	if inArgs {
		calls[len(calls)-1].args = append(calls[len(calls)-1].args, cur.String())
	} else {
		flushName()
	}
	return calls, nil
}

// applyPipes runs the pipe functions left to right over resp.
func applyPipes(calls []pipeCall, resp *response, st *site, r *http.Request) error {
	for _, c := range calls {
		if err := c.apply(resp, st, r); err != nil {
			return fmt.Errorf("pipe %s: %w", c.name, err)
		}
	}
	return nil
}

func (c pipeCall) apply(resp *response, st *site, r *http.Request) error {
	switch c.name {
	case "sub":
		if len(c.args) > 1 {
			return fmt.Errorf("takes at most 1 argument")
		}
		escape := "html" // the pipe's historical default
		if len(c.args) == 1 {
			escape = c.args[0]
		}
		if escape != "html" && escape != "none" {
			return fmt.Errorf("unknown escape type %q", escape)
		}
		if err := resp.load(); err != nil {
			return err
		}
		body, err := st.expand(r, resp.body, escape == "html")
		resp.body = body
		return err
	case "header":
		if len(c.args) < 2 || len(c.args) > 3 {
			return fmt.Errorf("takes 2 or 3 arguments")
		}
		name, value := strings.TrimSpace(c.args[0]), strings.TrimSpace(c.args[1])
		appendIt := false
		if len(c.args) == 3 {
			switch strings.ToLower(c.args[2]) {
			case "true", "1":
				appendIt = true
			case "false", "0":
			default:
				return fmt.Errorf("append must be true or false, got %q", c.args[2])
			}
		}
		if appendIt {
			resp.header.Add(name, value)
		} else {
			resp.header.Set(name, value)
		}
		return nil
	case "status":
		if len(c.args) != 1 {
			return fmt.Errorf("takes 1 argument")
		}
		code, err := strconv.Atoi(strings.TrimSpace(c.args[0]))
		if err != nil || code < 100 || code > 999 {
			return fmt.Errorf("bad status %q", c.args[0])
		}
		if code < 200 {
			// wptserve would send it, but a 1xx is informational: the
			// client waits for a final answer that never comes (a 101
			// left it hanging). A 500, as for any bad pipe.
			return fmt.Errorf("status %d is informational (1xx), not an answer: want 200 to 999", code)
		}
		resp.status = code
		return nil
	}
	return fmt.Errorf("unknown pipe (supported: sub, header, status)")
}

// parseQuery is wptserve's query parsing: pairs split on "&" only (so ";"
// survives, which net/url would reject), "+" means space and bad percent
// escapes are kept as they are. Empty values are dropped unless keepBlank.
func parseQuery(raw string, keepBlank bool) map[string][]string {
	out := map[string][]string{}
	for item := range strings.SplitSeq(raw, "&") {
		if item == "" {
			continue
		}
		name, value, ok := strings.Cut(item, "=")
		if !keepBlank && (!ok || value == "") {
			continue
		}
		name, value = unquotePlus(name), unquotePlus(value)
		out[name] = append(out[name], value)
	}
	return out
}

// unquotePlus decodes like Python's unquote_plus: %XX escapes that are
// well formed are decoded and everything else is left alone.
func unquotePlus(s string) string {
	s = strings.ReplaceAll(s, "+", " ")
	if !strings.Contains(s, "%") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			n, _ := strconv.ParseUint(s[i+1:i+3], 16, 8)
			b.WriteByte(byte(n))
			i += 2
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c|0x20 && c|0x20 <= 'f'
}
