package webkitgtk

import "testing"

func TestInjectAfterPrologue(t *testing.T) {
	s := []byte("<script>X</script>")
	for _, c := range []struct{ in, want string }{
		{"<!DOCTYPE html><p>", "<!DOCTYPE html><script>X</script><p>"},
		{"\xef\xbb\xbf\n<!-- a -->\n<!doctype html>\n<title>", "\xef\xbb\xbf\n<!-- a -->\n<!doctype html><script>X</script>\n<title>"},
		{"<html><head>", "<script>X</script><html><head>"},
		{"", "<script>X</script>"},
		{"  <!-- unterminated", "  <script>X</script><!-- unterminated"},
	} {
		if got := string(inject([]byte(c.in), s)); got != c.want {
			t.Errorf("inject(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
