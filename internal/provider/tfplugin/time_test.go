package tfplugin

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/provider"
	"github.com/cairn-dev/cairn/test/providerbin"
)

// These tests run the real hashicorp/time provider v0.14.2 (protocol 5), built from the Go
// module proxy and cached by test/providerbin.

func timeProvider(t *testing.T) *Provider {
	t.Helper()
	p := New(Config{Name: "time", Executable: providerbin.Time(t)})
	t.Cleanup(func() { p.Close() })
	resp, err := p.Configure(testCtx(t), provider.ConfigureRequest{})
	noErrors(t, "Configure", resp.Diagnostics, err)
	return p
}

var timeStatic = provider.Resource{Type: "time_static", Name: "t"}

func TestTimeSchema(t *testing.T) {
	p := timeProvider(t)
	if v := p.ProtocolVersion(); v != 5 {
		t.Errorf("protocol = %d, want 5", v)
	}
	s, err := p.Schema(testCtx(t), provider.SchemaRequest{Kind: provider.SchemaResource, Type: "time_static"})
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]cty.Type{"id": cty.String, "rfc3339": cty.String, "triggers": cty.Map(cty.String), "year": cty.Number, "unix": cty.Number} {
		if !s.ImpliedType.HasAttribute(name) || !s.ImpliedType.AttributeType(name).Equals(want) {
			t.Errorf("time_static.%s: type %#v, want %#v", name, s.ImpliedType, want)
		}
	}
	cfg := decodeConfig(t, p, provider.SchemaResource, "time_static", `triggers = { k = "a" }`)
	if !cfg.Type().Equals(s.ImpliedType) || str(attr(cfg, "triggers").Index(cty.StringVal("k"))) != "a" || !attr(cfg, "year").IsNull() {
		t.Errorf("decoded config = %#v", cfg)
	}
	_, err = p.Schema(testCtx(t), provider.SchemaRequest{Kind: provider.SchemaResource, Type: "time_nope"})
	if err == nil || !strings.Contains(err.Error(), `"time_nope"`) || !strings.Contains(err.Error(), "time_offset, time_rotating, time_sleep, time_static") {
		t.Errorf("Schema(time_nope) error = %v; want it to name the type and list the served ones, sorted", err)
	}
	ps, err := p.Schema(testCtx(t), provider.SchemaRequest{Kind: provider.SchemaProvider})
	if err != nil || !ps.ImpliedType.Equals(cty.EmptyObject) {
		t.Errorf("provider schema = %#v, %v", ps.ImpliedType, err)
	}
}

func TestTimeCheck(t *testing.T) {
	p := timeProvider(t)
	ctx := testCtx(t)
	ok := decodeConfig(t, p, provider.SchemaResource, "time_static", `triggers = { k = "a" }`)
	resp, err := p.Check(ctx, provider.CheckRequest{Resource: timeStatic, Props: ok})
	if err != nil || len(resp.Failures) > 0 || len(resp.Warnings) > 0 {
		t.Fatalf("Check(valid) = %+v, %v", resp, err)
	}
	unknown := cty.ObjectVal(map[string]cty.Value{"triggers": cty.UnknownVal(cty.Map(cty.String)), "rfc3339": cty.UnknownVal(cty.String)})
	if resp, err := p.Check(ctx, provider.CheckRequest{Resource: timeStatic, Props: unknown}); err != nil || len(resp.Failures) > 0 {
		t.Fatalf("Check(unknowns) = %+v, %v", resp, err)
	}
	bad := decodeConfig(t, p, provider.SchemaResource, "time_static", `rfc3339 = "yesterday"`)
	resp, err = p.Check(ctx, provider.CheckRequest{Resource: timeStatic, Props: bad})
	if err != nil || len(resp.Failures) != 1 || resp.Failures[0].Property != "rfc3339" || !strings.Contains(resp.Failures[0].Reason, ": ") {
		t.Fatalf("Check(bad rfc3339) = %+v, %v; want one failure on rfc3339 with summary: detail", resp, err)
	}
	// values from another dialect: a read-only attribute set, an unknown argument
	other := cty.ObjectVal(map[string]cty.Value{"year": cty.NumberIntVal(2020), "nope": cty.True})
	resp, err = p.Check(ctx, provider.CheckRequest{Resource: timeStatic, Props: other})
	if err != nil || len(resp.Failures) != 2 {
		t.Fatalf("Check(other dialect) = %+v, %v; want two failures", resp, err)
	}
	props := []string{resp.Failures[0].Property, resp.Failures[1].Property}
	slices.Sort(props)
	if !slices.Equal(props, []string{"nope", "year"}) {
		t.Errorf("failure properties = %v", props)
	}
}

// TestTimeStaticLifecycle creates a time_static, plans a no-op and a replacement, reads,
// imports and deletes it, with the state passed through cairn's JSON storage in between.
func TestTimeStaticLifecycle(t *testing.T) {
	p := timeProvider(t)
	ctx := testCtx(t)
	cfg := decodeConfig(t, p, provider.SchemaResource, "time_static", `triggers = { k = "a" }`)
	cr, err := p.Create(ctx, provider.CreateRequest{Resource: timeStatic, Props: cfg})
	noErrors(t, "Create", cr.Diagnostics, err)
	if cr.ID == "" || str(attr(cr.Outputs, "rfc3339")) != cr.ID || str(attr(cr.Outputs, "id")) != cr.ID {
		t.Fatalf("Create: id %q, state %#v", cr.ID, cr.Outputs)
	}
	for _, name := range []string{"year", "month", "day", "unix"} {
		if v := attr(cr.Outputs, name); v.IsNull() || !v.IsKnown() {
			t.Errorf("Create: computed %s = %#v", name, v)
		}
	}
	var env privateEnvelope
	if err := json.Unmarshal(cr.Private, &env); err != nil || env.Version != 0 {
		t.Errorf("Private = %s (%v); want the envelope with schema version 0", cr.Private, err)
	}
	outs := stored(t, cr.Outputs)

	same, err := p.Diff(ctx, provider.DiffRequest{Resource: timeStatic, ID: cr.ID, NewProps: cfg, OldOutputs: outs, Private: cr.Private})
	noErrors(t, "Diff(same)", same.Diagnostics, err)
	if same.Changed || same.Replace || len(same.ChangedKeys) > 0 {
		t.Errorf("Diff(same) = %+v; want no change", same)
	}
	// without cairn's envelope (state from elsewhere) the state goes through UpgradeResourceState
	noEnv, err := p.Diff(ctx, provider.DiffRequest{Resource: timeStatic, ID: cr.ID, NewProps: cfg, OldOutputs: outs})
	noErrors(t, "Diff(no envelope)", noEnv.Diagnostics, err)
	if noEnv.Changed {
		t.Errorf("Diff(no envelope) = %+v; want no change", noEnv)
	}

	cfg2 := decodeConfig(t, p, provider.SchemaResource, "time_static", `triggers = { k = "b" }`)
	d, err := p.Diff(ctx, provider.DiffRequest{Resource: timeStatic, ID: cr.ID, NewProps: cfg2, OldOutputs: outs, Private: cr.Private})
	noErrors(t, "Diff(triggers)", d.Diagnostics, err)
	// terraform 1.11.4 shows the same: triggers and rfc3339 (which the provider plans unknown)
	// "# forces replacement"
	if !d.Changed || !d.Replace || !slices.Equal(d.ReplacePaths, []string{"rfc3339", "triggers"}) {
		t.Errorf("Diff(triggers) = %+v; want a replacement for triggers", d)
	}
	if attr(d.Planned, "rfc3339").IsKnown() || !slices.Contains(d.ChangedKeys, "triggers") {
		t.Errorf("Diff(triggers): planned %#v, changed keys %v", d.Planned, d.ChangedKeys)
	}

	// a create preview: no prior state, unknown configuration
	pv, err := p.Diff(ctx, provider.DiffRequest{Resource: timeStatic, NewProps: cty.ObjectVal(map[string]cty.Value{
		"triggers": cty.UnknownVal(cty.Map(cty.String))})})
	noErrors(t, "Diff(create preview)", pv.Diagnostics, err)
	if !pv.Changed || pv.Replace || attr(pv.Planned, "id").IsKnown() {
		t.Errorf("Diff(create preview) = %+v", pv)
	}

	rd, err := p.Read(ctx, provider.ReadRequest{Resource: timeStatic, ID: cr.ID, Outputs: outs, Private: cr.Private})
	noErrors(t, "Read", rd.Diagnostics, err)
	if rd.ID != cr.ID || !attr(rd.Outputs, "year").RawEquals(attr(cr.Outputs, "year")) {
		t.Errorf("Read = %+v", rd)
	}

	del, err := p.Delete(ctx, provider.DeleteRequest{Resource: timeStatic, ID: cr.ID, Outputs: outs, Private: cr.Private})
	noErrors(t, "Delete", del.Diagnostics, err)
}

func TestTimeImport(t *testing.T) {
	p := timeProvider(t)
	ctx := testCtx(t)
	im, err := p.Import(ctx, provider.ImportRequest{Resource: timeStatic, ID: "2024-01-02T03:04:05Z"})
	noErrors(t, "Import", im.Diagnostics, err)
	if im.ID != "2024-01-02T03:04:05Z" || attr(im.Outputs, "year").AsBigFloat().String() != "2024" || len(im.Private) == 0 {
		t.Errorf("Import = %+v", im)
	}
	// As with terraform 1.11.4, the imported object has triggers = {}, so a configuration without
	// triggers replaces it; the replacement is planned as a create, whose other attributes the
	// provider knows from rfc3339 (terraform: "8 unchanged attributes hidden").
	cfg := decodeConfig(t, p, provider.SchemaResource, "time_static", `rfc3339 = "2024-01-02T03:04:05Z"`)
	d, err := p.Diff(ctx, provider.DiffRequest{Resource: timeStatic, ID: im.ID, NewProps: cfg, OldOutputs: stored(t, im.Outputs), Private: im.Private})
	noErrors(t, "Diff(imported)", d.Diagnostics, err)
	if !d.Replace || !slices.Equal(d.ReplacePaths, []string{"triggers"}) || !slices.Equal(d.ChangedKeys, []string{"triggers"}) {
		t.Errorf("Diff(imported) = %+v; want a replacement for triggers only", d)
	}
	bad, err := p.Import(ctx, provider.ImportRequest{Resource: timeStatic, ID: "not a time"})
	if err != nil || !bad.Diagnostics.HasErrors() || bad.ID != "" {
		t.Errorf("Import(bad id) = %+v, %v; want the provider's error diagnostic", bad, err)
	}
}

// TestTimeOffsetUpdate updates a time_offset in place.
func TestTimeOffsetUpdate(t *testing.T) {
	p := timeProvider(t)
	ctx := testCtx(t)
	res := provider.Resource{Type: "time_offset", Name: "o"}
	cfg := decodeConfig(t, p, provider.SchemaResource, "time_offset", `
base_rfc3339 = "2024-01-01T00:00:00Z"
offset_days  = 1`)
	cr, err := p.Create(ctx, provider.CreateRequest{Resource: res, Props: cfg})
	noErrors(t, "Create", cr.Diagnostics, err)
	if got := str(attr(cr.Outputs, "rfc3339")); got != "2024-01-02T00:00:00Z" {
		t.Fatalf("rfc3339 = %s", got)
	}
	cfg2 := decodeConfig(t, p, provider.SchemaResource, "time_offset", `
base_rfc3339 = "2024-01-01T00:00:00Z"
offset_days  = 2`)
	outs := stored(t, cr.Outputs)
	d, err := p.Diff(ctx, provider.DiffRequest{Resource: res, ID: cr.ID, NewProps: cfg2, OldOutputs: outs, Private: cr.Private})
	noErrors(t, "Diff", d.Diagnostics, err)
	if !d.Changed || d.Replace || !slices.Contains(d.ChangedKeys, "offset_days") {
		t.Fatalf("Diff = %+v; want an in-place change of offset_days", d)
	}
	up, err := p.Update(ctx, provider.UpdateRequest{Resource: res, ID: cr.ID, NewProps: cfg2, OldOutputs: outs, Private: cr.Private})
	noErrors(t, "Update", up.Diagnostics, err)
	if up.ID != cr.ID || str(attr(up.Outputs, "rfc3339")) != "2024-01-03T00:00:00Z" {
		t.Errorf("Update = %+v", up)
	}
	// Update with nothing to change applies nothing and returns the prior state.
	same, err := p.Update(ctx, provider.UpdateRequest{Resource: res, ID: up.ID, NewProps: cfg2, OldOutputs: stored(t, up.Outputs), Private: up.Private})
	noErrors(t, "Update(no-op)", same.Diagnostics, err)
	if same.ID != up.ID || str(attr(same.Outputs, "rfc3339")) != "2024-01-03T00:00:00Z" {
		t.Errorf("Update(no-op) = %+v", same)
	}
}

func TestTimeHasNoDataSources(t *testing.T) {
	p := timeProvider(t)
	_, err := p.ReadData(testCtx(t), provider.ReadDataRequest{Resource: provider.Resource{Type: "time_static"}, Config: cty.EmptyObjectVal})
	if err == nil || !strings.Contains(err.Error(), `does not support data source "time_static"`) || !strings.Contains(err.Error(), "serves: none") {
		t.Errorf("ReadData error = %v", err)
	}
}

// TestTimeSleepCancel cancels a 5-minute time_sleep: cairn asks the provider to stop, the
// provider gives up, and Create returns the context's error within seconds.
func TestTimeSleepCancel(t *testing.T) {
	p := timeProvider(t)
	res := provider.Resource{Type: "time_sleep", Name: "s"}
	cfg := decodeConfig(t, p, provider.SchemaResource, "time_sleep", `create_duration = "5m"`)
	ctx, cancel := context.WithCancel(testCtx(t))
	time.AfterFunc(500*time.Millisecond, cancel)
	start := time.Now()
	_, err := p.Create(ctx, provider.CreateRequest{Resource: res, Props: cfg})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Create = %v; want context.Canceled", err)
	}
	if d := time.Since(start); d > 15*time.Second {
		t.Errorf("Create returned after %s", d)
	}
	// the process survives Stop and serves the next call
	cr, err := p.Create(testCtx(t), provider.CreateRequest{Resource: timeStatic, Props: decodeConfig(t, p, provider.SchemaResource, "time_static", ``)})
	noErrors(t, "Create after Stop", cr.Diagnostics, err)
}

// TestTimeSchemaCache: a second process of the same binary reuses the schemas (the provider
// sets get_provider_schema_optional).
func TestTimeSchemaCache(t *testing.T) {
	p1 := timeProvider(t)
	p2 := timeProvider(t)
	s1, _ := p1.ready(testCtx(t))
	s2, _ := p2.ready(testCtx(t))
	if !s1.caps.schemaOptional || s1.resources["time_static"] != s2.resources["time_static"] {
		t.Errorf("schemas not shared: caps %+v", s1.caps)
	}
}

// TestTimeCrash kills the provider process: the next call fails with an error that says so.
func TestTimeCrash(t *testing.T) {
	p := timeProvider(t)
	pid, _ := strconv.Atoi(p.proc.client.ID())
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cfg := decodeConfig(t, p, provider.SchemaResource, "time_static", ``)
	_, err := p.Create(testCtx(t), provider.CreateRequest{Resource: timeStatic, Props: cfg})
	t.Logf("error after the crash: %v", err)
	if err == nil || !strings.HasPrefix(err.Error(), "provider time: plugin exited: ") {
		t.Errorf("Create after a crash = %v", err)
	}
	p.Close()
	if _, err := p.Schema(testCtx(t), provider.SchemaRequest{Kind: provider.SchemaProvider}); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("Schema after Close = %v", err)
	}
}

// TestTimeLogs: go-plugin's and the provider's log reach cairn's logger at debug level, tagged
// with the provider's name.
func TestTimeLogs(t *testing.T) {
	var buf syncBuffer
	log := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	p := New(Config{Name: "time", Executable: providerbin.Time(t), Logger: log})
	defer p.Close()
	if _, err := p.Configure(testCtx(t), provider.ConfigureRequest{}); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	if !strings.Contains(out, `"level":"DEBUG"`) || !strings.Contains(out, `"provider":"time"`) || !strings.Contains(out, "plugin started") {
		t.Errorf("log:\n%s", out)
	}
	if strings.Contains(out, `"level":"INFO"`) || strings.Contains(out, `"level":"WARN"`) {
		t.Errorf("provider log above debug level:\n%s", out)
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
