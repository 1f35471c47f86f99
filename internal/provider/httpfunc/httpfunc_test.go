package httpfunc_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/provider"
	"github.com/cairn-dev/cairn/internal/provider/httpfunc"
	"github.com/cairn-dev/cairn/internal/provider/tfplugin"
	"github.com/cairn-dev/cairn/test/providerbin"
)

// config is a value of ty with every attribute null but those given.
func config(ty cty.Type, set map[string]cty.Value) cty.Value {
	attrs := map[string]cty.Value{}
	for name, at := range ty.AttributeTypes() {
		attrs[name] = cty.NullVal(at)
		if v, ok := set[name]; ok {
			attrs[name] = v
		}
	}
	return cty.ObjectVal(attrs)
}

// TestTimeProviderThroughTheEnvelope: the tfplugin client, unchanged, drives the real time
// provider through Conn -> POST /provider -> Server -> a fresh plugin process per call.
func TestTimeProviderThroughTheEnvelope(t *testing.T) {
	srv := httpfunc.NewServer(providerbin.Time(t), 2, nil)
	defer srv.Close()
	var methods []string
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req httpfunc.Request
		b, _ := readAll(r)
		json.Unmarshal(b, &req)
		methods = append(methods, req.MethodName+" config="+boolString(req.Context.ConfigData != ""))
		r.Body = readCloser(b)
		srv.ServeHTTP(w, r)
	}))
	defer ts.Close()
	p, err := tfplugin.NewFromConn(httpfunc.NewConn(ts.URL, httpfunc.Options{}), 5, tfplugin.Options{Name: "time"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if resp, err := p.Configure(ctx, provider.ConfigureRequest{Config: cty.EmptyObjectVal}); err != nil || resp.Diagnostics.HasErrors() {
		t.Fatalf("Configure: %v %v", err, resp.Diagnostics)
	}
	s, err := p.Schema(ctx, provider.SchemaRequest{Kind: provider.SchemaResource, Type: "time_static"})
	if err != nil {
		t.Fatal(err)
	}
	res := provider.Resource{Type: "time_static", Name: "time_static.t"}
	props := config(s.ImpliedType, map[string]cty.Value{"rfc3339": cty.StringVal("2024-01-02T03:04:05Z")})
	cr, err := p.Create(ctx, provider.CreateRequest{Resource: res, Props: props})
	if err != nil || cr.Diagnostics.HasErrors() {
		t.Fatalf("Create: %v %v", err, cr.Diagnostics)
	}
	if cr.ID != "2024-01-02T03:04:05Z" || !cr.Outputs.GetAttr("year").RawEquals(cty.NumberIntVal(2024)) {
		t.Errorf("created %s: %#v", cr.ID, cr.Outputs)
	}
	changed := config(s.ImpliedType, map[string]cty.Value{"rfc3339": cty.StringVal("2025-01-02T03:04:05Z")})
	d, err := p.Diff(ctx, provider.DiffRequest{Resource: res, ID: cr.ID, OldProps: props, NewProps: changed, OldOutputs: cr.Outputs, Private: cr.Private})
	if err != nil || !d.Replace {
		t.Errorf("Diff = %+v, %v", d, err)
	}
	if del, err := p.Delete(ctx, provider.DeleteRequest{Resource: res, ID: cr.ID, Outputs: cr.Outputs, Private: cr.Private}); err != nil || del.Diagnostics.HasErrors() {
		t.Fatalf("Delete: %v %v", err, del.Diagnostics)
	}
	joined := strings.Join(methods, "\n")
	for _, want := range []string{"/tfplugin5.Provider/GetSchema config=false", "/tfplugin5.Provider/Configure config=false",
		"/tfplugin5.Provider/PlanResourceChange config=true", "/tfplugin5.Provider/ApplyResourceChange config=true"} {
		if !strings.Contains(joined, want) {
			t.Errorf("no call %q among:\n%s", want, joined)
		}
	}
}

// TestBadFunctions: each way a function can fail fails the call with a message that says
// what went wrong, and never hangs.
func TestBadFunctions(t *testing.T) {
	cases := map[string]struct {
		handler http.HandlerFunc
		opts    httpfunc.Options
		want    string
	}{
		"500":           {handler: func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "boom", 500) }, want: "answered HTTP 500: boom"},
		"500 huge":      {handler: func(w http.ResponseWriter, _ *http.Request) { http.Error(w, strings.Repeat("\x1bX", 1<<19), 500) }, want: "answered HTTP 500: " + strings.Repeat("\uFFFDX", 50) + "…"},
		"not json":      {handler: func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("<html>")) }, want: "not the {response_data, error} envelope"},
		"bad base64":    {handler: answer(httpfunc.Response{ResponseData: "***"}), want: "not valid base64"},
		"wrong message": {handler: answer(httpfunc.Response{ResponseData: base64.StdEncoding.EncodeToString([]byte{0xff, 0xff, 0xff})}), want: "is not a tfplugin5.GetMetadata.Response"},
		"error field":   {handler: answer(httpfunc.Response{Error: "provider exploded"}), want: "provider exploded"},
		"too big":       {handler: answer(httpfunc.Response{ResponseData: strings.Repeat("A", 4096)}), opts: httpfunc.Options{MaxResponse: 1024}, want: "larger than 1024 bytes"},
		"never answers": {handler: func(_ http.ResponseWriter, r *http.Request) { readAll(r); <-r.Context().Done() }, opts: httpfunc.Options{Timeout: 200 * time.Millisecond}, want: "did not answer within 200ms"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			ts := httptest.NewServer(c.handler)
			defer ts.Close()
			p, err := tfplugin.NewFromConn(httpfunc.NewConn(ts.URL, c.opts), 5, tfplugin.Options{Name: "bad"})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_, err = p.Schema(ctx, provider.SchemaRequest{Kind: provider.SchemaResource, Type: "x"})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error = %v, want it to contain %q", err, c.want)
			}
		})
	}
}

// TestServerRejectsMalformedEnvelopes: 400 with the reason, before any provider starts.
func TestServerRejectsMalformedEnvelopes(t *testing.T) {
	srv := httpfunc.NewServer("/nonexistent/provider", 0, nil)
	ts := httptest.NewServer(srv)
	defer ts.Close()
	for body, want := range map[string]string{
		`{"method_name": "/tfplugin5.Provider/GetSchema", "request_data": "%%"}`: "request_data is not valid base64",
		`{"method_name": "/other.Service/X", "request_data": ""}`:                "is not a /tfplugin5.Provider/ method",
		`not json`: "not a {method_name, request_data, context} envelope",
		`{"method_name": "/tfplugin5.Provider/ReadResource", "request_data": "", "context": {"config_data": "%%"}}`: "config_data is not valid base64",
	} {
		resp, err := http.Post(ts.URL+"/provider", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		var r httpfunc.Response
		json.NewDecoder(resp.Body).Decode(&r)
		resp.Body.Close()
		if resp.StatusCode != 400 || !strings.Contains(r.Error, want) {
			t.Errorf("%s: %d %q, want 400 %q", body, resp.StatusCode, r.Error, want)
		}
	}
	resp, err := http.Post(ts.URL+"/provider", "application/json", strings.NewReader(`{"method_name": "/tfplugin5.Provider/GetSchema", "request_data": ""}`))
	if err != nil {
		t.Fatal(err)
	}
	var r httpfunc.Response
	json.NewDecoder(resp.Body).Decode(&r)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(r.Error, "/nonexistent/provider") {
		t.Errorf("missing provider: %d %+v", resp.StatusCode, r)
	}
}

func answer(r httpfunc.Response) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) { json.NewEncoder(w).Encode(r) }
}

func boolString(b bool) string {
	if b {
		return "true"
	}
	return "false"
}
