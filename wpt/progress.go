package wpt

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Progress writes a line per finished test to a terminal, saying how many
// subtests did not pass as expected, followed by an indented line per
// unexpected result:
//
//	[ 3/12] OK /dir/a.html (4/6 subtests passed, 1.2s; 1 not passing, as expected)
//	        unexpected: /dir/a.html | name: FAIL (expected PASS): message
//
// It is safe for concurrent use, for runners that run tests in parallel.
type Progress struct {
	mu    sync.Mutex
	w     io.Writer
	total int
	done  int
	exp   Expectations
}

// NewProgress returns a Progress for a run of total tests.
func NewProgress(w io.Writer, total int, exp Expectations) *Progress {
	return &Progress{w: w, total: total, exp: exp}
}

// Done reports that r's test finished. Write errors are ignored: progress
// output is best effort.
func (p *Progress) Done(r Result) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done++
	width := len(strconv.Itoa(p.total))
	passed := 0
	for _, s := range r.Subtests {
		if s.Status == StatusPass {
			passed++
		}
	}
	unexpected := p.exp.Unexpected(r)
	failedAsExpected := len(r.Subtests) - passed
	for _, u := range unexpected {
		if u.Subtest != "" && u.Status != StatusPass {
			failedAsExpected--
		}
	}
	detail := r.Duration.Round(100 * time.Millisecond).String()
	if len(r.Subtests) > 0 {
		detail = fmt.Sprintf("%d/%d subtests passed, %s", passed, len(r.Subtests), detail)
	}
	if failedAsExpected > 0 {
		detail = fmt.Sprintf("%s; %d not passing, as expected", detail, failedAsExpected)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "[%*d/%d] %s %s (%s)\n", width, p.done, p.total, r.Status, r.Test, detail)
	indent := strings.Repeat(" ", 2*width+4)
	for _, u := range unexpected {
		b.WriteString(indent + "unexpected: " + describeUnexpected(u) + "\n")
	}
	_, _ = io.WriteString(p.w, b.String())
}
