package pulumiyaml

import (
	"encoding/base64"
	"path"
	"sort"
	"strings"

	"github.com/pulumi/pulumi-yaml/pkg/pulumiyaml/syntax"
	"gopkg.in/yaml.v3"

	"github.com/cairn-dev/cairn/internal/budget"
	"github.com/cairn-dev/cairn/internal/diag"
)

// packageDecl is a package declaration file (`sdks/<pkg>.yaml`, written by `pulumi package
// add`): pulumi-yaml reads every *.yaml file below the program directory that says
// `packageDeclarationVersion: 1` and pins the plugin version of the package it names.
type packageDecl struct {
	DeclVersion      int         `yaml:"packageDeclarationVersion"`
	Name             string      `yaml:"name"`
	Version          string      `yaml:"version"`
	DownloadURL      string      `yaml:"downloadUrl"`
	Parameterization *paramDecl  `yaml:"parameterization"`
	Extension        *paramDecl  `yaml:"extension"`
	file             string      // where it was declared, for messages
	at               *diag.Range // Pulumi.yaml's packages: entry; nil for a file
}

type paramDecl struct {
	Name    string `yaml:"name"`
	Version string `yaml:"version"`
	Value   string `yaml:"value"`
}

// namespace is the first segment of the type tokens the package serves: a parameterized
// package serves its parameterization's name, not the plugin's.
func (d packageDecl) namespace() string {
	if d.Parameterization != nil {
		return d.Parameterization.Name
	}
	return d.Name
}

func (d packageDecl) rng() diag.Range {
	if d.at != nil {
		return *d.at
	}
	return diag.Range{Filename: d.file, Line: 1, Column: 1}
}

// packageDecls reads the package declarations below dir (the program directory, "" for the
// project's) as pulumi-yaml's packages.SearchPackageDecls does: every file ending in .yaml;
// one that does not decode or has another packageDeclarationVersion is not a declaration
// and is skipped; a declaration without a name, or with both parameterization and
// extension, is an error. Files are read in name order, so two declarations of one
// namespace are reported the same way each time.
func packageDecls(bud *budget.Budget, files map[string]string, dir string) ([]packageDecl, diag.Diagnostics) {
	var names []string
	for name, text := range files {
		// Only files that can be declarations are decoded (not the program, its stack files
		// or data), and each within the request's YAML budget.
		if path.Ext(name) == ".yaml" && within(name, dir) && strings.Contains(text, "packageDeclarationVersion") &&
			budget.YAMLTooBig([]byte(text), bud.Limits(), name) == nil {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	var out []packageDecl
	var ds diag.Diagnostics
	for _, name := range names {
		var d packageDecl
		if err := yaml.Unmarshal([]byte(files[name]), &d); err != nil || d.DeclVersion != 1 {
			continue
		}
		d.file = name
		if msg := d.invalid(); msg != "" {
			ds = append(ds, diag.Errorf(d.rng(), "", "package declaration %s: %s", name, msg))
			continue
		}
		out = append(out, d)
	}
	return out, ds
}

// invalid says what is wrong with a declaration, "" when nothing.
func (d packageDecl) invalid() string {
	switch {
	case d.Name == "":
		return "package name is required"
	case d.Parameterization != nil && d.Extension != nil:
		return "package cannot declare both parameterization and extension"
	case d.Parameterization != nil && (d.Parameterization.Name == "" || d.Parameterization.Version == ""):
		return "parameterization name and version are required"
	case d.Parameterization != nil && !validBase64(d.Parameterization.Value):
		return "parameterization value must be base64"
	case d.Extension != nil && (d.Extension.Name == "" || d.Extension.Version == ""):
		return "extension name and version are required"
	}
	return ""
}

func validBase64(s string) bool {
	_, err := base64.StdEncoding.DecodeString(s)
	return err == nil
}

// within says whether the slash path name lies below dir ("" or "." for the root).
func within(name, dir string) bool {
	if dir == "" || dir == "." {
		return !strings.HasPrefix(name, "../")
	}
	return strings.HasPrefix(name, strings.TrimSuffix(dir, "/")+"/")
}

// projectPackages reads Pulumi.yaml's packages: (name → "source@version" or {source,
// version, parameters}), Pulumi's workspace.PackageSpec. Only a registry name with an
// optional version is served here: a local path, a git URL or parameters need a plugin
// build or a Parameterize call cairn does not make yet, and are refused by name.
func (p *parser) projectPackages(e entry) {
	obj, ok := e.value.(*syntax.ObjectNode)
	if !ok {
		p.errorf(e.at, "packages must be an object of package name → source[@version]")
		return
	}
	for _, f := range entries(obj, e.at.path) {
		rng := f.at.rng
		d := packageDecl{DeclVersion: 1, Name: f.key, file: ProjectFile, at: &rng}
		var source string
		switch v := f.value.(type) {
		case *syntax.StringNode:
			source, d.Version, _ = strings.Cut(v.Value(), "@")
		case *syntax.ObjectNode:
			for _, g := range entries(v, f.at.path) {
				s, isString := g.value.(*syntax.StringNode)
				switch {
				case g.key == "source" && isString:
					source = s.Value()
				case g.key == "version" && isString:
					d.Version = s.Value()
				case g.key == "checksums" || g.key == "pluginDownloadURL":
					// downloads only: cairn never downloads a plugin
				default:
					p.errorf(g.at, "packages.%s: %s is not supported yet by cairn (a registry name and a version are)", f.key, g.key)
				}
			}
		default:
			p.errorf(f.at, "packages.%s must be source[@version] or an object with source and version", f.key)
			continue
		}
		if !registryName(source, f.key) {
			p.errorf(f.at, "packages.%s: source %q is not supported yet by cairn (a local path or URL needs a plugin build); install the plugin and name it by its package", f.key, source)
			continue
		}
		p.packages = append(p.packages, d)
	}
}

// registryName says whether source names package pkg in a registry ("pkg", "org/pkg",
// "source/org/pkg"), not a local path or a URL.
func registryName(source, pkg string) bool {
	if source == "" || source == pkg {
		return true
	}
	first, _, _ := strings.Cut(source, "/")
	return strings.HasSuffix(source, "/"+pkg) && !strings.HasPrefix(source, ".") && !strings.HasPrefix(source, "/") &&
		!strings.Contains(source, "://") && !strings.Contains(first, ".")
}

// declaredVersion returns the declaration of the package serving namespace, if any; two
// declarations of one namespace at different versions are an error.
func (p *parser) declaredVersion(namespace string) (packageDecl, bool) {
	var found packageDecl
	ok := false
	for _, d := range p.packages {
		if d.namespace() != namespace {
			continue
		}
		if ok && found.Version != d.Version {
			p.ds = append(p.ds, diag.Errorf(d.rng(), "", "package %s is declared at version %s here and %s in %s: one plugin version serves a package", namespace, d.Version, found.Version, found.file))
			continue
		}
		found, ok = d, true
	}
	return found, ok
}
