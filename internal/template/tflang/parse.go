// Package tflang parses the Terraform language (.tf and .tf.json, with hashicorp/hcl/v2) into
// cairn's dialect-neutral template.Stack: required_providers, provider blocks, variables,
// locals, resources and data sources (count and for_each expanded into instances), outputs,
// and local module calls, whose resources join the stack under terraform's addresses
// (module.net.aws_subnet.a). Resource bodies stay HCL until the engine decodes them with the
// provider's schema. It reads only the files it is given, never the disk.
package tflang

import (
	"fmt"
	"path"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclparse"

	"github.com/cairn-dev/cairn/internal/diag"
	"github.com/cairn-dev/cairn/internal/template"
)

// Options are the values a configuration is parsed with.
type Options struct {
	Dir      string            // root module directory within files; "" = top level
	Vars     map[string]string // -var values: highest precedence
	VarFiles []string          // -var-file names (keys of files), after the auto-loaded ones
	Env      map[string]string // TF_VAR_<name> values by name: lowest precedence
	Validate bool              // variables without a value are unknown instead of an error
}

// Detect reports whether dir of files holds Terraform-language files.
func Detect(files map[string][]byte, dir string) bool {
	for name := range files {
		if path.Dir(name) == cleanDir(dir) && (strings.HasSuffix(name, ".tf") || strings.HasSuffix(name, ".tf.json")) {
			return true
		}
	}
	return false
}

func cleanDir(dir string) string {
	if dir == "" {
		return "."
	}
	return path.Clean(dir)
}

var rootSchema = &hcl.BodySchema{Blocks: []hcl.BlockHeaderSchema{
	{Type: "terraform"}, {Type: "provider", LabelNames: []string{"name"}}, {Type: "variable", LabelNames: []string{"name"}},
	{Type: "locals"}, {Type: "output", LabelNames: []string{"name"}}, {Type: "module", LabelNames: []string{"name"}},
	{Type: "resource", LabelNames: []string{"type", "name"}}, {Type: "data", LabelNames: []string{"type", "name"}},
	{Type: "moved"}, {Type: "import"}, {Type: "check", LabelNames: []string{"name"}}, {Type: "removed"},
}}

// Parse reads the root module of files, with the local modules it calls, and binds its
// variables. Keys of files are slash-separated paths relative to the directory the
// configuration is read from (opts.Dir is the root module's directory among them); a local
// module called with source "../shared" from the root has its files under "../shared/".
func Parse(files map[string][]byte, opts Options) (*template.Stack, diag.Diagnostics) {
	ld := &loader{p: hclparse.NewParser(), files: files, configs: map[string]*config{}}
	dir := cleanDir(opts.Dir)
	cfg, hd := ld.load(dir)
	if cfg == nil {
		cfg = newConfig(files, dir)
	}
	if hd.HasErrors() {
		return nil, convertDiags(hd, files)
	}
	st, ds := ld.newModule(cfg, nil, nil, key{}).build(opts)
	return st, convertDiags(append(hd, ds...), files)
}

// convertDiags turns HCL diagnostics into cairn's, each with its file, line and column, and
// the offending source line in the detail as terraform shows it.
func convertDiags(in hcl.Diagnostics, files map[string][]byte) diag.Diagnostics {
	var out diag.Diagnostics
	for _, d := range in {
		cd := diag.Diagnostic{Summary: d.Summary, Detail: d.Detail}
		if d.Severity == hcl.DiagWarning {
			cd.Severity = diag.Warning
		}
		if d.Subject != nil {
			cd.Range = diag.Range{Filename: d.Subject.Filename, Line: d.Subject.Start.Line, Column: d.Subject.Start.Column}
			if line := sourceLine(files[d.Subject.Filename], d.Subject.Start.Line); line != "" {
				cd.Detail = strings.TrimSpace(fmt.Sprintf("%s\n\n  %d: %s", cd.Detail, d.Subject.Start.Line, line))
			}
		}
		out = append(out, cd)
	}
	return out
}

func sourceLine(src []byte, n int) string {
	lines := strings.Split(string(src), "\n")
	if n < 1 || n > len(lines) {
		return ""
	}
	return strings.TrimRight(lines[n-1], "\r")
}

func rangeOf(r hcl.Range) diag.Range {
	return diag.Range{Filename: r.Filename, Line: r.Start.Line, Column: r.Start.Column}
}
