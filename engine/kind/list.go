package kind

import (
	"fmt"
	"strings"

	"github.com/wdext/wdext/engine"
)

// List is the registered kinds, the default first.
type List []Kind

// Find returns the kind named name.
func (l List) Find(name string) (Kind, error) {
	for _, k := range l {
		if k.Name == name {
			return k, nil
		}
	}
	return Kind{}, fmt.Errorf("--engine %q: want %s", name, l.Names(" or "))
}

// Names are the kinds' names joined with sep.
func (l List) Names(sep string) string {
	names := make([]string, len(l))
	for i, k := range l {
		names[i] = k.Name
	}
	return strings.Join(names, sep)
}

// Bind binds a session of a driver wdext did not start with the first kind
// that recognises it (any browser may answer a remote upstream).
func (l List) Bind() engine.Binder {
	binders := make([]engine.Binder, 0, len(l))
	for _, k := range l {
		if k.Bind != nil {
			binders = append(binders, k.Bind)
		}
	}
	return engine.First(binders...)
}

// Recognise returns the kind whose browser a session's browserName names.
func (l List) Recognise(browserName string) (Kind, bool) {
	for _, k := range l {
		if k.WPT.Recognise != nil && k.WPT.Recognise(browserName) {
			return k, true
		}
	}
	return Kind{}, false
}
