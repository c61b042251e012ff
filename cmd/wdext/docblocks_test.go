package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
)

// The documentation's runnable examples: the code blocks of README.md and
// docs/*.md marked <!-- README test -->. This file finds them and says
// whether a block's output is what it promises; readme_e2e_test.go runs
// them against a real wdext.

// docBlock is a marked code block: run as written (ports aside), its
// stdout checked against its "# =>" comments.
type docBlock struct {
	file string // relative to the repository's root: README.md, docs/memory.md
	line int    // of the opening fence, 1-based
	lang string // sh, python or js
	code string
	want []string // the text after each "# => " ("// => " in js), in order
	// bytesVary: the marker says `"bytes" vary`; a "bytes":N in want
	// matches any number.
	bytesVary bool
}

// where names the block as file:line, for error messages.
func (b docBlock) where() string { return fmt.Sprintf("%s:%d", b.file, b.line) }

var docMarker = regexp.MustCompile(`^<!-- README test(?:: (.*))? -->$`)

// docFiles returns the files whose marked blocks run, relative to the
// repository's root: README.md first (its blocks start the page server
// the others use), then docs/*.md by name.
func docFiles(t *testing.T) []string {
	t.Helper()
	docs, err := filepath.Glob("../../docs/*.md")
	assert.NilError(t, err)
	sort.Strings(docs)
	files := []string{"README.md"}
	for _, d := range docs {
		files = append(files, filepath.ToSlash(strings.TrimPrefix(d, "../../")))
	}
	return files
}

// docBlocks returns the marked blocks of every file of docFiles, file by
// file, in order.
func docBlocks(t *testing.T) []docBlock {
	t.Helper()
	var all []docBlock
	for _, f := range docFiles(t) {
		text, err := os.ReadFile(filepath.Join("../..", f))
		assert.NilError(t, err)
		blocks, err := parseDocBlocks(f, string(text))
		assert.NilError(t, err)
		all = append(all, blocks...)
	}
	return all
}

// parseDocBlocks returns the marked blocks of text, the contents of file;
// an error names file and line of a malformed one.
func parseDocBlocks(file, text string) ([]docBlock, error) {
	lines := strings.Split(text, "\n")
	var blocks []docBlock
	for i := 0; i < len(lines); i++ {
		m := docMarker.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		blk := docBlock{file: file}
		switch m[1] {
		case "":
		case `"bytes" vary`:
			blk.bytesVary = true
		default:
			return nil, fmt.Errorf("%s:%d: unknown README test option %q", file, i+1, m[1])
		}
		i++
		if i >= len(lines) || !strings.HasPrefix(lines[i], "```") {
			return nil, fmt.Errorf("%s:%d: a README test marker not followed by a code block", file, i)
		}
		blk.line, blk.lang = i+1, strings.TrimPrefix(lines[i], "```")
		if blk.lang != "sh" && blk.lang != "python" && blk.lang != "js" {
			return nil, fmt.Errorf("%s:%d: README test of a %q block: only sh, python and js run", file, i+1, blk.lang)
		}
		var code []string
		arrow := "# => " // "// => " in JavaScript
		if blk.lang == "js" {
			arrow = "// => "
		}
		for i++; i < len(lines) && lines[i] != "```"; i++ {
			code = append(code, lines[i])
			if _, out, ok := strings.Cut(lines[i], arrow); ok {
				blk.want = append(blk.want, strings.TrimRight(out, " "))
			}
		}
		if i == len(lines) {
			return nil, fmt.Errorf("%s:%d: code block never closed", file, blk.line)
		}
		blk.code = strings.Join(code, "\n") + "\n"
		blocks = append(blocks, blk)
	}
	return blocks, nil
}

// matches reports whether got (a block's stdout) is what want says.
func (b docBlock) matches(got string) bool {
	lines := strings.Split(strings.TrimRight(got, "\n"), "\n")
	for len(lines) > 0 && lines[0] == "" {
		lines = lines[1:]
	}
	if len(lines) != len(b.want) {
		return false
	}
	for i, w := range b.want {
		pat := regexp.QuoteMeta(w)
		if b.bytesVary {
			pat = regexp.MustCompile(`"bytes":\d+`).ReplaceAllLiteralString(pat, `"bytes":\d+`)
		}
		if !regexp.MustCompile("^" + pat + "$").MatchString(strings.TrimRight(lines[i], " ")) {
			return false
		}
	}
	return true
}

// The documentation's runnable blocks are there and say what they print
// (no browser needed: this runs with -short too).
func TestDocsExamplesMarked(t *testing.T) {
	blocks := docBlocks(t)
	langs := map[string]int{}
	readme := map[string]int{}
	for _, b := range blocks {
		langs[b.lang]++
		if b.file == "README.md" {
			readme[b.lang]++
		}
		// Every block but the one starting the page server says what it
		// prints.
		if !strings.Contains(b.code, "serve.py") {
			assert.Assert(t, len(b.want) > 0, "%s: a README test block without a # => line", b.where())
		}
	}
	// The README's own examples run (the page server, curl, Python,
	// JavaScript), and no fewer blocks than when they all lived there.
	assert.Assert(t, readme["sh"] >= 2 && readme["python"] >= 1 && readme["js"] >= 1, "README.md's README test blocks: %v", readme)
	assert.Assert(t, langs["sh"] >= 3 && langs["python"] >= 3 && langs["js"] >= 2, "README test blocks: %v", langs)

	b := docBlock{want: []string{`{"value":null}`, `{"bytes":12,"x":[{"bytes":0}]}`}}
	assert.Assert(t, b.matches("{\"value\":null}\n{\"bytes\":12,\"x\":[{\"bytes\":0}]}\n"))
	assert.Assert(t, !b.matches("{\"value\":null}\n{\"bytes\":13,\"x\":[{\"bytes\":0}]}\n"), "bytes vary only when the marker says so")
	assert.Assert(t, !b.matches("{\"value\":null}\n"))
	b.bytesVary = true
	assert.Assert(t, b.matches("{\"value\":null}\n{\"bytes\":13,\"x\":[{\"bytes\":7}]}\n"))
	assert.Assert(t, !b.matches("{\"value\":null}\n{\"bytes\":13,\"x\":[{\"count\":7}]}\n"))
}

// Malformed marked blocks are errors naming their file and line.
func TestDocsExamplesMalformed(t *testing.T) {
	for _, c := range []struct{ text, err string }{
		{"a\n<!-- README test: fast -->\n```sh\necho\n```\n", `docs/x.md:2: unknown README test option "fast"`},
		{"<!-- README test -->\ntext\n", "docs/x.md:1: a README test marker not followed by a code block"},
		{"\n<!-- README test -->\n```go\nx\n```\n", `docs/x.md:3: README test of a "go" block`},
		{"<!-- README test -->\n```sh\necho # => x\n", "docs/x.md:2: code block never closed"},
	} {
		_, err := parseDocBlocks("docs/x.md", c.text)
		assert.ErrorContains(t, err, c.err)
	}
	blocks, err := parseDocBlocks("docs/x.md", "x\n\n<!-- README test -->\n```js\nconsole.log(1)   // => 1\n```\n")
	assert.NilError(t, err)
	assert.Equal(t, len(blocks), 1)
	assert.Equal(t, blocks[0].where(), "docs/x.md:4")
	assert.DeepEqual(t, blocks[0].want, []string{"1"})
}
