package tflang

import (
	"context"
	"testing"
	"time"

	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/budget"
	"github.com/cairn-dev/cairn/internal/template"
)

// fuzzLimits are small, so that what the fuzzer builds stays small too.
var fuzzLimits = budget.Limits{Elements: 100_000, Bytes: 1 << 20, Instances: 1000, Resources: 2000, Time: 2 * time.Second}

// FuzzParseEval parses an arbitrary configuration file (.tf.json when it starts with "{") and
// evaluates every local, output, provider and resource of its root module, with resources
// unknown and then known: nothing may panic, overflow the stack, or run on. The seeds in
// testdata/fuzz/FuzzParseEval are the inputs that took cairn down, made small, and ordinary
// configurations.
func FuzzParseEval(f *testing.F) {
	f.Add([]byte("locals {\n  a = [for i in range(3) : i * 2]\n}\noutput \"o\" { value = local.a }\n"))
	f.Fuzz(func(t *testing.T, src []byte) {
		name := "main.tf"
		if len(src) > 0 && src[0] == '{' {
			name = "main.tf.json"
		}
		start := time.Now()
		ctx, stop := budget.With(context.Background(), fuzzLimits)
		defer stop()
		fs := map[string][]byte{name: src}
		ld := newLoader(ctx, fs, ".")
		cfg, ds := ld.load(".")
		if cfg == nil || ds.HasErrors() {
			return
		}
		m := ld.newModule(cfg, nil, nil, key{})
		st, _ := m.build(Options{Validate: true})
		for _, sc := range []template.Scope{fuzzScope{ctx: ctx}, fuzzScope{ctx: ctx, known: true}} {
			for name, a := range m.locals {
				e := m.evaluator(sc, key{})
				e.local(name, a.NameRange)
				e.done()
			}
			if st == nil {
				continue
			}
			for _, o := range st.Outputs {
				o.Value.Eval(sc)
			}
			for _, p := range st.Providers {
				p.Config.Eval(sc)
			}
			for _, r := range st.Resources {
				r.Properties.Eval(sc)
			}
		}
		if took := time.Since(start); took > 20*time.Second {
			t.Errorf("parse and evaluation took %v", took)
		}
	})
}

// fuzzScope has every resource: unknown, or known with an id.
type fuzzScope struct {
	ctx   context.Context
	known bool
}

func (s fuzzScope) Resource(string) (template.ResourceValue, bool) {
	if !s.known {
		return template.UnknownResource, true
	}
	return template.ResourceValue{ID: cty.StringVal("x"), Outputs: cty.ObjectVal(map[string]cty.Value{"id": cty.StringVal("x")})}, true
}

func (s fuzzScope) Context() context.Context { return s.ctx }
