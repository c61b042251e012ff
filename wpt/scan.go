package wpt

import (
	"bufio"
	"bytes"
	"html"
	"regexp"
	"strings"
)

// metaItem is one "// META: key=value" line of a .js test.
type metaItem struct{ key, value string }

// jsMetaRE is WPT's js_meta_re.
var jsMetaRE = regexp.MustCompile(`^//\s*META:\s*(\w*)=(.*)$`)

// readScriptMeta returns the META lines at the top of a .js test; like WPT
// it stops at the first line that is not one.
func readScriptMeta(src []byte) []metaItem {
	var out []metaItem
	sc := bufio.NewScanner(bytes.NewReader(src))
	sc.Buffer(nil, len(src)+1)
	for sc.Scan() {
		m := jsMetaRE.FindStringSubmatch(sc.Text())
		if m == nil {
			break
		}
		out = append(out, metaItem{m[1], strings.TrimRight(m[2], " \t\r")})
	}
	return out
}

func metaValue(items []metaItem, key string) (string, bool) {
	for _, it := range items {
		if it.key == key {
			return it.value, true
		}
	}
	return "", false
}

// anyGlobals are the .any.js variants served here, by META global name,
// with the URL suffix each one gets.
var anyGlobals = map[string]string{
	"window":          ".any.html",
	"dedicatedworker": ".any.worker.html",
	"sharedworker":    ".any.sharedworker.html",
	"serviceworker":   ".any.serviceworker.html",
}

// parseGlobals is WPT's parse_variants: an empty value means window and
// dedicatedworker, "worker" means every worker kind, and names this server
// cannot serve (jsshell, shadowrealm, *-module) are dropped.
func parseGlobals(value string) map[string]bool {
	if value == "" {
		return map[string]bool{"window": true, "dedicatedworker": true}
	}
	out := map[string]bool{}
	for item := range strings.SplitSeq(value, ",") {
		item = strings.TrimSpace(item)
		if item == "worker" {
			out["dedicatedworker"], out["sharedworker"], out["serviceworker"] = true, true, true
		} else if _, ok := anyGlobals[item]; ok {
			out[item] = true
		}
	}
	return out
}

// htmlFacts is what discovery needs to know about an HTML test file.
type htmlFacts struct {
	testharness bool // has <script src="/resources/testharness.js">
	testdriver  bool // has <script src="/resources/testdriver.js">
	long        bool // first <meta name=timeout> says "long"
	variants    []string
	sawTimeout  bool
}

// scanHTML walks the start tags of an HTML or XHTML document. It is not an
// HTML5 parser; it skips comments and the contents of script and style
// elements, which is enough to find the elements WPT's manifest looks for.
func scanHTML(doc []byte) htmlFacts {
	var f htmlFacts
	s := string(doc)
	for {
		i := strings.IndexByte(s, '<')
		if i < 0 || i+1 >= len(s) {
			return f
		}
		s = s[i+1:]
		if strings.HasPrefix(s, "!--") {
			end := strings.Index(s[3:], "-->")
			if end < 0 {
				return f
			}
			s = s[3+end+3:]
			continue
		}
		if !isASCIILetter(s[0]) {
			continue
		}
		name, attrs, rest := readTag(s)
		s = rest
		switch name {
		case "script":
			switch attrs["src"] {
			case "/resources/testharness.js":
				f.testharness = true
			case "/resources/testdriver.js":
				f.testdriver = true
			}
			s = skipRawText(s, "</script")
		case "style":
			s = skipRawText(s, "</style")
		case "meta":
			switch attrs["name"] {
			case "timeout":
				if !f.sawTimeout {
					f.sawTimeout = true
					f.long = strings.EqualFold(attrs["content"], "long")
				}
			case "variant":
				if v, ok := attrs["content"]; ok {
					f.variants = append(f.variants, v)
				}
			}
		}
	}
}

// readTag parses "name attr=value …>" (the '<' already consumed) and returns
// the lower-cased tag name, its attributes and the text after the tag.
func readTag(s string) (name string, attrs map[string]string, rest string) {
	i := 0
	for i < len(s) && !isSpace(s[i]) && s[i] != '>' && s[i] != '/' {
		i++
	}
	name = strings.ToLower(s[:i])
	attrs = map[string]string{}
	for {
		for i < len(s) && (isSpace(s[i]) || s[i] == '/') {
			i++
		}
		if i >= len(s) || s[i] == '>' {
			break
		}
		var key, value string
		key, value, i = readAttr(s, i)
		if _, dup := attrs[key]; !dup && key != "" {
			attrs[key] = html.UnescapeString(value)
		}
	}
	if i < len(s) {
		i++ // '>'
	}
	return name, attrs, s[i:]
}

// readAttr reads the attribute at s[i] (key, key=value, key="value" or
// key='value'): its lower-cased key, its value as written, and where it
// ends.
func readAttr(s string, i int) (key, value string, end int) {
	start := i
	for i < len(s) && !isSpace(s[i]) && s[i] != '=' && s[i] != '>' && s[i] != '/' {
		i++
	}
	key = strings.ToLower(s[start:i])
	i = skipSpaces(s, i)
	if i < len(s) && s[i] == '=' {
		value, i = readAttrValue(s, skipSpaces(s, i+1))
	}
	return key, value, i
}

// readAttrValue reads the attribute value at s[i], quoted or not, and
// returns it and where it ends. A quote that is not closed runs to the
// end of s.
func readAttrValue(s string, i int) (string, int) {
	if i < len(s) && (s[i] == '"' || s[i] == '\'') {
		q := s[i]
		end := strings.IndexByte(s[i+1:], q)
		if end < 0 {
			end = len(s) - i - 1
		}
		return s[i+1 : i+1+end], min(i+1+end+1, len(s))
	}
	start := i
	for i < len(s) && !isSpace(s[i]) && s[i] != '>' {
		i++
	}
	return s[start:i], i
}

// skipSpaces returns the index of the first byte at or after s[i] that is
// not a space.
func skipSpaces(s string, i int) int {
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	return i
}

// skipRawText skips past the closing tag of a raw-text element.
func skipRawText(s, closing string) string {
	for i := 0; i+len(closing) <= len(s); i++ {
		if asciiEqualFold(s[i:i+len(closing)], closing) {
			return s[i+len(closing):]
		}
	}
	return ""
}

// asciiEqualFold compares case-insensitively in ASCII only, so byte offsets
// into s stay valid whatever else the document contains.
func asciiEqualFold(s, lower string) bool {
	for i := 0; i < len(lower); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

func isASCIILetter(c byte) bool { return 'a' <= c|0x20 && c|0x20 <= 'z' }

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'
}
