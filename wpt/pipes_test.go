package wpt

import (
	"fmt"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

func TestParsePipes(t *testing.T) {
	for in, want := range map[string][]pipeCall{
		"sub":                       {{name: "sub"}},
		"sub(none)":                 {{name: "sub", args: []string{"none"}}},
		"header(A,b)|status(404)":   {{name: "header", args: []string{"A", "b"}}, {name: "status", args: []string{"404"}}},
		"|sub||":                    {{name: "sub"}},
		`header(X,a\,b\)c\nd)`:      {{name: "header", args: []string{"X", "a,b)c\nd"}}},
		"header(X,v,True)":          {{name: "header", args: []string{"X", "v", "True"}}},
		"header(C,text/html;cs=a)":  {{name: "header", args: []string{"C", "text/html;cs=a"}}},
		"header(unterminated,value": {{name: "header", args: []string{"unterminated", "value"}}},
	} {
		got, err := parsePipes(in)
		assert.Check(t, err, in)
		// pipeCall's fields are unexported, which go-cmp refuses to compare.
		assert.Check(t, is.Equal(fmt.Sprintf("%q", got), fmt.Sprintf("%q", want)), in)
	}
	_, err := parsePipes("(x)")
	assert.ErrorContains(t, err, "without a function")
}

func TestParseQuery(t *testing.T) {
	got := parseQuery("pipe=header(a,b;c)&x=1+2&x=%zz&e=&n&=v&%41=%42", false)
	assert.DeepEqual(t, got, map[string][]string{"pipe": {"header(a,b;c)"}, "x": {"1 2", "%zz"}, "": {"v"}, "A": {"B"}})
	assert.DeepEqual(t, parseQuery("e=&n", true), map[string][]string{"e": {""}, "n": {""}})
}
