package egress

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// ExcerptBytes bounds an Excerpt (before its "…").
const ExcerptBytes = 200

// Excerpt is the start of an answer's body, safe to quote in an event or an error: at most
// ExcerptBytes bytes of valid UTF-8, line breaks and tabs as spaces, other control and format
// characters (bidirectional overrides, zero-width ones) as U+FFFD, and "…" when b was longer.
// Callers read at least ExcerptBytes+1 bytes of a longer body, so that the cut shows.
func Excerpt(b []byte) string {
	var sb strings.Builder
	cut := false
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:]) // invalid bytes decode as U+FFFD
		switch {
		case r == '\n' || r == '\r' || r == '\t':
			r = ' '
		case unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == '\u2028' || r == '\u2029':
			r = utf8.RuneError
		}
		if sb.Len()+utf8.RuneLen(r) > ExcerptBytes {
			cut = true
			break
		}
		sb.WriteRune(r)
		i += size
	}
	s := strings.TrimSpace(sb.String())
	if cut {
		s += "…"
	}
	return s
}
