// Package tflang parses the Terraform language (.tf and .tf.json, with hashicorp/hcl/v2) into
// cairn's dialect-neutral template.Stack: required_providers, provider blocks, variables,
// locals, resources and data sources (count and for_each expanded into instances), outputs.
// Resource bodies stay HCL until the engine decodes them with the provider's schema.
package tflang

import (
	"fmt"
	"path"
	"sort"
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

// Parse reads the root module of files and binds its variables.
func Parse(files map[string][]byte, opts Options) (*template.Stack, diag.Diagnostics) {
	p := hclparse.NewParser()
	dir := cleanDir(opts.Dir)
	var names []string
	for name := range files {
		if path.Dir(name) == dir && (strings.HasSuffix(name, ".tf") || strings.HasSuffix(name, ".tf.json")) {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	var hd hcl.Diagnostics
	m := &module{files: files, dir: dir, vars: map[string]*variable{}, locals: map[string]*hcl.Attribute{},
		resources: map[string]*resourceBlock{}, outputs: map[string]*hcl.Block{}}
	for _, name := range names {
		var f *hcl.File
		var ds hcl.Diagnostics
		if strings.HasSuffix(name, ".json") {
			f, ds = p.ParseJSON(files[name], name)
		} else {
			f, ds = p.ParseHCL(files[name], name)
		}
		hd = append(hd, ds...)
		if f == nil {
			continue
		}
		content, ds := f.Body.Content(rootSchema)
		hd = append(hd, ds...)
		for _, b := range content.Blocks {
			hd = append(hd, m.addBlock(b)...)
		}
	}
	if hd.HasErrors() {
		return nil, convertDiags(hd, files)
	}
	st, ds := m.build(opts)
	return st, convertDiags(ds, files)
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
