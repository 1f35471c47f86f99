package tflang

import (
	"errors"
	"fmt"
	"path"
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/cairn-dev/cairn/internal/budget"
)

// fileset's patterns are terraform's: doublestar v1.1.5's Glob, which walks the directories
// and matches each name with backtracking (exponential in the number of `**` on a deep tree).
// cairn compiles the pattern once into an RE2 regular expression over the sent files' paths,
// matched in linear time, with Glob's semantics exactly:
//
//   - The pattern is split into components at each "/" not preceded by "\".
//   - A component of literal characters only names that entry.
//   - A component "**" matches zero or more directories; last, every file below. But the
//     component right after it is matched as an ordinary one, where "**" is the same as "*"
//     (so "**/**/b" needs b at least one directory down, as in terraform).
//   - Other components match one name: "*" any run of characters, "?" one, "[a-z]" and
//     "[^a-z]" one in (or not in) the class, "{a,b}" either alternative (up to the first "}",
//     split at each ","), "\c" the character c. A "*" that is not last must leave at least one
//     character to what follows it, and once the name is used up only "", "*" or "**" may be
//     left of the pattern: "ab*{,b}" matches "abb" but not "ab".
//
// A malformed pattern is an error here, whatever files exist; Glob reports it only when it
// reaches the malformed part.

var errBadPattern = errors.New("syntax error in pattern")

// maxGlobRegexp bounds a compiled pattern: alternatives expand what follows them.
const maxGlobRegexp = 64 << 10

// maxGlobPattern bounds a pattern's length (a path has at most 4096 bytes).
const maxGlobPattern = 16 << 10

// never matches nothing: an escaped "/" in a name.
const never = `[^\x00-\x{10FFFF}]`

// globCompileCost is what compiling costs per byte of the expression: RE2's program for
// the largest one allowed (alternatives of alternatives) takes ~200 times its size.
const globCompileCost = 200

// globRegexp compiles a cleaned, slash-separated pattern, charging m (when not nil) for the
// compiled program before it is compiled.
func globRegexp(pattern string, m *budget.Meter) (*regexp.Regexp, error) {
	g := &globCompiler{memo: map[string]string{}}
	if len(pattern) > maxGlobPattern {
		return nil, fmt.Errorf("%w: longer than %d bytes", errBadPattern, maxGlobPattern)
	}
	body := g.components(splitEscaped(pattern, '/'))
	if g.err != nil {
		return nil, g.err
	}
	if m != nil {
		if err := m.Bytes(int64(len(body))*globCompileCost, "fileset pattern"); err != nil {
			return nil, err
		}
		if err := m.Budget().Err(); err != nil {
			return nil, err
		}
	}
	return regexp.Compile(`^(?s:` + body + `)$`)
}

// globCache keeps the patterns fileset compiled (or refused) for one configuration's
// evaluations: a call in a loop compiles its pattern once.
type globCache struct {
	mu      sync.Mutex
	entries map[string]globEntry
}

type globEntry struct {
	re  *regexp.Regexp
	err error
}

// maxGlobCache bounds the patterns kept (each compiled one is at most a few MB).
const maxGlobCache = 32

// compile is globRegexp(pattern, m), kept unless the budget refused it (another evaluation
// may have the budget for it). A nil cache keeps nothing.
func (c *globCache) compile(pattern string, m *budget.Meter) (*regexp.Regexp, error) {
	if c == nil {
		return globRegexp(pattern, m)
	}
	c.mu.Lock()
	defer c.mu.Unlock() // one compile at a time: each is bounded, and a loop waits for the first
	if e, ok := c.entries[pattern]; ok {
		return e.re, e.err
	}
	re, err := globRegexp(pattern, m)
	if err != nil && !errors.Is(err, errBadPattern) {
		return nil, err
	}
	if len(c.entries) >= maxGlobCache {
		clear(c.entries)
	}
	if c.entries == nil {
		c.entries = map[string]globEntry{}
	}
	c.entries[pattern] = globEntry{re, err}
	return re, err
}

type globCompiler struct {
	memo map[string]string // nonEmpty by component pattern
	// size is the length of the expressions nonEmpty compiled; a memoized one is copied again
	// each time it is used, which components and the joins of alternatives bound
	size int
	err  error
}

// components is the expression of comps from a directory Glob starts in, no longer than
// maxGlobRegexp: the same component repeated is the same expression copied each time.
func (g *globCompiler) components(comps []string) string {
	var b strings.Builder
	for i := 0; i < len(comps) && g.err == nil; i++ {
		if b.Len() > maxGlobRegexp {
			g.tooBig()
			break
		}
		if i > 0 {
			b.WriteString("/")
		}
		c, last := comps[i], i == len(comps)-1
		switch {
		case c == "**" && last:
			b.WriteString(`[^/]+(?:/[^/]+)*`)
		case c == "**": // the next component is matched in each directory it reaches
			b.WriteString(`(?:[^/]+/)*`)
			i++
			b.WriteString(g.nonEmpty(comps[i]))
		case !strings.ContainsAny(c, `*?[{\`):
			b.WriteString(regexp.QuoteMeta(c))
		default:
			b.WriteString(g.nonEmpty(c))
		}
	}
	if b.Len() > maxGlobRegexp {
		g.tooBig()
	}
	return b.String()
}

// nonEmpty is the expression of the non-empty names component pattern p matches (names are
// never empty), following doublestar's matchComponent.
func (g *globCompiler) nonEmpty(p string) string {
	if g.err != nil {
		return never
	}
	if x, ok := g.memo[p]; ok {
		return x
	}
	x := g.compile(p)
	if g.size += len(x); g.size > maxGlobRegexp {
		g.tooBig()
		return never
	}
	g.memo[p] = x
	return x
}

func (g *globCompiler) tooBig() {
	if g.err == nil {
		g.err = fmt.Errorf("%w: too many alternatives", errBadPattern)
	}
}

// orEmpty is the expression of every name p matches, the empty one included: once the name
// is used up, only "", "*" and "**" match.
func (g *globCompiler) orEmpty(p string) string {
	switch p {
	case "":
		return ""
	case "*", "**":
		return `[^/]*`
	}
	return g.nonEmpty(p)
}

func (g *globCompiler) compile(p string) string {
	if p == "" {
		return never
	}
	// a run of single characters is matched one by one, then what follows: as the name may
	// be used up after any of them, orEmpty
	var b strings.Builder
	for p != "" && p[0] != '*' && p[0] != '{' {
		atom, size := g.atom(p)
		if g.err != nil {
			return never
		}
		b.WriteString(atom)
		p = p[size:]
	}
	if b.Len() > 0 {
		return b.String() + g.orEmpty(p)
	}
	switch p[0] {
	case '*':
		rest := p[1:]
		if rest == "" {
			return `[^/]+`
		}
		return `[^/]*` + g.nonEmpty(rest)
	default: // '{'
		end := indexUnescaped(p[1:], '}')
		if end < 0 {
			g.err = errBadPattern
			return never
		}
		opts, rest := splitEscaped(p[1:1+end], ','), p[2+end:]
		alts, n := make([]string, len(opts)), 0
		for i, o := range opts {
			alts[i] = g.nonEmpty(o + rest)
			if n += len(alts[i]) + 1; n > maxGlobRegexp { // alternatives alike are memoized
				g.tooBig()
				return never
			}
		}
		return `(?:` + strings.Join(alts, "|") + `)`
	}
}

// atom is the expression of the one character p's first element matches ("\c", "?", a
// class or a literal character), and the element's length.
func (g *globCompiler) atom(p string) (string, int) {
	r, n := utf8.DecodeRuneInString(p)
	switch r {
	case '\\':
		e, m := utf8.DecodeRuneInString(p[n:])
		if e == utf8.RuneError {
			g.err = errBadPattern
			return never, 0
		}
		return literal(e), n + m
	case '?':
		return `[^/]`, n
	case '[':
		end := indexUnescaped(p[n:], ']')
		if end < 0 {
			g.err = errBadPattern
			return never, 0
		}
		x, err := class([]rune(p[n : n+end]))
		if err != nil {
			g.err = err
			return never, 0
		}
		return x, n + end + 1
	}
	return literal(r), n
}

// literal is the expression of one character of a name ("/" is never one; an invalid byte
// reads as U+FFFD on both sides, as in doublestar).
func literal(r rune) string {
	if r == '/' {
		return never
	}
	return regexp.QuoteMeta(string(r))
}

// class is the expression of a character class's runes (between "[" and "]"), with
// doublestar's syntax: a leading "^" negates, "lo-hi" is a range, "\c" is c; never "/".
func class(rs []rune) (string, error) {
	if len(rs) == 0 {
		return "", errBadPattern
	}
	negate, i := rs[0] == '^', 0
	if negate {
		i++
	}
	next := func() (rune, error) {
		r := rs[i]
		i++
		if r == '\\' {
			if i >= len(rs) {
				return 0, errBadPattern
			}
			r = rs[i]
			i++
		}
		return r, nil
	}
	var b strings.Builder
	add := func(lo, hi rune) {
		if lo <= hi {
			fmt.Fprintf(&b, `\x{%x}-\x{%x}`, lo, hi)
		}
	}
	for i < len(rs) {
		if rs[i] == '-' {
			return "", errBadPattern
		}
		lo, err := next()
		if err != nil {
			return "", err
		}
		hi := lo
		if i < len(rs) && rs[i] == '-' {
			if i++; i >= len(rs) || rs[i] == '-' {
				return "", errBadPattern
			}
			if hi, err = next(); err != nil {
				return "", err
			}
		}
		if negate || hi < '/' || lo > '/' {
			add(lo, hi)
			continue
		}
		add(lo, '/'-1) // a name has no "/"
		add('/'+1, hi)
	}
	if negate {
		return `[^/` + b.String() + `]`, nil
	}
	if b.Len() == 0 {
		return never, nil
	}
	return `[` + b.String() + `]`, nil
}

// indexUnescaped is the index of the first r in s not right after a "\", or -1 (doublestar's
// indexRuneWithEscaping).
func indexUnescaped(s string, r byte) int {
	for i := 0; i < len(s); i++ {
		if s[i] == r && (i == 0 || s[i-1] != '\\') {
			return i
		}
	}
	return -1
}

// splitEscaped splits s at each sep not right after a "\" (doublestar's splitPathOnSeparator).
func splitEscaped(s string, sep byte) []string {
	var out []string
	for {
		i := indexUnescaped(s, sep)
		if i < 0 {
			return append(out, s)
		}
		out = append(out, s[:i])
		s = s[i+1:]
	}
}

// leadingParents counts the ".." components a clean path starts with.
func leadingParents(p string) int {
	n := 0
	for p == ".." || strings.HasPrefix(p, "../") {
		n++
		p = strings.TrimPrefix(strings.TrimPrefix(p, ".."), "/")
	}
	return n
}

// literalPrefix is the leading components of a clean pattern that hold no glob character,
// which Glob joins into the directory it starts from.
func literalPrefix(pattern string) string {
	comps := splitEscaped(pattern, '/')
	n := 0
	for n < len(comps) && !strings.ContainsAny(comps[n], `*?[{\`) {
		n++
	}
	return path.Join(comps[:n]...)
}
