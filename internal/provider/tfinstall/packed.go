package tfinstall

import (
	"archive/zip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/hashicorp/go-version"
)

// packed parses the name of a mirror's packed-layout archive,
// terraform-provider-TYPE_VERSION_OS_ARCH.zip, for the given type and platform.
func packed(name, typ, platform string) (*version.Version, bool) {
	prefix, suffix := "terraform-provider-"+typ+"_", "_"+platform+".zip"
	if !strings.HasPrefix(name, prefix) || !strings.HasSuffix(name, suffix) || len(name) <= len(prefix)+len(suffix) {
		return nil, false
	}
	v, err := version.NewVersion(name[len(prefix) : len(name)-len(suffix)])
	return v, err == nil
}

// CacheDir is the provider cache: CAIRN_PROVIDER_CACHE, else cairn/providers in the user's
// cache directory. Besides unpacked packages it holds their hashes and schemas.
func CacheDir() (string, error) { return cacheRoot() }

// cacheRoot is where packed providers are unpacked, as terraform unpacks them under
// .terraform/providers: <cache>/cairn/providers/HOST/NAMESPACE/TYPE/VERSION/OS_ARCH.
func cacheRoot() (string, error) {
	if d := os.Getenv("CAIRN_PROVIDER_CACHE"); d != "" {
		return d, nil
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no cache directory to unpack providers into (set CAIRN_PROVIDER_CACHE): %w", err)
	}
	return filepath.Join(d, "cairn", "providers"), nil
}

// unpack extracts p.Archive, once, and points p at the result. The archive is extracted
// into a temporary directory renamed into place, so a concurrent or interrupted unpack never
// leaves a half-written provider where another cairn would run it.
func unpack(p *Package) error {
	root, err := cacheRoot()
	if err != nil {
		return err
	}
	dir := filepath.Join(root, p.Source.Host, p.Source.Namespace, p.Source.Type, p.Version, runtime.GOOS+"_"+runtime.GOARCH)
	if exe := executable(dir, p.Source.Type); exe != "" {
		p.Dir, p.Executable = dir, exe
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return fmt.Errorf("cannot unpack %s: %w", p.Archive, err)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), ".unpack-")
	if err != nil {
		return fmt.Errorf("cannot unpack %s: %w", p.Archive, err)
	}
	defer os.RemoveAll(tmp)
	if err := extract(p.Archive, tmp); err != nil {
		return fmt.Errorf("cannot unpack %s: %w", p.Archive, err)
	}
	if err := os.Rename(tmp, dir); err != nil && executable(dir, p.Source.Type) == "" {
		return fmt.Errorf("cannot unpack %s: %w", p.Archive, err)
	}
	p.Dir, p.Executable = dir, executable(dir, p.Source.Type)
	if p.Executable == "" {
		return fmt.Errorf("%s holds no terraform-provider-%s executable", p.Archive, p.Source.Type)
	}
	return nil
}

// extract writes every regular file of the zip at path under dir, refusing names that
// would land outside it.
func extract(path, dir string) error {
	zr, err := zip.OpenReader(path)
	if err != nil {
		return err
	}
	defer zr.Close()
	for _, f := range zr.File {
		name := filepath.FromSlash(f.Name)
		if !filepath.IsLocal(name) {
			return fmt.Errorf("archive entry %q is outside the package", f.Name)
		}
		target := filepath.Join(dir, name)
		if f.FileInfo().IsDir() {
			if err := os.MkdirAll(target, 0o755); err != nil {
				return err
			}
			continue
		}
		if !f.Mode().IsRegular() {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		if err := write(f, target); err != nil {
			return err
		}
	}
	return nil
}

func write(f *zip.File, target string) error {
	rc, err := f.Open()
	if err != nil {
		return err
	}
	defer rc.Close()
	// Providers are zipped without reliable permission bits: terraform makes them
	// executable, and so does cairn.
	out, err := os.OpenFile(target, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, rc); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
