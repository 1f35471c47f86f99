package budget

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestYAMLText: what yamldecode is checked with before it decodes: alias bombs, recursive
// aliases, depth built through aliases and texts too big to parse are refused, each without
// being expanded; ordinary documents pass.
func TestYAMLText(t *testing.T) {
	var laughs strings.Builder
	laughs.WriteString("a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n")
	for i, n := range []string{"b", "c", "d", "e", "f", "g", "h", "i"} {
		p := string("abcdefgh"[i])
		fmt.Fprintf(&laughs, "%s: &%s [*%s, *%s, *%s, *%s, *%s, *%s, *%s, *%s, *%s]\n", n, n, p, p, p, p, p, p, p, p, p)
	}
	var deep strings.Builder
	deep.WriteString("l0: &l0 x\n")
	for i := 1; i < 300; i++ {
		fmt.Fprintf(&deep, "l%d: &l%d {k: *l%d}\n", i, i, i-1)
	}
	var many strings.Builder
	for i := range 60_000 { // 120,001 nodes, none through an alias: a big template, not a bomb
		fmt.Fprintf(&many, "k%d: v\n", i)
	}
	cases := map[string]struct {
		text, limit string
	}{
		"Plain":          {text: "a: 1\nb: [1, 2, 3]\n"},
		"ManyWritten":    {text: many.String()},
		"BillionLaughs":  {text: laughs.String(), limit: "alias-nodes"},
		"RecursiveAlias": {text: "a: &a [*a]\n", limit: "recursive"},
		"DeepByAliases":  {text: deep.String(), limit: "depth"},
		"TooBigToParse":  {text: "[" + strings.Repeat("a,", 5_000_000) + "a]", limit: "alias-nodes"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			m := From(context.Background()).Meter()
			err := YAMLText(m, tc.text)
			if tc.limit == "" {
				if err != nil {
					t.Fatalf("YAMLText: %v, want nil", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.limit) {
				t.Fatalf("YAMLText: %v, want an error naming %q", err, tc.limit)
			}
			var ne *YAMLNodeError
			if tc.limit != "alias-nodes" || name != "TooBigToParse" {
				if !errors.As(err, &ne) || ne.Node == nil {
					t.Errorf("YAMLText: %v carries no node to blame", err)
				}
			}
		})
	}
}
