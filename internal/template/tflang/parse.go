// Package tflang parses the Terraform language (.tf and .tf.json, with hashicorp/hcl/v2) into
// cairn's dialect-neutral template.Stack: required_providers, provider blocks, variables,
// locals, resources and data sources (count and for_each expanded into instances), outputs,
// and local module calls, whose resources join the stack under terraform's addresses
// (module.net.aws_subnet.a). Resource bodies stay HCL until the engine decodes them with the
// provider's schema. It reads only the files it is given, never the disk.
package tflang

import (
	"bytes"
	"context"
	"fmt"
	"path"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/hashicorp/hcl/v2"

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
	// AbsDir is the root module's absolute directory where the configuration was read ("" when
	// unknown): abspath and path.cwd start there, and absolute paths under it name sent files.
	AbsDir string
	// ClientHome says the configuration was read on this machine by this process's user (the
	// CLI's in-process server): "~" is then this process's home directory, as for terraform;
	// otherwise a shared server does not know it and pathexpand refuses "~".
	ClientHome bool
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
	{Type: "ephemeral", LabelNames: []string{"type", "name"}},
}}

// Parse reads the root module of files, with the local modules it calls, and binds its
// variables. Keys of files are slash-separated paths relative to the directory the
// configuration is read from (opts.Dir is the root module's directory among them); a local
// module called with source "../shared" from the root has its files under "../shared/".
//
// ctx carries the budget (internal/budget) of the parse and of the evaluations it makes
// (count, for_each, locals they use, validations); a template.Scope's Context carries that of
// later evaluations. Exceeding it is a diagnostic naming the limit.
func Parse(ctx context.Context, files map[string][]byte, opts Options) (*template.Stack, diag.Diagnostics) {
	dir := cleanDir(opts.Dir)
	ld := newLoader(ctx, files, dir)
	ld.tables.files.abs = opts.AbsDir
	ld.tables.files.home = opts.ClientHome
	ld.tables.planTime = time.Now()
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
// the offending source line in the detail as terraform shows it. A file's lines are indexed
// once, however many diagnostics it has.
func convertDiags(in hcl.Diagnostics, files map[string][]byte) diag.Diagnostics {
	var out diag.Diagnostics
	lines := map[string][]int{}
	for _, d := range in {
		d = userDiag(d)
		cd := diag.Diagnostic{Summary: d.Summary, Detail: d.Detail}
		if d.Severity == hcl.DiagWarning {
			cd.Severity = diag.Warning
		}
		if d.Subject != nil {
			cd.Range = diag.Range{Filename: d.Subject.Filename, Line: d.Subject.Start.Line, Column: d.Subject.Start.Column}
			src, ok := files[d.Subject.Filename]
			if _, indexed := lines[d.Subject.Filename]; ok && !indexed {
				lines[d.Subject.Filename] = lineStarts(src)
			}
			if line := sourceLine(src, lines[d.Subject.Filename], d.Subject.Start.Line); line != "" {
				cd.Detail = strings.TrimSpace(fmt.Sprintf("%s\n\n  %d: %s", cd.Detail, d.Subject.Start.Line, line))
			}
		}
		out = append(out, cd)
	}
	return out
}

// lineStarts is the offset of each line of src.
func lineStarts(src []byte) []int {
	starts := []int{0}
	for i, c := range src {
		if c == '\n' {
			starts = append(starts, i+1)
		}
	}
	return starts
}

// maxSourceLine bounds the source line a diagnostic quotes.
const maxSourceLine = 300

// sourceLine is line n of src (1-based), from its line index.
func sourceLine(src []byte, starts []int, n int) string {
	if n < 1 || n > len(starts) {
		return ""
	}
	i := n - 1
	end := len(src)
	if i+1 < len(starts) {
		end = starts[i+1] - 1
	}
	line := bytes.TrimRight(src[starts[i]:end], "\r")
	if len(line) > maxSourceLine {
		cut := maxSourceLine
		for cut > 0 && !utf8.RuneStart(line[cut]) {
			cut--
		}
		return string(line[:cut]) + " …"
	}
	return string(line)
}

func rangeOf(r hcl.Range) diag.Range {
	return diag.Range{Filename: r.Filename, Line: r.Start.Line, Column: r.Start.Column}
}

// Policy is how the engine runs a Terraform-language stack: a failure stops where it is and
// nothing rolls back; the engine plans replacements; providers are plugins; resources are
// read back, imported, and kept in a terraform state.
func Policy() template.DialectPolicy {
	return template.DialectPolicy{Dialect: template.Terraform, Name: "Terraform-language",
		StackType:         "terraform_stack", // in the naming style of the resource types around it
		FromFiles:         true,
		PlansReplacements: true, OptionalIDs: true, BlindResumedCreates: true, SkipsUnchanged: true,
		ProviderPlugins: true, ChecksOutputs: true, Importable: true, StateFiles: true,
		ShowsAttributes: true, Paths: paths, StackID: template.StackARN}
}

// paths: "resource.type.name" and "data.type.name" (a data source's name carries "data.").
func paths(r *template.Resource) template.ResourcePaths {
	at := "resource." + r.Name
	if r.Mode == template.Data {
		at = r.Name
	}
	return template.ResourcePaths{Resource: at, Type: at, Properties: at}
}
