package pulumiyaml

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/cairn-dev/cairn/internal/diag"
	"github.com/cairn-dev/cairn/internal/template"
)

// SchemaFunc returns the package schema (GetSchema's JSON) of the Pulumi package whose
// requirement source is source (Source, ParameterizedSource) at version ("" for the newest
// installed). The engine gives one that reads it from the plugin cairn would run; without
// one, type tokens are used as written.
type SchemaFunc func(ctx context.Context, source, version string) ([]byte, error)

// packageTokens are the resource and function tokens a package schema declares, with the
// schema facts the front end applies (schemafacts.go).
type packageTokens struct {
	declaredResources map[string]bool
	functions         map[string]bool
	resources         map[string]*resourceFacts // by token
	provider          *resourceFacts            // the provider's own inputs and outputs
	scalarFunctions   map[string]bool           // functions that return one value, not an object
}

func decodeTokens(b []byte) (*packageTokens, error) {
	var doc schemaDoc
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("its schema is not valid JSON: %w", err)
	}
	t := &packageTokens{declaredResources: map[string]bool{}, functions: map[string]bool{},
		resources: map[string]*resourceFacts{}, scalarFunctions: map[string]bool{}}
	for tok, obj := range doc.Resources {
		t.declaredResources[tok] = true
		t.resources[tok] = doc.factsOf(obj)
	}
	if doc.Provider != nil {
		t.provider = doc.factsOf(*doc.Provider)
	}
	for tok, fn := range doc.Functions {
		t.functions[tok] = true
		if doc.scalarReturn(fn) {
			t.scalarFunctions[tok] = true
		}
	}
	return t, nil
}

// canonical resolves a type or function token the way pulumi-yaml does (packages.go,
// resolveToken): as written, then `pkg:Type` as `pkg:index:Type`, then `pkg:mod:Type` as
// `pkg:mod/type:Type`; each candidate exactly, then case-insensitively.
func canonical(token string, declared map[string]bool) (string, bool) {
	parts := strings.Split(token, ":")
	if len(parts) < 2 || len(parts) > 3 {
		return "", false
	}
	find := func(tok string) (string, bool) {
		if declared[tok] {
			return tok, true
		}
		for d := range declared {
			if strings.EqualFold(d, tok) {
				return d, true
			}
		}
		return "", false
	}
	if tok, ok := find(token); ok {
		return tok, true
	}
	if len(parts) == 2 {
		if tok, ok := find(parts[0] + ":index:" + parts[1]); ok {
			return tok, true
		}
		parts = []string{parts[0], "index", parts[1]}
	}
	return find(parts[0] + ":" + parts[1] + "/" + strings.ToLower(parts[2]) + ":" + parts[2])
}

// resolveTypes rewrites every resource's type token to the one its package's schema declares,
// so that rows, events and previews carry the canonical token (`simple:index:Resource`), as
// Pulumi's URNs do. A package whose schema cannot be read is reported once, at its first use.
func (p *parser) resolveTypes(ctx context.Context, st *template.Stack, schema SchemaFunc) {
	if schema == nil { // no plugin to ask: Pulumi YAML's shorthand pkg:Type is pkg:index:Type
		for _, r := range st.Resources {
			r.Type = canonicalType(r.Type)
		}
		return
	}
	byPkg := map[string]*packageTokens{}
	failed := map[string]bool{}
	tokensOf := func(pkg string, at diag.Range) *packageTokens {
		if t, ok := byPkg[pkg]; ok || failed[pkg] {
			return t
		}
		source, version := Source(pkg), ""
		if req := st.Requirement(pkg); req != nil {
			source, version = req.Source, req.Versions
		}
		b, err := schema(ctx, source, version)
		var t *packageTokens
		if err == nil {
			t, err = decodeTokens(b)
		}
		if err != nil {
			failed[pkg] = true
			p.ds = append(p.ds, diag.Errorf(at, "", "cannot read the schema of package %s: %s", pkg, err))
			return nil
		}
		byPkg[pkg] = t
		return t
	}
	for _, r := range st.Resources {
		if Package(r.Type) == "pulumi" { // the engine's own resources have no plugin schema
			r.Type = canonicalType(r.Type)
			continue
		}
		t := tokensOf(Package(r.Type), r.TypeRange)
		if t == nil {
			continue
		}
		if isProviderType(r.Type) { // pulumi:providers:<pkg> is every package's own
			p.applySchema(r, t)
			continue
		}
		if r.Mode == template.Data { // an invoke's function (invoke.go)
			tok, ok := canonical(r.Type, t.functions)
			if !ok {
				p.ds = append(p.ds, diag.Errorf(r.TypeRange, strings.TrimPrefix(r.Name, invokePrefix), "unable to find function %q in resource provider %q", r.Type, Package(r.Type)))
				continue
			}
			r.Type = tok
			p.applySchema(r, t)
			continue
		}
		tok, ok := canonical(r.Type, t.declaredResources)
		if !ok {
			p.ds = append(p.ds, diag.Errorf(r.TypeRange, "resources."+r.Name+".type", "unable to find resource type %q in resource provider %q", r.Type, Package(r.Type)))
			continue
		}
		r.Type = tok
		p.applySchema(r, t)
	}
}
