package leaks

// unnamedHandlers are the new functions that the listeners' target
// (Target "Window" or "Document") holds by an internal edge: the
// handlers of an engine that names none (WebKit's inspector), since
// JavaScriptCore's window and document wrappers hold their listeners'
// functions that way (measured on WebKitGTK 2.50.6: Window → (internal)
// → Function → context → the closure's scope). Only functions with a
// scope of their own count (an internal "context" edge, as FromJSC names
// it), so that a built-in the global object made on first use, whose
// scope is the global, is not taken for a handler.
func (c *comparison) unnamedHandlers(target string) []int {
	var out []int
	for _, t := range c.targetNodes(target) {
		for e := range c.f.Edges(t) {
			if e.Type == "internal" && c.f.Type(e.To) == "closure" && c.isNew(e.To) && c.hasScope(e.To) {
				out = append(out, e.To)
			}
		}
	}
	return out
}

// targetNodes are the nodes of a listeners' target: the page's Window
// objects, or the documents they hold as "document".
func (c *comparison) targetNodes(target string) []int {
	var windows []int
	for _, g := range c.globals {
		if globalName(c.f, g) == "Window" {
			windows = append(windows, g)
		}
	}
	if target == "Window" {
		return windows
	}
	if target != "Document" {
		return nil
	}
	var docs []int
	for _, w := range windows {
		for e := range c.f.Edges(w) {
			if e.Type == "property" && e.Name == "document" {
				docs = append(docs, e.To)
			}
		}
	}
	return docs
}

// hasScope tells whether function fn has a scope of its own.
func (c *comparison) hasScope(fn int) bool {
	for e := range c.f.Edges(fn) {
		if e.Type == "internal" && e.Name == "context" {
			return true
		}
	}
	return false
}
