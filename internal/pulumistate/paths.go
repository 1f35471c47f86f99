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
