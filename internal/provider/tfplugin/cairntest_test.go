package tfplugin

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/diag"
	"github.com/cairn-dev/cairn/internal/provider"
	"github.com/cairn-dev/cairn/internal/value"
	"github.com/cairn-dev/cairn/test/providerbin"
)

// These tests run cairn's own terraform-plugin-framework test provider (test/providers) built
// for protocol 5 and for protocol 6: nested blocks, a nested attribute (6 only), sensitive
// values, warnings, forced failures, drift, import and data sources.

var thing = provider.Resource{Type: "cairntest_thing", Name: "x"}

func cairntest(t *testing.T, protocol int) (*Provider, string) {
	t.Helper()
	p := New(Config{Name: "cairntest", Executable: providerbin.Cairntest(t, protocol)})
	t.Cleanup(func() { p.Close() })
	dir := t.TempDir()
	cfg := decodeConfig(t, p, provider.SchemaProvider, "", fmt.Sprintf("state_dir = %q\napi_token = \"tok\"", dir))
	resp, err := p.Configure(testCtx(t), provider.ConfigureRequest{Config: value.Secret(cfg)})
	noErrors(t, "Configure", resp.Diagnostics, err)
	if v := p.ProtocolVersion(); v != protocol {
		t.Fatalf("protocol = %d, want %d", v, protocol)
	}
	return p, dir
}

func eachProtocol(t *testing.T, f func(t *testing.T, protocol int)) {
	for _, v := range []int{5, 6} {
		t.Run(fmt.Sprintf("protocol%d", v), func(t *testing.T) { f(t, v) })
	}
}

func TestCairntestThingLifecycle(t *testing.T) {
	eachProtocol(t, func(t *testing.T, protocol int) {
		p, dir := cairntest(t, protocol)
		ctx := testCtx(t)
		src := `
name   = "alpha"
size   = 3
tags   = { env = "test" }
secret = "hunter2"
rule { port = 80 }
rule {
  port     = 443
  protocol = "udp"
}`
		if protocol == 6 {
			src += "\nsettings = { mode = \"fast\" }"
		}
		cfg := decodeConfig(t, p, provider.SchemaResource, "cairntest_thing", src)
		chk, err := p.Check(ctx, provider.CheckRequest{Resource: thing, Props: cfg})
		if err != nil || len(chk.Failures) > 0 || len(chk.Warnings) > 0 {
			t.Fatalf("Check = %+v, %v", chk, err)
		}
		pv, err := p.Diff(ctx, provider.DiffRequest{Resource: thing, NewProps: cfg})
		noErrors(t, "Diff(create)", pv.Diagnostics, err)
		if !pv.Changed || attr(pv.Planned, "id").IsKnown() || !value.IsSecret(attr(pv.Planned, "secret")) {
			t.Errorf("Diff(create) = %+v", pv)
		}

		cr, err := p.Create(ctx, provider.CreateRequest{Resource: thing, Props: cfg})
		noErrors(t, "Create", cr.Diagnostics, err)
		if len(cr.ID) != 16 || str(attr(cr.Outputs, "id")) != cr.ID {
			t.Fatalf("Create: id %q", cr.ID)
		}
		if _, err := os.Stat(filepath.Join(dir, "thing-"+cr.ID+".json")); err != nil {
			t.Errorf("thing file: %v", err)
		}
		sec := cr.Outputs.GetAttr("secret")
		if !value.IsSecret(sec) || value.IsSecret(cr.Outputs.GetAttr("name")) {
			t.Errorf("secret marks: secret %#v, name %#v", sec, cr.Outputs.GetAttr("name"))
		}
		rules := attr(cr.Outputs, "rule")
		if rules.LengthInt() != 2 || str(rules.Index(cty.NumberIntVal(0)).GetAttr("protocol")) != "tcp" || str(rules.Index(cty.NumberIntVal(1)).GetAttr("protocol")) != "udp" {
			t.Errorf("rule blocks = %#v", rules)
		}
		if protocol == 6 && str(attr(cr.Outputs, "settings").GetAttr("mode")) != "fast" {
			t.Errorf("settings = %#v", attr(cr.Outputs, "settings"))
		}
		outs := stored(t, cr.Outputs)
		if !value.IsSecret(outs.GetAttr("secret")) {
			t.Fatal("stored state lost the secret mark")
		}

		same, err := p.Diff(ctx, provider.DiffRequest{Resource: thing, ID: cr.ID, NewProps: cfg, OldOutputs: outs, Private: cr.Private})
		noErrors(t, "Diff(same)", same.Diagnostics, err)
		if same.Changed || same.Replace {
			t.Errorf("Diff(same) = %+v", same)
		}

		cfg2 := decodeConfig(t, p, provider.SchemaResource, "cairntest_thing", strings.Replace(src, "size   = 3", "size   = 4", 1))
		d, err := p.Diff(ctx, provider.DiffRequest{Resource: thing, ID: cr.ID, NewProps: cfg2, OldOutputs: outs, Private: cr.Private})
		noErrors(t, "Diff(size)", d.Diagnostics, err)
		if !d.Changed || d.Replace || !slices.Equal(d.ChangedKeys, []string{"revision", "size"}) || attr(d.Planned, "revision").IsKnown() {
			t.Errorf("Diff(size) = %+v; want an in-place change of size (and revision unknown)", d)
		}
		up, err := p.Update(ctx, provider.UpdateRequest{Resource: thing, ID: cr.ID, NewProps: cfg2, OldOutputs: outs, Private: cr.Private})
		noErrors(t, "Update", up.Diagnostics, err)
		if up.ID != cr.ID || attr(up.Outputs, "revision").AsBigFloat().String() != "2" || attr(up.Outputs, "size").AsBigFloat().String() != "4" {
			t.Errorf("Update = %+v", up)
		}
		outs = stored(t, up.Outputs)

		cfg3 := decodeConfig(t, p, provider.SchemaResource, "cairntest_thing", strings.Replace(src, `"alpha"`, `"beta"`, 1))
		r, err := p.Diff(ctx, provider.DiffRequest{Resource: thing, ID: cr.ID, NewProps: cfg3, OldOutputs: outs, Private: up.Private})
		noErrors(t, "Diff(name)", r.Diagnostics, err)
		if !r.Replace || !slices.Equal(r.ReplacePaths, []string{"name"}) || attr(r.Planned, "id").IsKnown() {
			t.Errorf("Diff(name) = %+v; want a replacement forced by name", r)
		}
		bad, err := p.Update(ctx, provider.UpdateRequest{Resource: thing, ID: cr.ID, NewProps: cfg3, OldOutputs: outs, Private: up.Private})
		if err != nil || !bad.Diagnostics.HasErrors() || !strings.Contains(bad.Diagnostics.Err().Error(), "must be replaced") {
			t.Errorf("Update(name) = %+v, %v; want the replacement refused", bad, err)
		}

		rd, err := p.Read(ctx, provider.ReadRequest{Resource: thing, ID: cr.ID, Outputs: outs, Private: up.Private})
		noErrors(t, "Read", rd.Diagnostics, err)
		if rd.ID != cr.ID || !value.IsSecret(rd.Outputs.GetAttr("secret")) {
			t.Errorf("Read = %+v", rd)
		}
		im, err := p.Import(ctx, provider.ImportRequest{Resource: thing, ID: cr.ID})
		noErrors(t, "Import", im.Diagnostics, err)
		if im.ID != cr.ID || str(attr(im.Outputs, "name")) != "alpha" || attr(im.Outputs, "rule").LengthInt() != 2 {
			t.Errorf("Import = %+v", im)
		}

		del, err := p.Delete(ctx, provider.DeleteRequest{Resource: thing, ID: cr.ID, Outputs: outs, Private: up.Private})
		noErrors(t, "Delete", del.Diagnostics, err)
		if _, err := os.Stat(filepath.Join(dir, "thing-"+cr.ID+".json")); !os.IsNotExist(err) {
			t.Errorf("thing file after Delete: %v", err)
		}
		gone, err := p.Read(ctx, provider.ReadRequest{Resource: thing, ID: cr.ID, Outputs: outs, Private: up.Private})
		noErrors(t, "Read(gone)", gone.Diagnostics, err)
		if gone.ID != "" {
			t.Errorf("Read(gone) = %+v; want an empty ID", gone)
		}
		missing, err := p.Import(ctx, provider.ImportRequest{Resource: thing, ID: cr.ID})
		if err != nil || !missing.Diagnostics.HasErrors() || !strings.Contains(missing.Diagnostics.Err().Error(), "non-existent") {
			t.Errorf("Import(missing) = %+v, %v", missing, err)
		}
	})
}

func TestCairntestCheckAndFailures(t *testing.T) {
	eachProtocol(t, func(t *testing.T, protocol int) {
		p, _ := cairntest(t, protocol)
		ctx := testCtx(t)
		check := func(src string) provider.CheckResponse {
			t.Helper()
			resp, err := p.Check(ctx, provider.CheckRequest{Resource: thing, Props: decodeConfig(t, p, provider.SchemaResource, "cairntest_thing", src)})
			if err != nil {
				t.Fatal(err)
			}
			return resp
		}
		w := check(`
name = "a"
size = 200`)
		if len(w.Failures) != 0 || len(w.Warnings) != 1 || w.Warnings[0].Property != "size" || !strings.HasPrefix(w.Warnings[0].Reason, "size is large: ") {
			t.Errorf("Check(size 200) = %+v", w)
		}
		f := check(`
name = "a"
rule { port = 1 }
rule { port = 70000 }`)
		if len(f.Failures) != 1 || f.Failures[0].Property != "rule.1.port" {
			t.Errorf("Check(port 70000) = %+v; want a failure on rule.1.port", f)
		}
		f = check(`
name    = "a"
fail_on = "bogus"`)
		if len(f.Failures) != 1 || f.Failures[0].Property != "fail_on" {
			t.Errorf("Check(fail_on bogus) = %+v", f)
		}
		// a partial create: the thing exists, the create failed
		cfg := decodeConfig(t, p, provider.SchemaResource, "cairntest_thing", `
name    = "partial"
fail_on = "create_partial"`)
		cr, err := p.Create(ctx, provider.CreateRequest{Resource: thing, Props: cfg})
		if err != nil || !cr.Diagnostics.HasErrors() || cr.ID == "" || cr.Outputs == cty.NilVal || str(attr(cr.Outputs, "name")) != "partial" {
			t.Errorf("Create(create_partial) = %+v, %v; want the error and the object", cr, err)
		}
		cfg = decodeConfig(t, p, provider.SchemaResource, "cairntest_thing", `
name    = "warned"
fail_on = "warn"`)
		cr, err = p.Create(ctx, provider.CreateRequest{Resource: thing, Props: cfg})
		noErrors(t, "Create(warn)", cr.Diagnostics, err)
		if len(cr.Diagnostics) == 0 || cr.Diagnostics[0].Severity != diag.Warning {
			t.Errorf("Create(warn) diagnostics = %v", cr.Diagnostics)
		}
		cfg = decodeConfig(t, p, provider.SchemaResource, "cairntest_thing", `
name    = "nope"
fail_on = "create"`)
		cr, err = p.Create(ctx, provider.CreateRequest{Resource: thing, Props: cfg})
		if err != nil || !cr.Diagnostics.HasErrors() || cr.ID != "" || cr.Diagnostics[0].Summary != "cairntest: forced failure" {
			t.Errorf("Create(create) = %+v, %v", cr, err)
		}
	})
}

func TestCairntestData(t *testing.T) {
	eachProtocol(t, func(t *testing.T, protocol int) {
		p, _ := cairntest(t, protocol)
		ctx := testCtx(t)
		echo := provider.Resource{Type: "cairntest_echo", Name: "e"}
		cfg := decodeConfig(t, p, provider.SchemaData, "cairntest_echo", `input = "héllo"`)
		r, err := p.ReadData(ctx, provider.ReadDataRequest{Resource: echo, Config: cfg})
		noErrors(t, "ReadData", r.Diagnostics, err)
		if str(attr(r.State, "output")) != "héllo" || attr(r.State, "length").AsBigFloat().String() != "5" {
			t.Errorf("ReadData = %#v", r.State)
		}
		// a preview with an unknown input: not read; the configuration with unknown results
		unk := cty.ObjectVal(map[string]cty.Value{"input": cty.UnknownVal(cty.String)})
		r, err = p.ReadData(ctx, provider.ReadDataRequest{Resource: echo, Config: unk})
		noErrors(t, "ReadData(unknown)", r.Diagnostics, err)
		if r.State.IsWhollyKnown() || !r.State.Type().Equals(cfg.Type()) || attr(r.State, "output").IsKnown() {
			t.Errorf("ReadData(unknown) = %#v", r.State)
		}
		r, err = p.ReadData(ctx, provider.ReadDataRequest{Resource: provider.Resource{Type: "cairntest_thing"},
			Config: decodeConfig(t, p, provider.SchemaData, "cairntest_thing", `id = "0000000000000000"`)})
		if err != nil || !r.Diagnostics.HasErrors() || r.Diagnostics[0].Path != "id" || r.Diagnostics[0].Summary != "cairntest: thing not found" {
			t.Errorf("ReadData(missing thing) = %+v, %v", r, err)
		}
		r, err = p.ReadData(ctx, provider.ReadDataRequest{Resource: echo, Config: cty.EmptyObjectVal})
		if err != nil || !r.Diagnostics.HasErrors() || r.Diagnostics[0].Path != "input" {
			t.Errorf("ReadData(no input) = %+v, %v; want a missing-argument error on input", r, err)
		}
	})
}

func TestCairntestConfigureFails(t *testing.T) {
	p := New(Config{Name: "cairntest", Executable: providerbin.Cairntest(t, 6)})
	defer p.Close()
	cfg := decodeConfig(t, p, provider.SchemaProvider, "", `fail_configure = "no way"`)
	resp, err := p.Configure(testCtx(t), provider.ConfigureRequest{Config: cfg})
	if err != nil || !resp.Diagnostics.HasErrors() || resp.Diagnostics[0].Summary != "no way" {
		t.Errorf("Configure = %+v, %v", resp, err)
	}
}
