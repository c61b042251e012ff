package measurement

import (
	"errors"
	"fmt"
	"math/bits"
	"slices"

	"github.com/wdext/wdext/wire"
)

// FieldError is one broken invariant of a MemoryMeasurement. Path names the
// offending member in JSON terms, e.g. "breakdown[2].attribution[0].scope".
type FieldError struct {
	Path   string
	Reason string
}

func (e *FieldError) Error() string { return e.Path + ": " + e.Reason }

var scopes = []string{wire.ScopeWindow, wire.ScopeDedicatedWorker, wire.ScopeSharedWorker, wire.ScopeServiceWorker, wire.ScopeCrossOriginAggregated}

// Validate reports every way m breaks what the spec promises about a result,
// as *FieldError values joined with errors.Join, or nil:
//
//   - a non-empty breakdown partitions bytes (§2.1): their sum is bytes. An
//     empty breakdown is the spec's valid "total only" result;
//   - a non-empty breakdown holds at least one empty entry
//     {bytes: 0, attribution: [], types: []} (§1.1, §3.3 step 4);
//   - scope is one of the five strings of §2.1;
//   - url is "cross-origin-url" exactly when scope is
//     "cross-origin-aggregated" (§2.1, §3.3 create a new memory attribution);
//     otherwise it is the realm's URL and not empty;
//   - a cross-origin-aggregated attribution has a container, since
//     cross-origin realms cannot be top-level (§2.1); a shared or service
//     worker has none, since its token never has one (§3.4);
//   - types holds no duplicates, being a set (§2.2).
//
// Zero-byte entries with attribution are valid: the address-space rule
// (§2.2) reports memory outside the current address space as 0.
func Validate(m wire.MemoryMeasurement) error {
	if len(m.Breakdown) == 0 {
		return nil
	}
	var p problems
	var sum uint64
	overflow, hasEmpty := false, false
	for i, e := range m.Breakdown {
		var carry uint64
		sum, carry = bits.Add64(sum, e.Bytes, 0)
		overflow = overflow || carry != 0
		hasEmpty = hasEmpty || e.IsEmpty()
		for j, a := range e.Attribution {
			p.attribution(fmt.Sprintf("breakdown[%d].attribution[%d].", i, j), a)
		}
		for k, t := range e.Types {
			if slices.Index(e.Types, t) < k {
				p.add(fmt.Sprintf("breakdown[%d].types[%d]", i, k), "duplicate %q; types is a set", t)
			}
		}
	}
	switch {
	case overflow:
		p.add("bytes", "the sum of breakdown[*].bytes overflows uint64")
	case sum != m.Bytes:
		p.add("bytes", "%d, but breakdown[*].bytes sum to %d", m.Bytes, sum)
	}
	if !hasEmpty {
		p.add("breakdown", "no empty entry {bytes: 0, attribution: [], types: []}; one is inserted whenever the breakdown is not empty")
	}
	return errors.Join(p...)
}

// problems collects FieldErrors in the order they are found.
type problems []error

func (p *problems) add(path, reason string, args ...any) {
	*p = append(*p, &FieldError{Path: path, Reason: fmt.Sprintf(reason, args...)})
}

// attribution checks one attribution; prefix ends in "." so fields append.
func (p *problems) attribution(prefix string, a wire.MemoryAttribution) {
	if !slices.Contains(scopes, a.Scope) {
		p.add(prefix+"scope", "%q is not one of %q", a.Scope, scopes)
	}
	crossOriginScope := a.Scope == wire.ScopeCrossOriginAggregated
	switch {
	case a.URL == wire.CrossOriginURL && !crossOriginScope:
		p.add(prefix+"url", "%q requires scope %q, got %q", wire.CrossOriginURL, wire.ScopeCrossOriginAggregated, a.Scope)
	case a.URL != wire.CrossOriginURL && crossOriginScope:
		p.add(prefix+"url", "%q, but scope %q requires %q", a.URL, wire.ScopeCrossOriginAggregated, wire.CrossOriginURL)
	case a.URL == "":
		p.add(prefix+"url", "empty; a same-origin realm reports its URL")
	}
	switch {
	case crossOriginScope && a.Container == nil:
		p.add(prefix+"container", "missing; scope %q always names the top-most cross-origin container", a.Scope)
	case (a.Scope == wire.ScopeSharedWorker || a.Scope == wire.ScopeServiceWorker) && a.Container != nil:
		p.add(prefix+"container", "present; scope %q never has a container", a.Scope)
	}
}
