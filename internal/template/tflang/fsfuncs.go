package tflang

import (
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"

	"github.com/cairn-dev/cairn/internal/budget"
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
	home  bool   // "~" is this process's home directory (Options.ClientHome)
	// meter is the meter of the evaluation calling the functions (see meterNow)
	meter func() *budget.Meter
	globs *globCache // fileset's compiled patterns; nil: none kept
}

// expandHome is p with a leading "~" or "~/" replaced by the home directory, as terraform
// expands it (go-homedir); false when the home directory is not the user's (a shared
// server's) or p names another user's ("~bob/").
func (c sentFiles) expandHome(p string) (string, bool) {
	if !strings.HasPrefix(p, "~") {
		return p, true
	}
	if !c.home || len(p) > 1 && p[1] != '/' && p[1] != '\\' {
		return "", false
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", false
	}
	return filepath.Join(home, p[1:]), true
}

// display is p as terraform's messages show it: expanded, cleaned, relative to the root
// module's directory (its working directory) when relative.
func (c sentFiles) display(p string) string {
	if x, ok := c.expandHome(p); ok {
		p = x
	}
	return filepath.Clean(p)
}

// readError is why the file at p, which read did not find, cannot be read: terraform's
// message for a directory, "no file exists" otherwise.
func (c sentFiles) readError(p string, marks cty.ValueMarks) error {
	if c.isDir(p) {
		return fmt.Errorf("failed to read file: read %s: is a directory", shownBare(c.display(p), marks))
	}
	return notFound(p, marks)
}

// key is the key of files that path p names, false when p cannot name a file that was sent.
func (c sentFiles) key(p string) (string, bool) {
	rel, ok := c.fromRoot(p)
	if !ok {
		return "", false
	}
	return path.Join(cleanDir(c.root), rel), true
}

// fromRoot is path p relative to the root module's directory, cleaned; false when p cannot
// name a directory of the sent files.
func (c sentFiles) fromRoot(p string) (string, bool) {
	p, ok := c.expandHome(p)
	if !ok {
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
	return path.Clean(p), true
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

// shownBare is p as an operating system's message shows it (unquoted), redacted as shown.
func shownBare(p string, marks cty.ValueMarks) string {
	if _, ok := marks[value.Sensitive]; ok {
		return "(sensitive value)"
	}
	return p
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
				return cty.UnknownVal(cty.String), function.NewArgError(0, c.readError(p.AsString(), marks))
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
			if !ok && c.isDir(p.AsString()) {
				// terraform's messages here are the operating system's
				return cty.UnknownVal(cty.String), fmt.Errorf("read %s: is a directory", shownBare(c.display(p.AsString()), marks))
			}
			if !ok {
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
			if c.isDir(p.AsString()) { // terraform's is not an error of the argument
				return cty.False, fmt.Errorf("%s is a directory, not a file", shown(c.display(p.AsString()), marks))
			}
			return cty.False.WithMarks(marks), nil
		},
	})
}

// maxPathBytes is the longest path a file system has (Linux's PATH_MAX): longer keys of the
// files name nothing fileset could find.
const maxPathBytes = 4096

// fileSetFunc is fileset(path, pattern): the files under path matching the glob pattern
// (doublestar v1's, as terraform's; see glob.go), relative to path. The pattern is compiled
// once and each file's path matched in linear time.
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
			// terraform globs path.Join(path, pattern) from its working directory (the root
			// module's) and gives each match relative to path: rel and wanted are those, in
			// the root module's terms; the files are matched in the keys' terms
			rel, ok := c.fromRoot(p.AsString())
			if !ok {
				return cty.SetValEmpty(cty.String).WithMarks(pmarks, patmarks), nil
			}
			wanted := path.Join(rel, pat.AsString())
			full := path.Join(cleanDir(c.root), wanted)
			m := c.meterNow()
			b := m.Budget()
			if err := b.Err(); err != nil { // the request's time, or its client gone
				return cty.UnknownVal(retType), err
			}
			re, err := c.globs.compile(full, m)
			if err != nil && !errors.Is(err, errBadPattern) { // a limit of the budget
				return cty.UnknownVal(retType), err
			}
			if err != nil {
				return cty.UnknownVal(retType), fmt.Errorf("failed to glob pattern %s: %w", shown(path.Join(p.AsString(), pat.AsString()), cty.NewValueMarks(pmarks, patmarks)), err)
			}
			// Glob walks down from the directory the pattern's literal components name (lit),
			// never up through "..": a key starting with more ".." lies outside its walk; a
			// match is that directory as written joined with the rest of the file's path
			lit := literalPrefix(wanted)
			litKey := path.Join(cleanDir(c.root), lit)
			up := leadingParents(full)
			var names []string
			seen := 0
			for name := range c.files {
				if seen++; seen%256 == 0 {
					if err := b.Err(); err != nil { // the request's time, or its client gone
						return cty.UnknownVal(retType), err
					}
				}
				if len(name) > maxPathBytes || path.Clean(name) != name || leadingParents(name) > up || !re.MatchString(name) {
					continue
				}
				inLit, err := filepath.Rel(litKey, name)
				if err != nil {
					continue
				}
				match := path.Join(lit, filepath.ToSlash(inLit))
				out, err := filepath.Rel(rel, match)
				if err != nil {
					return cty.UnknownVal(retType), fmt.Errorf("failed to trim path of match %s: %w", shown(match, cty.NewValueMarks(pmarks, patmarks)), err)
				}
				names = append(names, filepath.ToSlash(out))
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

// hashes are the file hashing functions by name.
func (c sentFiles) hashes() map[string]function.Function {
	return map[string]function.Function{
		"filemd5": c.hashFunc(md5.New, false), "filesha1": c.hashFunc(sha1.New, false),
		"filesha256": c.hashFunc(sha256.New, false), "filesha512": c.hashFunc(sha512.New, false),
		"filebase64sha256": c.hashFunc(sha256.New, true), "filebase64sha512": c.hashFunc(sha512.New, true),
	}
}
