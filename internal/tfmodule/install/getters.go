package install

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"

	getter "github.com/hashicorp/go-getter/v2"

	"github.com/cairn-dev/cairn/internal/tfmodule"
)

// newClient is the go-getter client that fetches module packages: terraform's getters
// (git, hg, http and https with X-Terraform-Get, file) and its archive formats. S3 and GCS
// are left out, as their SDKs would double the size of cairn; a package there, from
// X-Terraform-Get too, is refused with cloudRefusal's error. A directory on this computer
// named by an X-Terraform-Get answer is refused (see fromDownload).
func newClient() *getter.Client {
	return &getter.Client{
		Getters: []getter.Getter{new(gitGetter), new(getter.HgGetter), &httpGetter{&getter.HttpGetter{Netrc: true}},
			new(fileGetter), cloudRefusal{}},
		Decompressors: getter.Decompressors,
	}
}

// fromDownload marks the context of a fetch that an http(s) server chose (X-Terraform-Get):
// it may not name a directory on this computer, which would be linked into
// .terraform/modules and so sent to the cairn server with the configuration.
type fromDownload struct{}

// httpGetter is go-getter's, its X-Terraform-Get fetches marked fromDownload.
type httpGetter struct{ *getter.HttpGetter }

func (g *httpGetter) Get(ctx context.Context, req *getter.Request) error {
	return g.HttpGetter.Get(context.WithValue(ctx, fromDownload{}, true), req)
}

// fileGetter is go-getter's, refusing a fetch marked fromDownload.
type fileGetter struct{ getter.FileGetter }

func (g *fileGetter) Get(ctx context.Context, req *getter.Request) error {
	if ctx.Value(fromDownload{}) != nil {
		return localFromDownload(req.Src)
	}
	return g.FileGetter.Get(ctx, req)
}

func (g *fileGetter) GetFile(ctx context.Context, req *getter.Request) error {
	if ctx.Value(fromDownload{}) != nil {
		return localFromDownload(req.Src)
	}
	return g.FileGetter.GetFile(ctx, req)
}

func localFromDownload(src string) error {
	return fmt.Errorf("the server named %q as the package (X-Terraform-Get), a directory on this computer, "+
		"which cairn does not install from a download", src)
}

// onThisComputer reports whether a go-getter address names a directory on this computer:
// a file:// URL or an absolute path, forced ("git::file:///…") or not.
func onThisComputer(addr string) bool {
	u, err := url.Parse(strings.TrimPrefix(addr, forcedGetter(addr)))
	if err != nil {
		return false
	}
	return onThisComputerURL(u)
}

func onThisComputerURL(u *url.URL) bool {
	return strings.EqualFold(u.Scheme, "file") || len(u.Scheme) == 1 || u.Scheme == "" && u.Host == "" && strings.HasPrefix(u.Path, "/")
}

// forcedGetter is "git::" of "git::file:///…", "" without one.
func forcedGetter(s string) string {
	if i := strings.Index(s, "::"); i > 0 && !strings.ContainsAny(s[:i], "/:") {
		return s[:i+2]
	}
	return ""
}

// cloudStorageDetail is why an S3 or GCS package is not installed, and what to do instead,
// without a final period.
func cloudStorageDetail(store string) string {
	return fmt.Sprintf("cairn does not fetch %s module sources. Use an http(s) URL of an archive of the module "+
		"instead (a public or pre-signed object URL ending in .zip or .tar.gz), or a local copy (\"./modules/name\")", store)
}

// cloudRefusal claims S3 and GCS addresses, so that fetching one fails with a clear error
// rather than "no getter available".
type cloudRefusal struct{}

func (cloudRefusal) Detect(req *getter.Request) (bool, error) { return cloudStore(req) != "", nil }

// cloudStore is tfmodule.CloudStorage of the request's address.
func cloudStore(req *getter.Request) string {
	if req.Forced != "" {
		return tfmodule.CloudStorage(req.Forced + "::")
	}
	return tfmodule.CloudStorage(req.Src)
}

func (cloudRefusal) Mode(context.Context, *url.URL) (getter.Mode, error) { return getter.ModeDir, nil }

func (cloudRefusal) Get(_ context.Context, req *getter.Request) error {
	return errors.New(cloudStorageDetail(cloudStore(req)))
}

func (c cloudRefusal) GetFile(ctx context.Context, req *getter.Request) error { return c.Get(ctx, req) }

// gitGetter clones a git repository: "?ref=" checks out a branch, tag or commit, "?depth=N"
// makes a shallow clone of that branch or tag, "?sshkey=" is a base64 private key for ssh.
// It is cairn's rather than go-getter/v2's, which clones shallow without --branch (so a
// tag other than the default branch's tip cannot be checked out) and passes ref and URL
// where git could read them as options.
type gitGetter struct{}

// commitID is what a commit hash looks like, to explain why a shallow clone of one fails.
var commitID = regexp.MustCompile("^[0-9a-fA-F]{7,40}$")

// Detect claims "git::…" and git:// URLs, as terraform's getters do (ssh:// needs "git::").
func (gitGetter) Detect(req *getter.Request) (bool, error) {
	if req.Forced != "" {
		return req.Forced == "git", nil
	}
	u, err := url.Parse(req.Src)
	return err == nil && u.Scheme == "git", nil
}

func (gitGetter) Mode(context.Context, *url.URL) (getter.Mode, error) { return getter.ModeDir, nil }

func (gitGetter) GetFile(context.Context, *getter.Request) error {
	return errors.New("a git repository is a directory, not a file")
}

func (gitGetter) Get(ctx context.Context, req *getter.Request) error {
	if _, err := exec.LookPath("git"); err != nil {
		return errors.New("git must be available and on the PATH")
	}
	u := *req.URL()
	if ctx.Value(fromDownload{}) != nil && onThisComputerURL(&u) {
		return localFromDownload(req.Src)
	}
	if port := u.Port(); port != "" {
		if _, err := strconv.ParseUint(port, 10, 16); err != nil {
			return fmt.Errorf("invalid port number %q; if using the \"scp-like\" git address scheme where a colon introduces the path instead, remove the ssh:// portion and use just the git:: prefix", port)
		}
	}
	q := u.Query()
	ref, sshKey := q.Get("ref"), q.Get("sshkey")
	depth, _ := strconv.Atoi(q.Get("depth")) // as go-getter: a depth that is no number is none
	q.Del("ref")
	q.Del("sshkey")
	q.Del("depth")
	u.RawQuery = q.Encode()

	env, cleanup, err := gitSSHEnv(sshKey)
	if err != nil {
		return err
	}
	defer cleanup()
	args := []string{"clone"}
	if depth > 0 {
		args = append(args, "--depth", strconv.Itoa(depth))
		if ref != "" {
			args = append(args, "--branch", ref)
		}
	}
	if err := runGit(ctx, "", env, append(args, "--", u.String(), req.Dst)...); err != nil {
		if depth > 0 && commitID.MatchString(ref) {
			return fmt.Errorf("%w (note that setting 'depth' requires 'ref' to be a branch or tag name)", err)
		}
		return err
	}
	if ref != "" && depth <= 0 {
		commit, err := resolveRef(ctx, req.Dst, ref)
		if err != nil {
			return err
		}
		if err := runGit(ctx, req.Dst, nil, "checkout", "--quiet", commit); err != nil {
			return err
		}
	}
	sub := []string{"submodule", "update", "--init", "--recursive"}
	if depth > 0 {
		sub = append(sub, "--depth", strconv.Itoa(depth))
	}
	return runGit(ctx, req.Dst, env, sub...)
}

// resolveRef is the commit ref names in the clone at dir: a commit, a remote branch or a tag.
func resolveRef(ctx context.Context, dir, ref string) (string, error) {
	for _, name := range []string{ref, "refs/remotes/origin/" + ref, "refs/tags/" + ref} {
		cmd := exec.CommandContext(ctx, "git", "rev-parse", "--verify", "--quiet", "--end-of-options", name+"^{commit}")
		cmd.Dir = dir
		if out, err := cmd.Output(); err == nil {
			return strings.TrimSpace(string(out)), nil
		}
	}
	return "", fmt.Errorf("invalid ref: %q", ref)
}

// gitSSHEnv is the environment that makes git's ssh use the base64 private key sshKey
// (none: the inherited one), and what removes the key file afterwards.
func gitSSHEnv(sshKey string) ([]string, func(), error) {
	if sshKey == "" {
		return nil, func() {}, nil
	}
	raw, err := base64.StdEncoding.DecodeString(sshKey)
	if err != nil {
		return nil, nil, fmt.Errorf("invalid sshkey: %w", err)
	}
	f, err := os.CreateTemp("", "cairn-git-key")
	if err != nil {
		return nil, nil, err
	}
	cleanup := func() { _ = os.Remove(f.Name()) }
	if err := f.Chmod(0o600); err == nil {
		_, err = f.Write(raw)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		cleanup()
		return nil, nil, err
	}
	ssh := os.Getenv("GIT_SSH_COMMAND")
	if ssh == "" {
		ssh = "ssh"
	}
	key := strings.ReplaceAll(f.Name(), `\`, "/")
	return append(os.Environ(), "GIT_SSH_COMMAND="+ssh+" -i "+key), cleanup, nil
}

// runGit runs git with args in dir (the current directory when ""), env nil meaning the
// inherited environment; a failure carries git's output.
func runGit(ctx context.Context, dir string, env []string, args ...string) error {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir, cmd.Env = dir, env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("git %s: %w: %s", args[0], err, strings.TrimSpace(out.String()))
	}
	return nil
}
