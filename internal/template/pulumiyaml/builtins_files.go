package pulumiyaml

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"

	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/diag"
	psig "github.com/pulumi/pulumi/sdk/v3/go/common/resource/sig"
)

// maxExpanded bounds what hashing an archive of archives may decompress: a small zip must not
// make the parser inflate gigabytes.
const maxExpanded = 256 << 20

func init() {
	for name, f := range map[string]oneArg{
		"fn::readfile":         {cty.String, readFile},
		"fn::filebase64":       {cty.String, fileBase64},
		"fn::filebase64sha256": {cty.String, fileBase64Sha256},
		"fn::stringasset":      {cty.DynamicPseudoType, stringAsset},
		"fn::fileasset":        {cty.DynamicPseudoType, fileAsset},
		"fn::remoteasset":      {cty.DynamicPseudoType, remoteAsset},
		"fn::filearchive":      {cty.DynamicPseudoType, fileArchive},
		"fn::remotearchive":    {cty.DynamicPseudoType, remoteArchive},
		"fn::assetarchive":     {cty.DynamicPseudoType, assetArchive},
	} {
		oneArgs[name] = f
		evaluated[name] = true
		delete(pending, name)
	}
}

// projectFile reads the file a built-in names, relative to the program's directory.
func projectFile(c call, ev *evaluator, v cty.Value) (string, string, *diag.Diagnostic) {
	p, d := stringArg(c, v)
	if d != nil {
		return "", "", d
	}
	rel, ok := ev.prog.src.resolve(p)
	if !ok {
		return "", "", c.failp("%s is outside the project directory: cairn reads only the files sent with the project", p)
	}
	text, ok := ev.prog.src.file(rel)
	if !ok {
		return "", "", c.failp("no file %s in the project (read as %s)", p, rel)
	}
	if d := fileFits(ev, c, text); d != nil {
		return "", "", d
	}
	return p, text, nil
}

func readFile(c call, ev *evaluator, v cty.Value) (cty.Value, *diag.Diagnostic) {
	_, text, d := projectFile(c, ev, v)
	if d != nil {
		return cty.NilVal, d
	}
	return cty.StringVal(text), nil
}

func fileBase64(c call, ev *evaluator, v cty.Value) (cty.Value, *diag.Diagnostic) {
	_, text, d := projectFile(c, ev, v)
	if d != nil {
		return cty.NilVal, d
	}
	return cty.StringVal(base64.StdEncoding.EncodeToString([]byte(text))), nil
}

func fileBase64Sha256(c call, ev *evaluator, v cty.Value) (cty.Value, *diag.Diagnostic) {
	_, text, d := projectFile(c, ev, v)
	if d != nil {
		return cty.NilVal, d
	}
	h := sha256.Sum256([]byte(text))
	return cty.StringVal(base64.StdEncoding.EncodeToString(h[:])), nil
}

func sha256Hex(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// assetVal is an asset as Pulumi serializes it: the signature, one of path/text/uri, and the
// hash of the contents when known (a remote asset's is not: cairn does not fetch it).
func assetVal(sig string, attrs map[string]string) cty.Value {
	obj := map[string]cty.Value{psig.Key: cty.StringVal(sig)}
	for k, v := range attrs {
		obj[k] = cty.StringVal(v)
	}
	return cty.ObjectVal(obj)
}

func stringAsset(c call, _ *evaluator, v cty.Value) (cty.Value, *diag.Diagnostic) {
	s, d := stringArg(c, v)
	if d != nil {
		return cty.NilVal, d
	}
	return assetVal(psig.AssetSig, map[string]string{"text": s, "hash": sha256Hex([]byte(s))}), nil
}

func fileAsset(c call, ev *evaluator, v cty.Value) (cty.Value, *diag.Diagnostic) {
	p, text, d := projectFile(c, ev, v)
	if d != nil {
		return cty.NilVal, d
	}
	return assetVal(psig.AssetSig, map[string]string{"path": p, "hash": sha256Hex([]byte(text))}), nil
}

func remoteAsset(c call, _ *evaluator, v cty.Value) (cty.Value, *diag.Diagnostic) {
	s, d := stringArg(c, v)
	if d != nil {
		return cty.NilVal, d
	}
	return assetVal(psig.AssetSig, map[string]string{"uri": s}), nil
}

func remoteArchive(c call, _ *evaluator, v cty.Value) (cty.Value, *diag.Diagnostic) {
	s, d := stringArg(c, v)
	if d != nil {
		return cty.NilVal, d
	}
	return assetVal(psig.ArchiveSig, map[string]string{"uri": s}), nil
}

// fileArchive is a .tar, .tgz/.tar.gz, .zip/.jar file (hashed as it is) or a directory
// (hashed as the tar Pulumi makes of it), relative to the program's directory.
func fileArchive(c call, ev *evaluator, v cty.Value) (cty.Value, *diag.Diagnostic) {
	p, d := stringArg(c, v)
	if d != nil {
		return cty.NilVal, d
	}
	src := ev.prog.src
	rel, ok := src.resolve(p)
	if !ok {
		return cty.NilVal, c.failp("%s is outside the project directory: cairn reads only the files sent with the project", p)
	}
	hash, err := src.cached("archive:"+rel, func() (string, error) {
		if text, isFile := src.file(rel); isFile && archiveFormat(rel) != "" {
			return sha256Hex([]byte(text)), nil // an archive file is hashed as it is
		}
		var buf bytes.Buffer
		if err := writeTar(&buf, src, []member{{name: "", archive: rel}}); err != nil {
			return "", err
		}
		return sha256Hex(buf.Bytes()), nil
	})
	if err != nil {
		return cty.NilVal, c.failp("%s: %v", p, err)
	}
	return assetVal(psig.ArchiveSig, map[string]string{"path": p, "hash": hash}), nil
}

// assetArchive is an archive of named assets and archives: an object of fn::*Asset and
// fn::*Archive values.
func assetArchive(c call, ev *evaluator, v cty.Value) (cty.Value, *diag.Diagnostic) {
	if v.IsNull() || !(v.Type().IsObjectType() || v.Type().IsMapType()) || isAssetOrArchive(v) {
		return cty.NilVal, c.failp("expects an object of assets and archives, got %s", typeName(v))
	}
	var members []member
	assets := map[string]cty.Value{}
	for it := v.ElementIterator(); it.Next(); {
		k, e := it.Element()
		m, ok := memberOf(ev.prog.src, k.AsString(), e)
		if !ok {
			return cty.NilVal, c.failp("%s is not an asset or archive (use fn::fileAsset, fn::stringAsset, fn::fileArchive, ...)", k.AsString())
		}
		members = append(members, m)
		assets[k.AsString()] = e
	}
	slices.SortFunc(members, func(a, b member) int { return strings.Compare(a.name, b.name) })
	var buf bytes.Buffer
	if err := writeTar(&buf, ev.prog.src, members); err != nil {
		return cty.NilVal, c.failp("%v", err)
	}
	obj := map[string]cty.Value{psig.Key: cty.StringVal(psig.ArchiveSig), "hash": cty.StringVal(sha256Hex(buf.Bytes()))}
	if len(assets) == 0 {
		obj["assets"] = cty.EmptyObjectVal
	} else {
		obj["assets"] = cty.ObjectVal(assets)
	}
	return cty.ObjectVal(obj), nil
}

// isAssetOrArchive says whether v is an asset or archive object.
func isAssetOrArchive(v cty.Value) bool {
	if v.IsNull() || !v.IsKnown() || !v.Type().IsObjectType() || !v.Type().HasAttribute(psig.Key) {
		return false
	}
	sig := v.GetAttr(psig.Key)
	return sig.IsKnown() && !sig.IsNull() && sig.Type() == cty.String && (sig.AsString() == psig.AssetSig || sig.AsString() == psig.ArchiveSig)
}

// member is one entry of an archive being hashed: a blob, or an archive flattened under name.
type member struct {
	name    string
	blob    *string
	archive string // project path of a file archive or directory
	assets  []member
	remote  bool
}

func memberOf(src *sources, name string, v cty.Value) (member, bool) {
	if !isAssetOrArchive(v) {
		return member{}, false
	}
	attr := func(k string) (string, bool) {
		if !v.Type().HasAttribute(k) {
			return "", false
		}
		a := v.GetAttr(k)
		if a.IsNull() || a.Type() != cty.String {
			return "", false
		}
		return a.AsString(), true
	}
	m := member{name: name}
	if _, ok := attr("uri"); ok {
		m.remote = true
		return m, true
	}
	if v.GetAttr(psig.Key).AsString() == psig.AssetSig {
		if t, ok := attr("text"); ok {
			m.blob = &t
		} else if p, ok := attr("path"); ok {
			rel, ok := src.resolve(p)
			text, found := src.file(rel)
			if !ok || !found {
				return member{}, false
			}
			m.blob = &text
		}
		return m, true
	}
	if p, ok := attr("path"); ok {
		rel, ok := src.resolve(p)
		if !ok {
			return member{}, false
		}
		m.archive = rel
		return m, true
	}
	if v.Type().HasAttribute("assets") {
		as := v.GetAttr("assets")
		for it := as.ElementIterator(); it.Next(); {
			k, e := it.Element()
			sub, ok := memberOf(src, k.AsString(), e)
			if !ok {
				return member{}, false
			}
			m.assets = append(m.assets, sub)
		}
		slices.SortFunc(m.assets, func(a, b member) int { return strings.Compare(a.name, b.name) })
		return m, true
	}
	return member{}, false
}

// blob is one file of a flattened archive.
type blob struct {
	name string
	data []byte
}

// writeTar writes the tar Pulumi hashes for an archive of members (archive.archiveTar): each
// file once, in order, with mode 0600 and its size, nested archives flattened under their name.
func writeTar(w io.Writer, src *sources, members []member) error {
	tw := tar.NewWriter(w)
	seen := map[string]bool{}
	budget := int64(maxExpanded)
	emit := func(b blob) error {
		if seen[b.name] {
			return nil
		}
		seen[b.name] = true
		if err := tw.WriteHeader(&tar.Header{Name: b.name, Mode: 0o600, Size: int64(len(b.data))}); err != nil {
			return err
		}
		_, err := tw.Write(b.data)
		return err
	}
	for _, m := range members {
		blobs, err := flatten(src, m, &budget)
		if err != nil {
			return err
		}
		for _, b := range blobs {
			if err := emit(b); err != nil {
				return err
			}
		}
	}
	return tw.Close()
}

// flatten lists the files of a member in Pulumi's order, each named below m.name.
func flatten(src *sources, m member, budget *int64) ([]blob, error) {
	under := func(bs []blob) []blob {
		for i := range bs {
			bs[i].name = path.Join(m.name, bs[i].name)
		}
		return bs
	}
	switch {
	case m.remote:
		return nil, errors.New("a remote asset or archive inside an archive cannot be hashed: cairn does not fetch it")
	case m.blob != nil:
		return []blob{{name: m.name, data: []byte(*m.blob)}}, nil
	case m.assets != nil:
		var out []blob
		for _, sub := range m.assets {
			bs, err := flatten(src, sub, budget)
			if err != nil {
				return nil, err
			}
			out = append(out, under(bs)...)
		}
		return out, nil
	}
	if text, ok := src.file(m.archive); ok {
		format := archiveFormat(m.archive)
		if format == "" {
			return nil, fmt.Errorf("%s is neither an archive (.tar, .tgz, .tar.gz, .zip, .jar) nor a directory", m.archive)
		}
		bs, err := readArchive(format, []byte(text), budget)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", m.archive, err)
		}
		return under(bs), nil
	}
	files := src.under(m.archive)
	if len(files) == 0 {
		return nil, fmt.Errorf("no file or directory %s in the project", m.archive)
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	slices.SortFunc(names, walkOrder)
	out := make([]blob, len(names))
	for i, n := range names {
		out[i] = blob{name: n, data: []byte(files[n])}
	}
	return under(out), nil
}

// walkOrder orders slash paths as filepath.Walk visits them: by name within each directory,
// a directory's files where its name falls ("a/b" before "a.txt").
func walkOrder(a, b string) int {
	return slices.Compare(strings.Split(a, "/"), strings.Split(b, "/"))
}

// archiveFormat is the archive format Pulumi infers from a file name, "" for none.
func archiveFormat(name string) string {
	for _, ext := range []string{".tar.gz", ".tgz", ".tar", ".zip", ".jar"} {
		if strings.HasSuffix(name, ext) {
			return ext
		}
	}
	return ""
}

// readArchive lists the regular files of an archive, directories skipped, names cleaned.
func readArchive(format string, data []byte, budget *int64) ([]blob, error) {
	take := func(r io.Reader) ([]byte, error) {
		b, err := io.ReadAll(io.LimitReader(r, *budget+1))
		if err != nil {
			return nil, err
		}
		if *budget -= int64(len(b)); *budget < 0 {
			return nil, fmt.Errorf("expands to more than %d MiB", maxExpanded>>20)
		}
		return b, nil
	}
	var out []blob
	switch format {
	case ".zip", ".jar":
		zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			return nil, err
		}
		for _, f := range zr.File {
			if f.FileInfo().IsDir() {
				continue
			}
			rc, err := f.Open()
			if err != nil {
				return nil, err
			}
			b, err := take(rc)
			rc.Close()
			if err != nil {
				return nil, err
			}
			out = append(out, blob{name: path.Clean(f.Name), data: b})
		}
		return out, nil
	}
	var r io.Reader = bytes.NewReader(data)
	if format != ".tar" {
		gz, err := gzip.NewReader(r)
		if err != nil {
			return nil, err
		}
		r = gz
	}
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		switch h.Typeflag {
		case tar.TypeDir:
			continue
		case tar.TypeReg:
			b, err := take(tr)
			if err != nil {
				return nil, err
			}
			out = append(out, blob{name: path.Clean(h.Name), data: b})
		default:
			return nil, fmt.Errorf("%s: only files and directories are supported in an archive", h.Name)
		}
	}
}
