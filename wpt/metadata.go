package wpt

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// parseMetadata reads the subset of WPT's metadata language (wptmanifest)
// that expectations need:
//
//	[test.html]
//	  expected: ERROR
//	  [subtest name]
//	    expected: [FAIL, PASS]
//	    expected:
//	      if os == "linux": PASS
//	      FAIL
//
// Section names are relative to dir (the URL directory of the .ini file)
// unless they start with "/". Conditional branches are skipped and the
// unconditional default is kept; keys other than expected and disabled are
// ignored.
func parseMetadata(e Expectations, r io.Reader, dir string) error {
	p := metadataParser{e: e, dir: dir}
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		if err := p.line(sc.Text()); err != nil {
			return fmt.Errorf("line %d: %w", n, err)
		}
	}
	return sc.Err()
}

type metadataParser struct {
	e   Expectations
	dir string

	test       *Expectation
	subtest    string // current subtest section, "" when at test level
	subIndent  int
	pendingKey string // key whose value is an indented conditional block
	pendingFor string // subtest the pending key belongs to ("" for the test)
	pendingInd int
}

func (p *metadataParser) line(raw string) error {
	text := strings.TrimRight(raw, " \t\r")
	trimmed := strings.TrimLeft(text, " ")
	indent := len(text) - len(trimmed)
	if trimmed == "" || trimmed[0] == '#' {
		return nil
	}
	if p.pendingKey != "" {
		if indent > p.pendingInd {
			if strings.HasPrefix(trimmed, "if ") {
				return nil // conditions are not evaluated
			}
			return p.apply(p.pendingFor, p.pendingKey, trimmed)
		}
		p.pendingKey = ""
	}
	if trimmed[0] == '[' {
		return p.heading(indent, trimmed)
	}
	key, value, ok := strings.Cut(trimmed, ":")
	if !ok {
		return fmt.Errorf("want [section] or key: value, got %q", trimmed)
	}
	key, value = strings.TrimSpace(key), strings.TrimSpace(value)
	if p.test == nil || indent == 0 {
		return nil // file-level keys: nothing in the subset
	}
	if p.subtest != "" && indent <= p.subIndent {
		p.subtest = "" // dedented back to the test's own keys
	}
	if value == "" {
		p.pendingKey, p.pendingFor, p.pendingInd = key, p.subtest, indent
		return nil
	}
	return p.apply(p.subtest, key, value)
}

func (p *metadataParser) heading(indent int, text string) error {
	name, rest, err := unescapeHeading(text[1:])
	if err != nil {
		return err
	}
	if rest = strings.TrimSpace(rest); rest != "" && rest[0] != '#' {
		return fmt.Errorf("unexpected %q after section name", rest)
	}
	switch {
	case indent == 0:
		id := name
		if !strings.HasPrefix(id, "/") {
			id = p.dir + name
		}
		if p.e[id] == nil {
			p.e[id] = &Expectation{Subtests: map[string]Expected{}}
		}
		p.test, p.subtest = p.e[id], ""
	case p.test == nil:
		return fmt.Errorf("subtest section [%s] outside a test section", name)
	case p.subtest != "" && indent > p.subIndent:
		return fmt.Errorf("section [%s] nested in a subtest section", name)
	default:
		p.subtest, p.subIndent = name, indent
	}
	return nil
}

func (p *metadataParser) apply(subtest, key, value string) error {
	switch key {
	case "expected":
		list, err := parseMetadataValue(value)
		if err != nil {
			return err
		}
		statuses := make([]Status, len(list))
		for i, s := range list {
			statuses[i] = Status(s)
		}
		x, err := expectedFrom(statuses)
		if err != nil {
			return err
		}
		if subtest == "" {
			p.test.Status = x
		} else {
			p.test.Subtests[subtest] = x
		}
	case "disabled":
		list, err := parseMetadataValue(value)
		if err != nil {
			return err
		}
		// "@False" turns off a disabled: inherited from elsewhere.
		if subtest == "" && len(list) > 0 && list[0] != "@False" {
			p.test.Disabled = strings.Join(list, ", ")
		}
	}
	return nil
}

// parseMetadataValue splits `FAIL`, `"a string"` or `[PASS, FAIL]`, dropping
// a trailing # comment.
func parseMetadataValue(v string) ([]string, error) {
	if !strings.HasPrefix(v, `"`) {
		if i := strings.Index(v, " #"); i >= 0 {
			v = strings.TrimSpace(v[:i])
		}
	}
	items := []string{v}
	if strings.HasPrefix(v, "[") {
		if !strings.HasSuffix(v, "]") {
			return nil, fmt.Errorf("unterminated list %q", v)
		}
		items = strings.Split(v[1:len(v)-1], ",")
	}
	out := make([]string, 0, len(items))
	for _, it := range items {
		it = strings.TrimSpace(it)
		if strings.HasPrefix(it, `"`) {
			u, err := strconv.Unquote(it)
			if err != nil {
				return nil, fmt.Errorf("bad string %s: %w", it, err)
			}
			it = u
		}
		if it != "" {
			out = append(out, it)
		}
	}
	return out, nil
}

// unescapeHeading reads a section name up to its closing ']', undoing
// wptmanifest's backslash escapes (\], \\, \n, \t, \xNN, \uNNNN…).
func unescapeHeading(s string) (name, rest string, err error) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ']':
			return b.String(), s[i+1:], nil
		case c != '\\':
			b.WriteByte(c)
		case i+1 >= len(s):
			return "", "", fmt.Errorf("dangling backslash in section name")
		default:
			i++
			switch e := s[i]; e {
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 't':
				b.WriteByte('\t')
			case '0':
				b.WriteByte(0)
			case 'x', 'u', 'U':
				width := map[byte]int{'x': 2, 'u': 4, 'U': 6}[e]
				if i+width >= len(s) {
					return "", "", fmt.Errorf("short \\%c escape in section name", e)
				}
				r, err := strconv.ParseUint(s[i+1:i+1+width], 16, 32)
				if err != nil {
					return "", "", fmt.Errorf("bad \\%c escape in section name", e)
				}
				b.WriteRune(rune(r))
				i += width
			default:
				b.WriteByte(e) // \] \\ \: and friends stand for themselves
			}
		}
	}
	return "", "", fmt.Errorf("section name without closing ]")
}
