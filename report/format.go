package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

func orAnon(name string) string {
	if name == "" {
		return "(anonymous)"
	}
	return name
}

// ms formats milliseconds for people.
func ms(v float64) string {
	a := math.Abs(v)
	switch {
	case a >= 10000:
		return strconv.FormatFloat(v/1000, 'f', 1, 64) + " s"
	case a >= 1000:
		return strconv.FormatFloat(v/1000, 'f', 2, 64) + " s"
	case a >= 10:
		return strconv.FormatFloat(v, 'f', 0, 64) + " ms"
	case a >= 1:
		return strconv.FormatFloat(v, 'f', 1, 64) + " ms"
	}
	return strconv.FormatFloat(v, 'f', 2, 64) + " ms"
}

// fit shortens a label to about width units, "" when not even two
// characters fit.
func fit(s string, width float64) string {
	s = orAnon(s)
	n := int(width / charPx)
	r := []rune(s)
	switch {
	case n < 2:
		return ""
	case len(r) <= n:
		return s
	}
	return string(r[:n-1]) + "…"
}

func abs64(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

// ByteSize formats bytes for people, in binary units (KiB, MiB).
func ByteSize(b int64) string {
	a := abs64(b)
	switch {
	case a >= 10<<20:
		return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20))
	case a >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20))
	case a >= 10<<10:
		return fmt.Sprintf("%.0f KiB", float64(b)/(1<<10))
	case a >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(b)/(1<<10))
	}
	return fmt.Sprintf("%d B", b)
}

func signedBytes(b int64) string {
	if b > 0 {
		return "+" + ByteSize(b)
	}
	return ByteSize(b)
}

func signed(n int64) string {
	if n > 0 {
		return "+" + thousands(n)
	}
	return thousands(n)
}

// thousands writes n with thin spaces between groups of three digits.
func thousands(n int64) string {
	s := strconv.FormatInt(abs64(n), 10)
	var b strings.Builder
	if n < 0 {
		b.WriteString("−")
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteString(",")
		}
		b.WriteRune(c)
	}
	return b.String()
}
