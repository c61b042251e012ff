package chromium

import "fmt"

// describe names a target for messages: "dedicated worker https://…".
func describe(typ, url string) string {
	kind := typ
	switch typ {
	case "worker":
		kind = "dedicated worker"
	case "iframe":
		kind = "out-of-process iframe"
	}
	if url == "" {
		return kind
	}
	return fmt.Sprintf("%s %s", kind, url)
}
