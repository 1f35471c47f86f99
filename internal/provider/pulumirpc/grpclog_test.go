package pulumirpc

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/provider"
	"github.com/cairn-dev/cairn/internal/value"
	"github.com/cairn-dev/cairn/test/providerbin"
)

// With PULUMI_DEBUG_GRPC's file, every call to the plugin is logged as pulumi's engine logs it
// (a started and a completed line per call, method, metadata), and no property value reaches
// the file: not a secret configuration value (sent plain to CheckConfig), not a secret input,
// not a plain one.
func TestGRPCLogRecordsCallsWithoutValues(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("CAIRNTEST_DIR", dir)
	logFile := filepath.Join(t.TempDir(), "grpc.log")
	exe := providerbin.PulumiPlugin(t, plugins(t), "cairntest", "1.0.0")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p, err := Launch(ctx, Options{Package: "cairntest", Executable: exe, Dir: dir, Project: "proj", Stack: "dev", Version: "1.0.0", GRPCLog: logFile})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	region := cty.StringVal("region-value-9f3a").Mark(value.Sensitive)
	if resp, err := p.Configure(ctx, provider.ConfigureRequest{Config: cty.ObjectVal(map[string]cty.Value{"region": region})}); err != nil || resp.Diagnostics.HasErrors() {
		t.Fatalf("configure: %v %v", err, resp.Diagnostics)
	}
	in := checked(t, p, "a", props(map[string]cty.Value{"value": cty.StringVal("plain-value-51c2"), "key": cty.StringVal("secret-value-77d0").Mark(value.Sensitive)}))
	if _, err := p.Create(ctx, provider.CreateRequest{Resource: res(thing, "a"), Props: in}); err != nil {
		t.Fatal(err)
	}

	b, err := os.ReadFile(logFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"region-value-9f3a", "plain-value-51c2", "secret-value-77d0"} {
		if strings.Contains(string(b), v) {
			t.Errorf("the log holds the value %q:\n%s", v, b)
		}
	}
	if fi, err := os.Stat(logFile); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("log file mode = %v (%v), want 0600", fi.Mode(), err)
	}
	var started, completed []string
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e struct {
			Method   string         `json:"method"`
			Progress string         `json:"progress"`
			Metadata map[string]any `json:"metadata"`
			Request  map[string]any `json:"request"`
		}
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		if e.Metadata["mode"] != "client" || e.Metadata["kind"] != "resource" || e.Metadata["name"] != "cairntest" {
			t.Errorf("metadata = %v", e.Metadata)
		}
		m := strings.TrimPrefix(e.Method, "/pulumirpc.ResourceProvider/")
		switch e.Progress {
		case "request_started":
			started = append(started, m)
		case "response_completed":
			completed = append(completed, m)
		}
		if m == "Create" && e.Request["urn"] != "urn:pulumi:dev::proj::cairntest:index:Thing::a" {
			t.Errorf("Create's urn = %v", e.Request["urn"])
		}
	}
	// GetSchema: the adapter asks which types are components (no schema cache in this test).
	want := []string{"Handshake", "GetPluginInfo", "CheckConfig", "Configure", "GetSchema", "Check", "Create"}
	if d := cmp.Diff(want, started); d != "" {
		t.Errorf("calls started: -want +got\n%s", d)
	}
	if d := cmp.Diff(want, completed); d != "" {
		t.Errorf("calls completed: -want +got\n%s", d)
	}
}

// Every map of text is logged by its keys only: Construct's config holds the stack's config in
// clear, secrets included.
func TestGRPCLogElidesTextMaps(t *testing.T) {
	b, errs := transcode(&pulumirpc.ConstructRequest{Config: map[string]string{"proj:password": "hunter2-4c1e"},
		Providers: map[string]string{"pkg": "urn::id"}}, nil)
	if len(errs) > 0 || strings.Contains(string(b), "hunter2-4c1e") || !strings.Contains(string(b), "proj:password") {
		t.Errorf("logged %s (%v)", b, errs)
	}
}
