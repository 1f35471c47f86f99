package tflang

import (
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"hash"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"

	"github.com/cairn-dev/cairn/internal/value"
)

// The filesystem functions of terraform's table (tflint's terraform/lang/funcs) read the
// process's disk through os.Open and os.Stat. cairn is a shared server: a configuration must
// read only the files it was sent (never /etc/passwd of the server), so these few functions
// are written again here over the configuration's files map, with terraform's semantics and
// messages: a relative path is resolved against the root module's directory (terraform's
// working directory), an absolute one only when it lies under the directory the configuration
// was read from on the client (Options.AbsDir).

// sentFiles is what the filesystem functions read.
type sentFiles struct {
	files map[string][]byte
	root  string // the root module's directory among the keys of files
	abs   string // the root module's absolute directory where it was read; "" when unknown
}

// key is the key of files that path p names, false when p cannot name a file that was sent.
func (c sentFiles) key(p string) (string, bool) {
	if strings.HasPrefix(p, "~") {
		return "", false // the home directory of the server is not the user's
	}
	if path.IsAbs(p) || filepath.IsAbs(p) {
		if c.abs == "" {
			return "", false
		}
		rel, err := filepath.Rel(c.abs, p)
		if err != nil {
			return "", false
		}
		p = filepath.ToSlash(rel)
	}
	return path.Join(cleanDir(c.root), p), true
}

// read is the content of the file at p.
func (c sentFiles) read(p string) ([]byte, bool) {
	k, ok := c.key(p)
	if !ok {
		return nil, false
	}
	b, ok := c.files[k]
	return b, ok
}

// isDir reports whether p names a directory of the files.
func (c sentFiles) isDir(p string) bool {
	k, ok := c.key(p)
	if !ok {
		return false
	}
	if k == "." {
		return true
	}
	for name := range c.files {
		if strings.HasPrefix(name, k+"/") {
			return true
		}
	}
	return false
}

// shown is p as a message may show it: terraform's redaction of a sensitive path.
func shown(p string, marks cty.ValueMarks) string {
	if _, ok := marks[value.Sensitive]; ok {
		return "(sensitive value)"
	}
	return fmt.Sprintf("%q", p)
}

func notFound(p string, marks cty.ValueMarks) error {
	return fmt.Errorf("no file exists at %s; this function works only with files that are distributed as part of the configuration source code, so if this file will be created by a resource in this configuration you must instead obtain this result from an attribute of that resource", shown(p, marks))
}

var pathParam = function.Parameter{Name: "path", Type: cty.String, AllowMarked: true, AllowUnknown: true}

// fileFunc is file (or filebase64): the content of a file, which must be UTF-8.
func (c sentFiles) fileFunc(encBase64 bool) function.Function {
	return function.New(&function.Spec{
		Params: []function.Parameter{pathParam},
		Type:   function.StaticReturnType(cty.String),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			p, marks := args[0].Unmark()
			if !p.IsKnown() {
				return cty.UnknownVal(cty.String).WithMarks(marks), nil
			}
			src, ok := c.read(p.AsString())
			if !ok {
				return cty.UnknownVal(cty.String), function.NewArgError(0, notFound(p.AsString(), marks))
			}
			if encBase64 {
				return cty.StringVal(base64.StdEncoding.EncodeToString(src)).WithMarks(marks), nil
			}
			if !utf8.Valid(src) {
				return cty.UnknownVal(cty.String), fmt.Errorf("contents of %s are not valid UTF-8; use the filebase64 function to obtain the Base64 encoded contents or the other file functions (e.g. filemd5, filesha256) to obtain file hashing results instead", shown(p.AsString(), marks))
			}
			return cty.StringVal(string(src)).WithMarks(marks), nil
		},
	})
}

// hashFunc is filemd5, filesha1 ... (hex) or filebase64sha256 ... (base64) of a file's bytes.
func (c sentFiles) hashFunc(h func() hash.Hash, encBase64 bool) function.Function {
	return function.New(&function.Spec{
		Params: []function.Parameter{pathParam},
		Type:   function.StaticReturnType(cty.String),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			p, marks := args[0].Unmark()
			if !p.IsKnown() {
				return cty.UnknownVal(cty.String).WithMarks(marks), nil
			}
			src, ok := c.read(p.AsString())
			if !ok {
				// terraform's message here is the operating system's
				return cty.UnknownVal(cty.String), fmt.Errorf("open %s: no such file or directory", path.Clean(p.AsString()))
			}
			d := h()
			d.Write(src)
			sum := d.Sum(nil)
			if encBase64 {
				return cty.StringVal(base64.StdEncoding.EncodeToString(sum)).WithMarks(marks), nil
			}
			return cty.StringVal(hex.EncodeToString(sum)).WithMarks(marks), nil
		},
	})
}

func (c sentFiles) fileExistsFunc() function.Function {
	return function.New(&function.Spec{
		Params: []function.Parameter{pathParam},
		Type:   function.StaticReturnType(cty.Bool),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			p, marks := args[0].Unmark()
			if !p.IsKnown() {
				return cty.UnknownVal(cty.Bool).WithMarks(marks), nil
			}
			if _, ok := c.read(p.AsString()); ok {
				return cty.True.WithMarks(marks), nil
			}
			if c.isDir(p.AsString()) {
				k, _ := c.key(p.AsString())
				return cty.False, function.NewArgErrorf(0, "%s is a directory, not a file", shown(k, marks))
			}
			return cty.False.WithMarks(marks), nil
		},
	})
}

// fileSetFunc is fileset(path, pattern): the files under path matching the glob pattern
// (doublestar's, as terraform's), relative to path.
func (c sentFiles) fileSetFunc() function.Function {
	return function.New(&function.Spec{
		Params: []function.Parameter{pathParam, {Name: "pattern", Type: cty.String, AllowMarked: true, AllowUnknown: true}},
		Type:   function.StaticReturnType(cty.Set(cty.String)),
		Impl: func(args []cty.Value, retType cty.Type) (cty.Value, error) {
			p, pmarks := args[0].Unmark()
			pat, patmarks := args[1].Unmark()
			if !p.IsKnown() || !pat.IsKnown() {
				return cty.UnknownVal(retType).WithMarks(pmarks, patmarks), nil
			}
			base, ok := c.key(p.AsString())
			if !ok {
				return cty.SetValEmpty(cty.String).WithMarks(pmarks, patmarks), nil
			}
			full := path.Join(base, pat.AsString())
			if _, err := doublestar.Match(full, full); err != nil {
				return cty.UnknownVal(retType), fmt.Errorf("failed to glob pattern %s: %w", shown(full, cty.NewValueMarks(pmarks, patmarks)), err)
			}
			var names []string
			for name := range c.files {
				if ok, _ := doublestar.Match(full, name); !ok {
					continue
				}
				rel := strings.TrimPrefix(name, base+"/")
				if base == "." {
					rel = name
				}
				names = append(names, rel)
			}
			if len(names) == 0 {
				return cty.SetValEmpty(cty.String).WithMarks(pmarks, patmarks), nil
			}
			sort.Strings(names)
			vals := make([]cty.Value, len(names))
			for i, n := range names {
				vals[i] = cty.StringVal(n)
			}
			return cty.SetVal(vals).WithMarks(pmarks, patmarks), nil
		},
	})
}

// absPathFunc is abspath: a relative path is made absolute against the root module's
// directory where the configuration was read, as terraform run there (-chdir) makes it;
// without that directory (a configuration sent without it), against "/".
func (c sentFiles) absPathFunc() function.Function {
	return function.New(&function.Spec{
		Params: []function.Parameter{{Name: "path", Type: cty.String}},
		Type:   function.StaticReturnType(cty.String),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			p := args[0].AsString()
			if !filepath.IsAbs(p) {
				dir := c.abs
				if dir == "" {
					dir = "/"
				}
				p = filepath.Join(dir, p)
			}
			return cty.StringVal(filepath.ToSlash(filepath.Clean(p))), nil
		},
	})
}

// templateFileFunc is templatefile(path, vars): the file rendered as a template with vars
// and the functions of table, except templatefile and templatestring themselves (a file
// must not include itself), as terraform.
func (c sentFiles) templateFileFunc(table func() map[string]function.Function) function.Function {
	load := func(p string, marks cty.ValueMarks) (hclsyntax.Expression, error) {
		src, ok := c.read(p)
		if !ok {
			return nil, function.NewArgError(0, notFound(p, marks))
		}
		if !utf8.Valid(src) {
			return nil, fmt.Errorf("contents of %s are not valid UTF-8", shown(p, marks))
		}
		expr, ds := hclsyntax.ParseTemplate(src, p, hcl.InitialPos)
		if ds.HasErrors() {
			return nil, ds
		}
		rewrite(expr, nil) // its for expressions and interpolations are metered as the configuration's
		return expr, nil
	}
	inner := sync.OnceValue(func() map[string]function.Function { return withoutTemplates(table()) })
	render := func(expr hclsyntax.Expression, vars cty.Value) (cty.Value, error) {
		if ty := vars.Type(); !ty.IsMapType() && !ty.IsObjectType() {
			return cty.DynamicVal, function.NewArgErrorf(1, "invalid vars value: must be a map")
		}
		ctx := &hcl.EvalContext{Variables: vars.AsValueMap()}
		for n := range ctx.Variables {
			if !hclsyntax.ValidIdentifier(n) {
				return cty.DynamicVal, function.NewArgErrorf(1, "invalid template variable name %q: must start with a letter, followed by zero or more letters, digits, and underscores", n)
			}
		}
		for _, t := range expr.Variables() {
			if _, ok := ctx.Variables[t.RootName()]; !ok {
				return cty.DynamicVal, function.NewArgErrorf(1, "vars map does not contain key %q, referenced at %s", t.RootName(), t[0].SourceRange())
			}
		}
		ctx.Functions = inner()
		v, ds := expr.Value(ctx)
		if err := limitErr(ds); err != nil {
			return cty.DynamicVal, err // the limit's own diagnostic, not one inside another
		}
		if ds.HasErrors() {
			return cty.DynamicVal, ds
		}
		return v, nil
	}
	return function.New(&function.Spec{
		Params: []function.Parameter{pathParam, {Name: "vars", Type: cty.DynamicPseudoType, AllowMarked: true, AllowUnknown: true}},
		Type: func(args []cty.Value) (cty.Type, error) {
			if !args[0].IsKnown() || !args[1].IsKnown() {
				return cty.DynamicPseudoType, nil
			}
			// a template of one interpolation may be of any type: rendering tells
			p, marks := args[0].Unmark()
			expr, err := load(p.AsString(), marks)
			if err != nil {
				return cty.DynamicPseudoType, err
			}
			vars, _ := args[1].UnmarkDeep()
			v, err := render(expr, vars)
			return v.Type(), err
		},
		Impl: func(args []cty.Value, retType cty.Type) (cty.Value, error) {
			p, pmarks := args[0].Unmark()
			vars, vmarks := args[1].UnmarkDeep()
			if !p.IsKnown() || !vars.IsKnown() {
				return cty.UnknownVal(retType).WithMarks(pmarks, vmarks), nil
			}
			expr, err := load(p.AsString(), pmarks)
			if err != nil {
				return cty.DynamicVal, err
			}
			v, err := render(expr, vars)
			return v.WithMarks(pmarks, vmarks), err
		},
	})
}

// withoutTemplates is fns with the template functions refusing to be called.
func withoutTemplates(fns map[string]function.Function) map[string]function.Function {
	out := make(map[string]function.Function, len(fns))
	for name, f := range fns {
		plain := strings.TrimPrefix(name, "core::")
		if plain == "templatefile" || plain == "templatestring" {
			f = function.New(&function.Spec{Params: f.Params(), VarParam: f.VarParam(),
				Type: func([]cty.Value) (cty.Type, error) {
					return cty.NilType, fmt.Errorf("cannot recursively call %s from inside another template function", plain)
				}})
		}
		out[name] = f
	}
	return out
}

// hashes are the file hashing functions by name.
func (c sentFiles) hashes() map[string]function.Function {
	return map[string]function.Function{
		"filemd5": c.hashFunc(md5.New, false), "filesha1": c.hashFunc(sha1.New, false),
		"filesha256": c.hashFunc(sha256.New, false), "filesha512": c.hashFunc(sha512.New, false),
		"filebase64sha256": c.hashFunc(sha256.New, true), "filebase64sha512": c.hashFunc(sha512.New, true),
	}
}
