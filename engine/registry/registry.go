// Package registry is the list of the engines wdext knows. Adding an
// engine is adding its folder under engine/ and its line here.
package registry

import (
	"github.com/wdext/wdext/engine/chromium"
	"github.com/wdext/wdext/engine/firefox"
	"github.com/wdext/wdext/engine/kind"
	"github.com/wdext/wdext/engine/webkitgtk"
)

// Kinds are the registered engines, the default (wdext serve's --engine)
// first.
var Kinds = kind.List{
	chromium.Kind,
	webkitgtk.Kind,
	firefox.Kind,
}
