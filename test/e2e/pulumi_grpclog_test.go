package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// The calls each engine made to its plugins, as PULUMI_DEBUG_GRPC records them: pulumi's engine
// writes every provider call it makes to that file, and cairn writes the same lines
// (internal/provider/pulumirpc/grpclog.go). Unlike cairntest's own call log, this works for
// every plugin, the conformance providers included.

// grpcCalls reads and empties an engine's PULUMI_DEBUG_GRPC file and returns its provider calls
// as "<Method> <name>[ preview]" ("Check(olds) <name>" when old inputs were sent), in the order
// they started, all of them, without the calls that load a plugin or stop it (Handshake,
// GetPluginInfo, GetSchema, Parameterize, Attach, Cancel: pulumi's language host loads
// schemas through plugins of its own) and without DiffConfig, which pulumi's engine makes
// before a provider's CheckConfig and cairn only when the configuration changed.
func grpcCalls(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	_ = os.Remove(path)
	var calls []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var e struct {
			Method   string `json:"method"`
			Progress string `json:"progress"`
			Metadata struct {
				Mode, Kind, Name string
			} `json:"metadata"`
			Request struct {
				URN     string         `json:"urn"`
				Name    string         `json:"name"`
				Tok     string         `json:"tok"`
				Preview bool           `json:"preview"`
				DryRun  bool           `json:"dryRun"`
				Olds    map[string]any `json:"olds"`
			} `json:"request"`
		}
		if json.Unmarshal(sc.Bytes(), &e) != nil || e.Progress != "request_started" || e.Metadata.Kind != "resource" {
			continue
		}
		m, ok := strings.CutPrefix(e.Method, "/pulumirpc.ResourceProvider/")
		if !ok {
			continue
		}
		switch m {
		case "Handshake", "GetPluginInfo", "GetSchema", "Parameterize", "Attach", "Cancel", "DiffConfig":
			continue
		}
		name := e.Request.Name // Construct names its component so
		if i := strings.LastIndex(e.Request.URN, "::"); i >= 0 {
			name = e.Request.URN[i+2:]
		}
		if m == "Invoke" {
			name = e.Request.Tok
		}
		if m == "Check" && len(e.Request.Olds) > 0 {
			m = "Check(olds)"
		}
		line := m + " " + name
		if e.Request.Preview || e.Request.DryRun {
			line += " preview"
		}
		calls = append(calls, line)
	}
	return calls
}
