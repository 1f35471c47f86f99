package pulumiyaml

import (
	"context"
	"path"
	"strings"
	"sync"
)

// sources are the project's files as the request carries them (by slash path relative to
// the project directory) and where the project is on the client's machine. fn::readFile,
// the file assets and archives and pulumi.cwd/rootDirectory read them: never the server's
// own file system, which may hold what a program must not read (its database, its keys).
type sources struct {
	files map[string]string
	root  string // the project directory, absolute, slash-separated; "" when the request has none
	dir   string // the program's directory relative to root ("" for root itself; `main:` sets it)

	mu     sync.Mutex
	hashes map[string]string // archive hashes by kind and path: computed once per parse
}

type rootDirKey struct{}

// WithRootDirectory returns ctx carrying the absolute directory the project was read from on
// the client (api.DeployRequest.WorkDir): Parse gives it to pulumi.rootDirectory and
// pulumi.cwd. Without it those two are errors, as a request may carry files only.
func WithRootDirectory(ctx context.Context, dir string) context.Context {
	return context.WithValue(ctx, rootDirKey{}, dir)
}

func newSources(ctx context.Context, files map[string]string) *sources {
	root, _ := ctx.Value(rootDirKey{}).(string)
	return &sources{files: files, root: strings.TrimSuffix(root, "/"), hashes: map[string]string{}}
}

// cwd is the program's working directory as Pulumi gives it: the project directory, or the
// `main:` directory below it.
func (s *sources) cwd() (string, bool) {
	if s.root == "" {
		return "", false
	}
	if s.dir == "" {
		return s.root, true
	}
	return path.Join(s.root, s.dir), true
}

// resolve turns a path as the program writes it (relative to its working directory, or
// absolute inside the project) into the slash path of a project file or directory. ok is
// false for a path outside the project: its files were not sent.
func (s *sources) resolve(p string) (string, bool) {
	p = strings.ReplaceAll(p, `\`, "/")
	if path.IsAbs(p) {
		if s.root == "" {
			return "", false
		}
		rel, ok := strings.CutPrefix(path.Clean(p), s.root+"/")
		if !ok {
			return "", false
		}
		return rel, true
	}
	rel := path.Join(s.dir, p)
	if rel == ".." || strings.HasPrefix(rel, "../") {
		return "", false
	}
	return rel, true
}

// file returns the text of the project file at rel.
func (s *sources) file(rel string) (string, bool) {
	text, ok := s.files[rel]
	return text, ok
}

// under returns the project files below the directory rel, keyed by their path relative to
// it, skipping Pulumi's bookkeeping directory `.pulumi` as Pulumi's archives do.
func (s *sources) under(rel string) map[string]string {
	prefix := rel + "/"
	if rel == "." || rel == "" {
		prefix = ""
	}
	out := map[string]string{}
	for name, text := range s.files {
		sub, ok := strings.CutPrefix(name, prefix)
		if !ok || sub == "" {
			continue
		}
		if sub == ".pulumi" || strings.HasPrefix(sub, ".pulumi/") || strings.Contains(sub, "/.pulumi/") || strings.HasSuffix(sub, "/.pulumi") {
			continue
		}
		out[sub] = text
	}
	return out
}

func (s *sources) cached(key string, compute func() (string, error)) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if h, ok := s.hashes[key]; ok {
		return h, nil
	}
	h, err := compute()
	if err != nil {
		return "", err
	}
	s.hashes[key] = h
	return h, nil
}
