package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/spf13/cobra"

	"github.com/cairn-dev/cairn/api"
	"github.com/cairn-dev/cairn/internal/tfmodule"
	"github.com/cairn-dev/cairn/internal/tfmodule/install"
)

// sourceFlags are the flags that say which template to use and with what values: a
// CloudFormation/ROS file, or a Terraform-language directory with its variables.
type sourceFlags struct {
	file     string
	params   []string
	vars     []string
	varFiles []string
	upgrade  bool
}

func (s *sourceFlags) register(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVarP(&s.file, "file", "f", "", "template file (- for stdin), or a Terraform configuration directory (default: the current directory when it has .tf files)")
	f.StringArrayVarP(&s.params, "parameter", "p", nil, "template parameter KEY=VALUE (repeatable)")
	f.StringArrayVar(&s.vars, "var", nil, "Terraform variable NAME=VALUE (repeatable; same as --parameter)")
	f.StringArrayVar(&s.varFiles, "var-file", nil, "Terraform variable file, .tfvars or .tfvars.json (repeatable)")
	f.BoolVar(&s.upgrade, "upgrade", false, "pick the newest provider versions the constraints allow, ignoring "+lockFileName)
}

// lockFileName is where a Terraform-language configuration keeps its provider versions.
const lockFileName = ".terraform.lock.hcl"

// maxFileSize bounds each file sent from a configuration directory: templates and the files
// they read are small; anything bigger is left out (file() on it then fails clearly).
const maxFileSize = 4 << 20

// What the CLI sends of a configuration and its modules is bounded: the server refuses a
// request body over 10 MiB (server.MaxBodyBytes), and a module call such as "../../../.."
// would otherwise walk the whole disk before that.
const (
	maxSendFiles = 10000
	maxSendBytes = 10 << 20
)

// errTooMuch stops a walk that went over maxSendFiles or maxSendBytes.
var errTooMuch = errors.New("too many files to send")

// outgoing is the files a request will send, by slash-separated name, and their size.
type outgoing struct {
	files map[string]string
	bytes int64
}

// add adds a file, errTooMuch when that goes over a limit.
func (o *outgoing) add(name, text string) error {
	if old, ok := o.files[name]; ok {
		o.bytes -= int64(len(old))
	}
	o.files[name] = text
	o.bytes += int64(len(text))
	if len(o.files) > maxSendFiles || o.bytes > maxSendBytes {
		return errTooMuch
	}
	return nil
}

// tooMuch is the error for a configuration over the limits, naming the directories that
// weigh most: each module directory outside it ("../data", ".terraform/modules/vpc") and
// each of its own top-level directories.
func (o *outgoing) tooMuch(dir string) error {
	type weight struct {
		dir          string
		files, bytes int64
	}
	byDir := map[string]*weight{}
	for name, text := range o.files {
		g := sendGroup(name)
		w := byDir[g]
		if w == nil {
			w = &weight{dir: g}
			byDir[g] = w
		}
		w.files++
		w.bytes += int64(len(text))
	}
	var ws []*weight
	for _, w := range byDir {
		ws = append(ws, w)
	}
	sort.Slice(ws, func(i, j int) bool {
		if ws[i].bytes != ws[j].bytes {
			return ws[i].bytes > ws[j].bytes
		}
		if ws[i].files != ws[j].files {
			return ws[i].files > ws[j].files
		}
		return ws[i].dir < ws[j].dir
	})
	var names []string
	for _, w := range ws[:min(len(ws), 3)] {
		names = append(names, fmt.Sprintf("%s (%.1f MiB, %d files)", w.dir, float64(w.bytes)/(1<<20), w.files))
	}
	over := fmt.Sprintf("more than %d MiB", maxSendBytes>>20)
	if len(o.files) > maxSendFiles {
		over = fmt.Sprintf("more than %d files", maxSendFiles)
	}
	return fmt.Errorf("the configuration in %s and the modules it calls come to %s, more than cairn sends to the server "+
		"(files over 4 MiB, hidden directories of modules outside it, .git, .terraform and node_modules are left out already); "+
		"the biggest directories: %s", dir, over, strings.Join(names, ", "))
}

// sendGroup is the directory a sent file is counted under in tooMuch.
func sendGroup(name string) string {
	parts := strings.Split(name, "/")
	n := 0
	for n < len(parts)-1 && parts[n] == ".." {
		n++
	}
	if n+3 < len(parts) && parts[n] == ".terraform" && parts[n+1] == "modules" {
		n += 2
	}
	if n == len(parts)-1 {
		return path.Join(append([]string{"."}, parts[:n]...)...)
	}
	return strings.Join(parts[:n+1], "/")
}

// source is a template read from disk, ready for a request.
type source struct {
	req api.DeployRequest
	dir string // the Terraform configuration directory, "" for a template file
}

// read builds the request body the flags describe, reading TF_VAR_* from the environment for a
// Terraform configuration.
func (r *runner) readSource(s *sourceFlags) (source, error) {
	params, err := parseParameters(append(append([]string(nil), s.params...), s.vars...))
	if err != nil {
		return source{}, err
	}
	path := s.file
	if path == "" && hasTerraformFiles(".") {
		path = "."
	}
	if path != "" && path != "-" {
		if fi, err := os.Stat(path); err == nil && fi.IsDir() {
			return r.readDir(path, s, params)
		}
	}
	if len(s.varFiles) > 0 {
		return source{}, usagef("--var-file needs a Terraform configuration directory, not a template file")
	}
	name, text, err := r.readTemplate(path)
	if err != nil {
		return source{}, err
	}
	return source{req: api.DeployRequest{TemplateName: name, Template: text, Parameters: params}}, nil
}

func hasTerraformFiles(dir string) bool {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range entries {
		if !e.IsDir() && (strings.HasSuffix(e.Name(), ".tf") || strings.HasSuffix(e.Name(), ".tf.json")) {
			return true
		}
	}
	return false
}

// readDir reads a Terraform configuration: every file below dir, hidden ones included, except
// those skippedDir and skippedFile leave out, by slash-separated relative path; and the
// directories of the modules it calls that lie outside it, keyed by their path relative to
// dir as the server resolves them: local ones ("../shared/main.tf", "../../main.tf" for a
// module's examples/complete calling "../../") and remote ones, which installModules puts
// in .terraform/modules first, as terraform init does.
func (r *runner) readDir(dir string, s *sourceFlags, params map[string]string) (source, error) {
	out := &outgoing{files: map[string]string{}}
	if err := collectFiles(out, dir, ".", ""); errors.Is(err, errTooMuch) {
		return source{}, out.tooMuch(dir)
	} else if err != nil {
		return source{}, fmt.Errorf("cannot read the configuration in %s: %w", dir, err)
	}
	res, err := r.installModules(context.Background(), dir, s.upgrade)
	if err != nil {
		return source{}, err
	}
	if err := collectModules(out, dir, res.Dirs); errors.Is(err, errTooMuch) {
		return source{}, out.tooMuch(dir)
	} else if err != nil {
		return source{}, err
	}
	files := out.files
	if b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(tfmodule.ManifestPath))); err == nil {
		files[tfmodule.ManifestPath] = string(b)
	}
	req := api.DeployRequest{TemplateName: dir, Files: files, Parameters: params, Upgrade: s.upgrade}
	for _, vf := range s.varFiles {
		// A var file outside the directory travels with the others under its own name.
		rel, err := filepath.Rel(dir, vf)
		if err != nil || strings.HasPrefix(rel, "..") {
			rel = "~var-files/" + filepath.Base(vf)
		}
		rel = filepath.ToSlash(rel)
		b, err := os.ReadFile(vf)
		if err != nil {
			return source{}, fmt.Errorf("cannot read --var-file: %w", err)
		}
		files[rel] = string(b)
		req.VarFiles = append(req.VarFiles, rel)
	}
	req.Env = tfVarEnv(r.env.Environ)
	if abs, err := filepath.Abs(dir); err == nil {
		req.WorkDir = filepath.ToSlash(abs) // terraform -chdir's working directory: abspath, path.cwd
	}
	return source{req: req, dir: dir}, nil
}

// collectFiles adds the files below root to out, keyed by base joined with their path
// relative to root, leaving out the directory skip (absolute; "" for none): the root module,
// when root is a directory above it. Below a directory outside the configuration (base
// "../…"), hidden directories are left out too: the user's .aws, .ssh or .kube may be
// there, and no module is expected to read them.
func collectFiles(out *outgoing, root, base, skip string) error {
	outside := base == ".." || strings.HasPrefix(base, "../")
	if real, err := filepath.EvalSymlinks(root); err == nil {
		root = real // go-getter installs a file:// package as a symbolic link
	}
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p != root && (skippedDir(name) || outside && strings.HasPrefix(name, ".")) {
				return filepath.SkipDir
			}
			if skip != "" && p != root {
				if abs, err := filepath.Abs(p); err == nil && abs == skip {
					return filepath.SkipDir
				}
			}
			return nil
		}
		if !d.Type().IsRegular() || skippedFile(name) {
			return nil
		}
		if fi, err := d.Info(); err != nil || fi.Size() > maxFileSize {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		return out.add(path.Join(base, filepath.ToSlash(rel)), string(b))
	})
}

// collectModules adds the module directories dirs (relative to dir) that the walk of dir
// did not reach: those above or beside it, and those installed under .terraform. A
// directory above dir is sent without dir itself, which is sent already under its own
// names. A module directory that does not exist is left for the server to report, with the
// position of its source.
func collectModules(out *outgoing, dir string, dirs []string) error {
	absDir, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("cannot read the configuration in %s: %w", dir, err)
	}
	sorted := append([]string(nil), dirs...)
	sort.Strings(sorted) // a directory before the ones inside it
	var sent []string
	for _, rel := range sorted {
		if !outsideWalk(rel) || within(rel, sent) {
			continue
		}
		root := filepath.Join(dir, filepath.FromSlash(rel))
		if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
			continue
		}
		if err := collectFiles(out, root, rel, absDir); errors.Is(err, errTooMuch) {
			return err
		} else if err != nil {
			return fmt.Errorf("cannot read module directory %s: %w", root, err)
		}
		sent = append(sent, rel)
	}
	return nil
}

// skippedDir reports whether a directory of a configuration is left out of what is sent:
// version control, terraform's working directory (the modules it installed are sent apart,
// see collectModules), a cairn server's own directory (its database) and node_modules.
// Other hidden directories are sent, as terraform's fileset sees them.
func skippedDir(name string) bool {
	return name == ".git" || name == ".terraform" || strings.HasPrefix(name, ".cairn") || name == "node_modules" ||
		strings.HasPrefix(name, "terraform.tfstate") // terraform.tfstate.d: the workspaces' states
}

// skippedFile reports whether a file of a configuration is left out of what is sent:
// terraform's state and its lock, a cairn server's files and secrets key, and environment
// files (.env, .env.local, .envrc), which by convention hold credentials that the server, which
// keeps every request, must not receive unasked. Other hidden files (.terraform.lock.hcl among
// them) are sent.
func skippedFile(name string) bool {
	return strings.HasPrefix(name, "terraform.tfstate") || strings.HasPrefix(name, ".terraform.tfstate") ||
		strings.HasPrefix(name, ".cairn") || strings.HasSuffix(name, ".secrets.key") ||
		name == ".env" || name == ".envrc" || strings.HasPrefix(name, ".env.")
}

// outsideWalk reports whether a module directory relative to the root is one that reading
// the root does not send: above it, or in a directory left out such as .terraform.
func outsideWalk(rel string) bool {
	if rel == ".." || strings.HasPrefix(rel, "../") {
		return true
	}
	for _, part := range strings.Split(rel, "/") {
		if skippedDir(part) {
			return true
		}
	}
	return false
}

// within reports whether rel is one of dirs or inside one ("../shared" is inside "..", but
// "../.." is not).
func within(rel string, dirs []string) bool {
	for _, d := range dirs {
		rest, ok := strings.CutPrefix(rel, d+"/")
		if rel == d || ok && rest != ".." && !strings.HasPrefix(rest, "../") {
			return true
		}
	}
	return false
}

// installModules installs the remote modules the configuration in dir calls that are
// missing or changed, into dir/.terraform/modules as terraform init does; the server never
// fetches modules. A configuration whose modules are all installed needs no network.
func (r *runner) installModules(ctx context.Context, dir string, upgrade bool) (install.Result, error) {
	res, ds := install.Install(ctx, install.Options{Dir: dir, Upgrade: upgrade})
	if len(res.Installed) > 0 && r.output != "json" {
		for _, key := range res.Installed {
			rec := res.Manifest[key]
			what := rec.Source
			if rec.Version != "" {
				what += " " + rec.Version
			}
			fmt.Fprintf(r.env.Stderr, "cairn: installed module %s (%s) in %s\n", key, what, rec.Dir)
		}
	}
	if ds.HasErrors() {
		return res, fmt.Errorf("cannot install the modules of %s:%s", dir, formatHCLDiags(ds))
	}
	return res, nil
}

// formatHCLDiags lists diagnostics one per line, file:line:col first.
func formatHCLDiags(ds hcl.Diagnostics) string {
	var b strings.Builder
	for _, d := range ds {
		b.WriteString("\n  ")
		if d.Subject != nil {
			fmt.Fprintf(&b, "%s:%d:%d: ", d.Subject.Filename, d.Subject.Start.Line, d.Subject.Start.Column)
		}
		b.WriteString(d.Summary)
		if d.Detail != "" {
			b.WriteString(": " + d.Detail)
		}
	}
	return b.String()
}

// tfVarEnv collects TF_VAR_<name> values, as terraform reads them.
func tfVarEnv(environ func() []string) map[string]string {
	if environ == nil {
		return nil
	}
	var out map[string]string
	for _, kv := range environ() {
		k, v, _ := strings.Cut(kv, "=")
		if name, ok := strings.CutPrefix(k, "TF_VAR_"); ok && name != "" {
			if out == nil {
				out = map[string]string{}
			}
			out[name] = v
		}
	}
	return out
}

// keepLock writes the provider lock file the server chose into the configuration directory
// when it differs from the one there, as terraform init does, so another machine gets the same
// provider versions.
func (r *runner) keepLock(src source, lock string) error {
	if src.dir == "" || lock == "" || lock == src.req.Files[lockFileName] {
		return nil
	}
	path := filepath.Join(src.dir, lockFileName)
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, []byte(lock)) {
		return nil
	}
	if err := os.WriteFile(path, []byte(lock), 0o644); err != nil {
		return fmt.Errorf("cannot write %s: %w", path, err)
	}
	if r.output != "json" {
		fmt.Fprintf(r.env.Stderr, "cairn: wrote the provider versions to %s; commit it so others get the same ones\n", path)
	}
	return nil
}
