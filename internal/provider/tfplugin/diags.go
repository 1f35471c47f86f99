package tfplugin

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/diag"
	"github.com/cairn-dev/cairn/internal/value"
)

// pathString renders an attribute path as cairn's dotted property paths, which is what the
// engine shows next to a diagnostic and what CheckFailure.Property holds: attribute names and
// list or set indexes separated by dots ("rule.0.port"), map keys as ".key" too when they are
// plain words ("tags.env"). A key that would make the path ambiguous (anything but letters,
// digits, '_' and '-') is written as `["key"]` instead: `tags["kubernetes.io/name"]`.
func pathString(p cty.Path) string {
	var b strings.Builder
	for _, s := range p {
		switch s := s.(type) {
		case cty.GetAttrStep:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(s.Name)
		case cty.IndexStep:
			k := s.Key
			switch {
			case !k.IsKnown() || k.IsNull():
				b.WriteString(".?")
			case k.Type() == cty.String && plainKey(k.AsString()):
				if b.Len() > 0 {
					b.WriteByte('.')
				}
				b.WriteString(k.AsString())
			case k.Type() == cty.String:
				b.WriteString("[" + strconv.Quote(k.AsString()) + "]")
			case k.Type() == cty.Number:
				if b.Len() > 0 {
					b.WriteByte('.')
				}
				b.WriteString(k.AsBigFloat().Text('f', -1))
			default:
				b.WriteString("[?]") // a set element has no name
			}
		}
	}
	return b.String()
}

func plainKey(k string) bool {
	if k == "" {
		return false
	}
	for _, r := range k {
		if !(r == '_' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return false
		}
	}
	return true
}

// reason is a diagnostic as one line, "summary: detail", for CheckFailure.Reason.
func reason(d diag.Diagnostic) string {
	if d.Detail == "" {
		return d.Summary
	}
	return d.Summary + ": " + d.Detail
}

func errorDiag(path cty.Path, summary, detail string) diag.Diagnostic {
	return diag.Diagnostic{Severity: diag.Error, Summary: summary, Detail: detail, Path: pathString(path)}
}

// show renders a value for a diagnostic about a provider bug, as terraform does; unknowns show
// as "(known after apply)", and the callers never pass sensitive values.
func show(v cty.Value) string {
	v, _ = v.UnmarkDeep()
	switch {
	case v == cty.NilVal:
		return "(none)"
	case !v.IsKnown():
		return "(known after apply)"
	case v.IsNull():
		return "null"
	case v.Type() == cty.String:
		return strconv.Quote(v.AsString())
	case v.Type() == cty.Number:
		return value.FormatNumber(v.AsBigFloat())
	case v.Type() == cty.Bool:
		return strconv.FormatBool(v.True())
	}
	ty := v.Type()
	var parts []string
	switch {
	case ty.IsObjectType() || ty.IsMapType():
		for it := v.ElementIterator(); it.Next(); {
			k, e := it.Element()
			parts = append(parts, k.AsString()+" = "+show(e))
		}
		return "{" + strings.Join(parts, ", ") + "}"
	default:
		for it := v.ElementIterator(); it.Next(); {
			_, e := it.Element()
			parts = append(parts, show(e))
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
}

func bug(provider string) string {
	return fmt.Sprintf("This is a bug in the provider %s, which should be reported in the provider's own issue tracker.", provider)
}
