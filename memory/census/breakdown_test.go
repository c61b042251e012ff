package census

import (
	"errors"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
)

func TestParse(t *testing.T) {
	all := Count{Count: true, Bytes: true}
	for _, tc := range []struct {
		in   string
		want Breakdown
	}{
		{"", Default()},
		{" \n", Default()},
		{`{"by":"count"}`, all},
		{`{"by":"count","count":false}`, Count{Bytes: true}},
		{`{"by":"count","bytes":false}`, Count{Count: true}},
		{`{"by":"count","count":false,"bytes":false}`, Count{}},
		{`{"by":"coarseType"}`, CoarseType{all, all, all, all}},
		{`{"by":"coarseType","strings":{"by":"count","bytes":false}}`, CoarseType{all, all, Count{Count: true}, all}},
		{`{"by":"objectClass"}`, ObjectClass{Then: all, Other: all}},
		{`{"by":"objectClass","then":{"by":"internalType"},"other":{"by":"count","count":false}}`,
			ObjectClass{Then: InternalType{Then: all}, Other: Count{Bytes: true}}},
		{`{"by":"internalType"}`, InternalType{Then: all}},
		{`{"by":"allocationStack"}`, AllocationStack{Then: all, NoStack: all}},
		{`{"by":"allocationStack","then":{"by":"objectClass"},"noStack":{"by":"internalType"}}`,
			AllocationStack{Then: ObjectClass{all, all}, NoStack: InternalType{all}}},
		{`[]`, List{}},
		{`[{"by":"count"},[{"by":"internalType"}]]`, List{all, List{InternalType{all}}}},
		// The documented default, spelled out, is Default().
		{`{"by":"coarseType","objects":{"by":"objectClass"},"other":{"by":"internalType"}}`, Default()},
	} {
		got, err := Parse([]byte(tc.in))
		assert.NilError(t, err, tc.in)
		assert.DeepEqual(t, got, tc.want)
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ in, path, reason string }{
		{`{`, "breakdown", "not valid JSON"},
		{`{"by":"count"} x`, "breakdown", "not valid JSON"},
		{`null`, "breakdown", "not null"},
		{`"count"`, "breakdown", "not a string"},
		{`{}`, "breakdown.by", "missing"},
		{`{"by":1}`, "breakdown.by", "must be a string, not a number"},
		{`{"by":"Count"}`, "breakdown.by", `unknown breakdown "Count"`},
		{`{"by":"bucket"}`, "breakdown.by", `"bucket" is not supported`},
		{`{"by":"filename"}`, "breakdown.by", `"filename" is not supported`},
		{`{"by":"count","count":1}`, "breakdown.count", "must be a boolean, not a number"},
		{`{"by":"count","bytes":"yes"}`, "breakdown.bytes", "must be a boolean, not a string"},
		{`{"by":"count","byte":true}`, "breakdown.byte", `not a property of a "count" breakdown`},
		{`{"by":"count","label":"x"}`, "breakdown.label", `not a property`},
		{`{"by":"coarseType","domNode":{"by":"count"}}`, "breakdown.domNode", `not a property of a "coarseType" breakdown`},
		{`{"by":"objectClass","then":null}`, "breakdown.then", "not null"},
		{`{"by":"objectClass","then":{"by":"nope"}}`, "breakdown.then.by", `unknown breakdown "nope"`},
		{`{"by":"allocationStack","noStack":{"by":"internalType","then":{}}}`, "breakdown.noStack.then.by", "missing"},
		{`{"by":"coarseType","objects":{"by":"count"},"other":[{"by":"count"},{"by":"x"}]}`, "breakdown.other[1].by", `unknown breakdown "x"`},
		{`[{"by":"count"},true]`, "breakdown[1]", "not a boolean"},
		{`{"by":"internalType","then":` + strings.Repeat(`{"by":"internalType","then":`, MaxParts) + `{"by":"count"}` + strings.Repeat("}", MaxParts+1),
			"breakdown" + strings.Repeat(".then", MaxParts), "more than 1000 breakdowns"},
	} {
		_, err := Parse([]byte(tc.in))
		var e *Error
		assert.Assert(t, errors.As(err, &e), "%s: %v", tc.in, err)
		assert.Equal(t, e.Path, tc.path, tc.in)
		assert.ErrorContains(t, err, tc.reason, tc.in)
		assert.Assert(t, strings.HasPrefix(err.Error(), tc.path+": "))
	}
}
