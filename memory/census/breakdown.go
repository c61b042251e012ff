package census

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
)

// A Breakdown says how a census groups what it counts: one of Count,
// CoarseType, ObjectClass, InternalType, AllocationStack or List. A nil
// Breakdown anywhere, as in a Go literal that leaves a field out, means
// Count{Count: true, Bytes: true}, as an omitted one does in JSON.
type Breakdown interface{ breakdown() }

// Count is { by: "count", count, bytes }: tally the items, their number if
// Count is set and the bytes they use directly if Bytes is set.
type Count struct{ Count, Bytes bool }

// CoarseType is { by: "coarseType", objects, scripts, strings, other }.
type CoarseType struct{ Objects, Scripts, Strings, Other Breakdown }

// ObjectClass is { by: "objectClass", then, other }: objects grouped by
// class with Then, everything else counted with Other.
type ObjectClass struct{ Then, Other Breakdown }

// InternalType is { by: "internalType", then }: items grouped by kind name
// (Kind.Name: the V8 node type, the JSC class).
type InternalType struct{ Then Breakdown }

// AllocationStack is { by: "allocationStack", then, noStack }: items grouped
// by allocation stack with Then, those without one counted with NoStack.
type AllocationStack struct{ Then, NoStack Breakdown }

// List is [ breakdown, ... ]: every item counted by each breakdown.
type List []Breakdown

func (Count) breakdown()           {}
func (CoarseType) breakdown()      {}
func (ObjectClass) breakdown()     {}
func (InternalType) breakdown()    {}
func (AllocationStack) breakdown() {}
func (List) breakdown()            {}

// countAll is what an omitted breakdown means.
var countAll = Count{Count: true, Bytes: true}

// Default returns the breakdown takeCensus uses when given none:
//
//	{ by: "coarseType", objects: { by: "objectClass" }, other: { by: "internalType" } }
//
// with every omitted part a full count.
func Default() Breakdown {
	return CoarseType{
		Objects: ObjectClass{Then: countAll, Other: countAll},
		Scripts: countAll,
		Strings: countAll,
		Other:   InternalType{Then: countAll},
	}
}

// MaxParts bounds the number of breakdowns in one, nested ones and list
// elements included, because a census takes time in proportion to it.
const MaxParts = 1000

// Error is an invalid breakdown. Path locates the bad part the way
// takeCensus's options spell it, e.g. "breakdown.then.by" or
// "breakdown[1].other".
type Error struct {
	Path   string
	Reason string
}

func (e *Error) Error() string { return e.Path + ": " + e.Reason }

// properties lists, for each documented "by", the properties it takes
// besides "by" itself.
var properties = map[string][]string{
	"count":           {"count", "bytes"},
	"coarseType":      {"objects", "scripts", "strings", "other"},
	"objectClass":     {"then", "other"},
	"internalType":    {"then"},
	"allocationStack": {"then", "noStack"},
}

// SpiderMonkey's implementation also knows these, but the documented
// breakdown language doesn't, and they have no V8 counterpart here.
var undocumented = map[string]bool{"bucket": true, "filename": true, "descriptiveType": true}

// Parse parses a breakdown from JSON. Empty input (only white space) means
// no breakdown, hence Default(). Every omitted "then", "other", "noStack",
// "objects", "scripts" and "strings" is a full count, and so are omitted
// "count" and "bytes" flags. Anything else invalid is an *Error: a missing
// or unknown "by", a property the breakdown doesn't take (so typos don't
// pass silently), a non-boolean flag, null, or more than MaxParts parts.
func Parse(data []byte) (Breakdown, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return Default(), nil
	}
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		return nil, &Error{Path: "breakdown", Reason: "not valid JSON: " + err.Error()}
	}
	var p parser
	return p.parse(v, "breakdown")
}

type parser struct{ parts int }

func (p *parser) parse(v any, path string) (Breakdown, error) {
	if p.parts++; p.parts > MaxParts {
		return nil, &Error{Path: path, Reason: fmt.Sprintf("more than %d breakdowns in all", MaxParts)}
	}
	switch v := v.(type) {
	case []any:
		l := make(List, len(v))
		for i, e := range v {
			b, err := p.parse(e, fmt.Sprintf("%s[%d]", path, i))
			if err != nil {
				return nil, err
			}
			l[i] = b
		}
		return l, nil
	case map[string]any:
		return p.object(v, path)
	}
	return nil, &Error{Path: path, Reason: "a breakdown is an object or an array, not " + typeOf(v)}
}

func (p *parser) object(m map[string]any, path string) (Breakdown, error) {
	byv, ok := m["by"]
	if !ok {
		return nil, &Error{Path: path + ".by", Reason: "missing"}
	}
	by, ok := byv.(string)
	if !ok {
		return nil, &Error{Path: path + ".by", Reason: "must be a string, not " + typeOf(byv)}
	}
	props, ok := properties[by]
	if !ok {
		reason := fmt.Sprintf("unknown breakdown %q; want count, coarseType, objectClass, internalType or allocationStack", by)
		if undocumented[by] {
			reason = fmt.Sprintf("%q is not supported: it is a SpiderMonkey extension outside the documented breakdowns", by)
		}
		return nil, &Error{Path: path + ".by", Reason: reason}
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if k != "by" && !slices.Contains(props, k) {
			return nil, &Error{Path: path + "." + k, Reason: fmt.Sprintf("not a property of a %q breakdown", by)}
		}
	}

	var err error
	child := func(key string) Breakdown {
		v, ok := m[key]
		if !ok || err != nil {
			return countAll
		}
		var b Breakdown
		b, err = p.parse(v, path+"."+key)
		return b
	}
	var b Breakdown
	switch by {
	case "count":
		c := countAll
		for _, f := range []struct {
			key  string
			flag *bool
		}{{"count", &c.Count}, {"bytes", &c.Bytes}} {
			key, flag := f.key, f.flag
			if v, ok := m[key]; ok {
				if *flag, ok = v.(bool); !ok {
					return nil, &Error{Path: path + "." + key, Reason: "must be a boolean, not " + typeOf(v)}
				}
			}
		}
		b = c
	case "coarseType":
		b = CoarseType{Objects: child("objects"), Scripts: child("scripts"), Strings: child("strings"), Other: child("other")}
	case "objectClass":
		b = ObjectClass{Then: child("then"), Other: child("other")}
	case "internalType":
		b = InternalType{Then: child("then")}
	case "allocationStack":
		b = AllocationStack{Then: child("then"), NoStack: child("noStack")}
	}
	if err != nil {
		return nil, err
	}
	return b, nil
}

// typeOf names a decoded JSON value's type for messages.
func typeOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case float64:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "an array"
	}
	return "an object"
}
