package cli

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cairn-dev/cairn/api"
	"github.com/cairn-dev/cairn/internal/template/tflang"
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

// readDir reads a Terraform configuration: every file below dir except hidden directories,
// .terraform and terraform's own state files, by slash-separated relative path; and the
// directories of local modules outside dir that it calls (source = "../shared"), keyed
// by their path relative to dir ("../shared/main.tf"), as the server resolves them.
func (r *runner) readDir(dir string, s *sourceFlags, params map[string]string) (source, error) {
	files := map[string]string{}
	if err := collectFiles(files, dir, "."); err != nil {
		return source{}, fmt.Errorf("cannot read the configuration in %s: %w", dir, err)
	}
	if err := collectModules(files, dir); err != nil {
		return source{}, err
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
	return source{req: req, dir: dir}, nil
}

// collectFiles adds the files below root to files, keyed by base joined with their path
// relative to root.
func collectFiles(files map[string]string, root, base string) error {
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p != root && (strings.HasPrefix(name, ".") || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || strings.HasPrefix(name, "terraform.tfstate") || (strings.HasPrefix(name, ".") && name != lockFileName) {
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
		files[path.Join(base, filepath.ToSlash(rel))] = string(b)
		return nil
	})
}

// collectModules adds the local modules outside dir that the configuration calls, directly
// or through other modules. A module directory that does not exist is left for the server
// to report, with the position of its source.
func collectModules(files map[string]string, dir string) error {
	absDir, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("cannot read the configuration in %s: %w", dir, err)
	}
	var walkErr error
	read := func(rel string) map[string][]byte {
		if strings.HasPrefix(rel, "..") && !hasDir(files, rel) {
			root := filepath.Join(dir, filepath.FromSlash(rel))
			abs, err := filepath.Abs(root)
			inside, _ := filepath.Rel(abs, absDir)
			if err == nil && (inside == "." || !strings.HasPrefix(inside, "..")) {
				return nil // a module directory above the configuration would send it twice
			}
			if fi, err := os.Stat(root); err == nil && fi.IsDir() {
				if err := collectFiles(files, root, rel); err != nil && walkErr == nil {
					walkErr = fmt.Errorf("cannot read module directory %s: %w", root, err)
				}
			}
		}
		out := map[string][]byte{}
		for name, text := range files {
			if path.Dir(name) == rel {
				out[name] = []byte(text)
			}
		}
		return out
	}
	tflang.ModuleDirs(read)
	return walkErr
}

// hasDir reports whether files holds a file directly in dir.
func hasDir(files map[string]string, dir string) bool {
	for name := range files {
		if path.Dir(name) == dir {
			return true
		}
	}
	return false
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
