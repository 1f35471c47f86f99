package pulumistate

import (
	"strconv"
	"strings"

	"github.com/zclconf/go-cty/cty"
)

// pathString writes a property path as Pulumi writes one (`details[0].key`, `tags["a.b"]`).
func pathString(p cty.Path) string {
	var b strings.Builder
	for _, step := range p {
		switch s := step.(type) {
		case cty.GetAttrStep:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(s.Name)
		case cty.IndexStep:
			switch {
			case s.Key.Type() == cty.String:
				b.WriteString("[" + strconv.Quote(s.Key.AsString()) + "]")
			case s.Key.Type() == cty.Number:
				b.WriteString("[" + s.Key.AsBigFloat().Text('f', -1) + "]")
			}
		}
	}
	return b.String()
}

// pathSegments splits a property path in Pulumi's syntax (`a.b`, `a[0]`, `a["k"]`) into its
// keys and indexes, as a deployment's hideDiff lists them.
func pathSegments(path string) []any {
	var out []any
	for i := 0; i < len(path); {
		switch path[i] {
		case '.':
			i++
		case '[':
			end := strings.IndexByte(path[i:], ']')
			if end < 0 {
				return append(out, path[i:])
			}
			inner := path[i+1 : i+end]
			if n, err := strconv.Atoi(inner); err == nil {
				out = append(out, n)
			} else if u, err := strconv.Unquote(inner); err == nil {
				out = append(out, u)
			} else {
				out = append(out, inner)
			}
			i += end + 1
		default:
			j := i
			for j < len(path) && path[j] != '.' && path[j] != '[' {
				j++
			}
			out = append(out, path[i:j])
			i = j
		}
	}
	return out
}
