package tfinstall

import (
	"fmt"
	"sort"

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
