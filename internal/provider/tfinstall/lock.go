package tfinstall

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/gohcl"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/addr"
	"github.com/cairn-dev/cairn/internal/diag"
)

// Lock is a dependency lock file (.terraform.lock.hcl), in terraform's format.
type Lock struct {
	Providers map[addr.Provider]LockedProvider
}

// LockedProvider is one provider's chosen version.
type LockedProvider struct {
	Version     string
	Constraints string
	Hashes      []string
}

type lockFile struct {
	Providers []struct {
		Source      string   `hcl:"source,label"`
		Version     string   `hcl:"version"`
		Constraints string   `hcl:"constraints,optional"`
		Hashes      []string `hcl:"hashes,optional"`
	} `hcl:"provider,block"`
}

// ParseLock reads a lock file.
func ParseLock(filename string, src []byte) (*Lock, diag.Diagnostics) {
	l := &Lock{Providers: map[addr.Provider]LockedProvider{}}
	f, ds := hclsyntax.ParseConfig(src, filename, hcl.InitialPos)
	var lf lockFile
	if !ds.HasErrors() {
		ds = gohcl.DecodeBody(f.Body, nil, &lf)
	}
	var out diag.Diagnostics
	for _, d := range ds {
		cd := diag.Diagnostic{Summary: d.Summary, Detail: d.Detail}
		if d.Subject != nil {
			cd.Range = diag.Range{Filename: d.Subject.Filename, Line: d.Subject.Start.Line, Column: d.Subject.Start.Column}
		}
		out = append(out, cd)
	}
	for _, p := range lf.Providers {
		src, err := addr.ParseProvider(p.Source)
		if err != nil {
			out = append(out, diag.Errorf(diag.Range{Filename: filename}, "", "invalid provider address in lock file: %s", err))
			continue
		}
		l.Providers[src] = LockedProvider{Version: p.Version, Constraints: p.Constraints, Hashes: p.Hashes}
	}
	return l, out
}

// Bytes writes the lock file as terraform does.
func (l *Lock) Bytes() []byte {
	f := hclwrite.NewEmptyFile()
	body := f.Body()
	var srcs []addr.Provider
	for s := range l.Providers {
		srcs = append(srcs, s)
	}
	sort.Slice(srcs, func(i, j int) bool { return srcs[i].String() < srcs[j].String() })
	for i, s := range srcs {
		if i > 0 {
			body.AppendNewline()
		}
		p := l.Providers[s]
		b := body.AppendNewBlock("provider", []string{s.String()}).Body()
		b.SetAttributeValue("version", cty.StringVal(p.Version))
		if p.Constraints != "" {
			b.SetAttributeValue("constraints", cty.StringVal(p.Constraints))
		}
		if len(p.Hashes) > 0 {
			toks := hclwrite.Tokens{{Type: hclsyntax.TokenOBrack, Bytes: []byte("[")}, {Type: hclsyntax.TokenNewline, Bytes: []byte("\n")}}
			for _, h := range p.Hashes {
				toks = append(toks, hclwrite.TokensForValue(cty.StringVal(h))...)
				toks = append(toks, &hclwrite.Token{Type: hclsyntax.TokenComma, Bytes: []byte(",")}, &hclwrite.Token{Type: hclsyntax.TokenNewline, Bytes: []byte("\n")})
			}
			toks = append(toks, &hclwrite.Token{Type: hclsyntax.TokenCBrack, Bytes: []byte("]")})
			b.SetAttributeRaw("hashes", toks)
		}
	}
	return []byte(fmt.Sprintf("# This file is maintained automatically by \"terraform init\".\n# Manual edits may be lost in future updates.\n\n%s", hclwrite.Format(f.Bytes())))
}

// VersionConstraintsString renders version constraints as terraform records them in a lock
// file (its getproviders.VersionConstraintsString): each term with every version part
// written out (">= 0.14" is ">= 0.14.0") except a two-part "~>", which keeps two; "="
// dropped; duplicates removed; terms sorted by version, then by operator (> >= = ~> <= < !=),
// and joined by ", ". Constraints that terraform's Ruby-style syntax does not accept are
// returned trimmed but otherwise as written.
func VersionConstraintsString(constraints string) string {
	if strings.TrimSpace(constraints) == "" {
		return ""
	}
	var terms []constraintTerm
	seen := map[string]bool{}
	for _, s := range strings.Split(constraints, ",") {
		t, ok := parseConstraintTerm(strings.TrimSpace(s))
		if !ok {
			return strings.TrimSpace(constraints)
		}
		if k := t.String(); !seen[k] {
			seen[k] = true
			terms = append(terms, t)
		}
	}
	sort.SliceStable(terms, func(i, j int) bool {
		if c := terms[i].compare(terms[j]); c != 0 {
			return c < 0
		}
		return opPriority[terms[i].op] < opPriority[terms[j].op]
	})
	out := make([]string, len(terms))
	for i, t := range terms {
		out[i] = t.String()
	}
	return strings.Join(out, ", ")
}

// constraintTerm is one comma-separated term of a constraint. An omitted version part is
// zero, which is how terraform writes it back.
type constraintTerm struct {
	op        string // ">", ">=", "=", "~>" with three parts, "~", "<=", "<", "!="; "~" is "~>" with one or two
	num       [3]uint64
	pre, meta string
}

// opPriority orders terms with the same version, as terraform does.
var opPriority = map[string]int{">": 1, ">=": 2, "=": 3, "~>": 4, "~": 5, "<=": 6, "<": 7, "!=": 8}

// constraintTermRe is the Ruby-style syntax terraform parses required_providers versions
// with: an operator, at most one space, one to three numbers, then optional prerelease and
// build metadata.
var constraintTermRe = regexp.MustCompile(`^(|=|!=|>|>=|<|<=|~>) ?([0-9]+)(?:\.([0-9]+))?(?:\.([0-9]+))?(?:-([0-9A-Za-z.-]+))?(?:\+([0-9A-Za-z.-]+))?$`)

func parseConstraintTerm(s string) (constraintTerm, bool) {
	m := constraintTermRe.FindStringSubmatch(s)
	if m == nil {
		return constraintTerm{}, false
	}
	t := constraintTerm{op: m[1], pre: m[5], meta: m[6]}
	if t.op == "" {
		t.op = "="
	}
	if t.op == "~>" && m[4] == "" {
		t.op = "~"
	}
	for i, n := range m[2:5] {
		if n == "" {
			continue
		}
		v, err := strconv.ParseUint(n, 10, 64)
		if err != nil {
			return constraintTerm{}, false
		}
		t.num[i] = v
	}
	return t, true
}

func (t constraintTerm) String() string {
	var b strings.Builder
	switch t.op {
	case "=":
	case "~":
		b.WriteString("~> ")
	default:
		b.WriteString(t.op + " ")
	}
	if t.op == "~" {
		fmt.Fprintf(&b, "%d.%d", t.num[0], t.num[1])
	} else {
		fmt.Fprintf(&b, "%d.%d.%d", t.num[0], t.num[1], t.num[2])
	}
	if t.pre != "" {
		b.WriteString("-" + t.pre)
	}
	if t.meta != "" {
		b.WriteString("+" + t.meta)
	}
	return b.String()
}

// compare orders the versions of two terms by semver precedence, then by build metadata.
func (t constraintTerm) compare(u constraintTerm) int {
	for i := range t.num {
		if t.num[i] != u.num[i] {
			if t.num[i] < u.num[i] {
				return -1
			}
			return 1
		}
	}
	switch {
	case t.pre == u.pre:
	case t.pre == "":
		return 1
	case u.pre == "":
		return -1
	default:
		if c := compareIdentifiers(t.pre, u.pre); c != 0 {
			return c
		}
	}
	return compareIdentifiers(t.meta, u.meta)
}

// compareIdentifiers compares dot-separated semver identifiers: numeric ones numerically
// and below alphanumeric ones, which compare as text; a shorter list sorts first.
func compareIdentifiers(a, b string) int {
	if a == b {
		return 0
	}
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(as) && i < len(bs); i++ {
		x, xerr := strconv.ParseUint(as[i], 10, 64)
		y, yerr := strconv.ParseUint(bs[i], 10, 64)
		switch {
		case xerr == nil && yerr == nil:
			if x != y {
				if x < y {
					return -1
				}
				return 1
			}
		case xerr == nil:
			return -1
		case yerr == nil:
			return 1
		default:
			if c := strings.Compare(as[i], bs[i]); c != 0 {
				return c
			}
		}
	}
	switch {
	case len(as) < len(bs):
		return -1
	case len(as) > len(bs):
		return 1
	}
	return 0
}
