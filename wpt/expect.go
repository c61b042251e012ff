package wpt

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// Expected is the expected status of a test or subtest. Statuses listed in
// KnownIntermittent are accepted too, as wptrunner accepts them.
type Expected struct {
	Status            Status
	KnownIntermittent []Status
}

// Matches reports whether s is an expected outcome. SKIP always is: mozlog
// never reports a skipped test as unexpected.
func (x Expected) Matches(s Status) bool {
	return s == x.Status || s == StatusSkip || slices.Contains(x.KnownIntermittent, s)
}

// Expectation holds what is expected of one test. A zero Status means the
// default, OK.
type Expectation struct {
	Status   Expected
	Subtests map[string]Expected
	// Disabled, when not empty, is why the test should not be run; the
	// runner is expected to skip it and report StatusSkip.
	Disabled string
}

// Expectations maps test ids (URL path plus variant, like Result.Test) to
// what is expected of them. A nil Expectations expects every test to be OK
// and every subtest to PASS, wptrunner's defaults.
type Expectations map[string]*Expectation

// ForTest returns the expected harness status of test.
func (e Expectations) ForTest(test string) Expected {
	if x := e[test]; x != nil && x.Status.Status != "" {
		return x.Status
	}
	return Expected{Status: StatusOK}
}

// ForSubtest returns the expected status of subtest name of test.
func (e Expectations) ForSubtest(test, name string) Expected {
	if x := e[test]; x != nil {
		if s, ok := x.Subtests[name]; ok && s.Status != "" {
			return s
		}
	}
	return Expected{Status: StatusPass}
}

// Disabled returns why test is disabled, or "" when it is not.
func (e Expectations) Disabled(test string) string {
	if x := e[test]; x != nil {
		return x.Disabled
	}
	return ""
}

// Unexpected is one result that does not match its expectation.
type Unexpected struct {
	Test     string
	Subtest  string // "" for the harness status
	Status   Status
	Expected Status
	Message  string
}

// Unexpected lists the harness status and subtests of r that do not match.
func (e Expectations) Unexpected(r Result) []Unexpected {
	var out []Unexpected
	if x := e.ForTest(r.Test); !x.Matches(r.Status) {
		out = append(out, Unexpected{Test: r.Test, Status: r.Status, Expected: x.Status, Message: r.Message})
	}
	for _, s := range r.Subtests {
		if x := e.ForSubtest(r.Test, s.Name); !x.Matches(s.Status) {
			out = append(out, Unexpected{Test: r.Test, Subtest: s.Name, Status: s.Status, Expected: x.Status, Message: s.Message})
		}
	}
	return out
}

// ExitCode is the process exit status for a run: 1 when any result is
// unexpected, 0 otherwise.
func ExitCode(results []Result, e Expectations) int {
	for _, r := range results {
		if len(e.Unexpected(r)) > 0 {
			return 1
		}
	}
	return 0
}

// LoadExpectations reads expectations from a .json file, a single metadata
// .ini file (whose section names must then be absolute test paths, e.g.
// [/dir/test.html]) or a directory of metadata .ini files laid out like the
// test tree (meta/dir/test.html.ini holds [test.html]).
func LoadExpectations(name string) (Expectations, error) {
	fi, err := os.Stat(name)
	if err != nil {
		return nil, err
	}
	if fi.IsDir() {
		return loadMetadataDir(name)
	}
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	e := Expectations{}
	switch {
	case strings.HasSuffix(name, ".json"):
		e, err = ParseExpectationsJSON(bytes.NewReader(data))
	case strings.HasSuffix(name, ".ini"):
		err = parseMetadata(e, bytes.NewReader(data), "/")
	default:
		err = fmt.Errorf("want a .json file, an .ini file or a metadata directory")
	}
	if err != nil {
		return nil, fmt.Errorf("wpt: expectations %s: %w", name, err)
	}
	return e, nil
}

func loadMetadataDir(root string) (Expectations, error) {
	e := Expectations{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		// __dir__.ini holds directory-wide keys (prefs, conditions); the
		// subset read here has nothing to take from it.
		if d.IsDir() || !strings.HasSuffix(p, ".ini") || d.Name() == "__dir__.ini" {
			return nil
		}
		rel, err := filepath.Rel(root, filepath.Dir(p))
		if err != nil {
			return err
		}
		dir := path.Join("/", filepath.ToSlash(rel))
		if dir != "/" {
			dir += "/"
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := parseMetadata(e, f, dir); err != nil {
			return fmt.Errorf("wpt: expectations %s: %w", p, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return e, nil
}

// statusList is a status or a list of them in JSON: "FAIL" or
// ["FAIL", "PASS"], the first being expected and the rest intermittent.
type statusList Expected

func (s *statusList) UnmarshalJSON(b []byte) error {
	var list []Status
	if err := json.Unmarshal(b, &list); err != nil {
		var one Status
		if err := json.Unmarshal(b, &one); err != nil {
			return fmt.Errorf("want a status or a list of statuses, got %s", b)
		}
		list = []Status{one}
	}
	x, err := expectedFrom(list)
	*s = statusList(x)
	return err
}

func expectedFrom(list []Status) (Expected, error) {
	if len(list) == 0 {
		return Expected{}, fmt.Errorf("empty status list")
	}
	for _, st := range list {
		if !knownStatuses[st] {
			return Expected{}, fmt.Errorf("unknown status %q", st)
		}
	}
	return Expected{Status: list[0], KnownIntermittent: list[1:]}, nil
}

// ParseExpectationsJSON reads the JSON expectations form:
//
//	{"/dir/test.html": {"status": "OK", "subtests": {"name": "FAIL"},
//	                    "disabled": "reason"}}
//
// Every field is optional; a status may also be a list, whose first entry is
// expected and the rest known intermittent.
func ParseExpectationsJSON(r io.Reader) (Expectations, error) {
	var raw map[string]struct {
		Status   *statusList           `json:"status"`
		Subtests map[string]statusList `json:"subtests"`
		Disabled string                `json:"disabled"`
	}
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&raw); err != nil {
		return nil, err
	}
	e := make(Expectations, len(raw))
	for test, v := range raw {
		if !strings.HasPrefix(test, "/") {
			return nil, fmt.Errorf("test %q: ids start with /", test)
		}
		x := &Expectation{Disabled: v.Disabled, Subtests: map[string]Expected{}}
		if v.Status != nil {
			x.Status = Expected(*v.Status)
		}
		for name, s := range v.Subtests {
			x.Subtests[name] = Expected(s)
		}
		e[test] = x
	}
	return e, nil
}
