package pulumifind

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// install lays out an empty executable as Pulumi's plugin cache does.
func install(t *testing.T, dir, pkg, version string) string {
	t.Helper()
	d := filepath.Join(dir, "resource-"+pkg+"-v"+version)
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(d, "pulumi-resource-"+pkg)
	if err := os.WriteFile(exe, nil, 0o755); err != nil {
		t.Fatal(err)
	}
	return exe
}

func homeWith(t *testing.T, pkg string, versions ...string) (home, plugins string) {
	t.Helper()
	home = t.TempDir()
	plugins = filepath.Join(home, "plugins")
	for _, v := range versions {
		install(t, plugins, pkg, v)
	}
	return home, plugins
}

func TestNewestStableWins(t *testing.T) {
	home, plugins := homeWith(t, "simple", "1.0.0", "2.0.0", "10.0.0-alpha.1", "2.0.0-beta")
	install(t, plugins, "simple-extra", "99.0.0") // another package whose name starts the same
	p, err := Finder{PulumiHome: home}.Find("simple", "")
	if err != nil {
		t.Fatal(err)
	}
	if p.Version != "2.0.0" || p.Executable != filepath.Join(plugins, "resource-simple-v2.0.0", "pulumi-resource-simple") {
		t.Fatalf("got %+v, want 2.0.0 (stable before pre-release)", p)
	}
}

func TestNewestPreReleaseWhenNoStable(t *testing.T) {
	home, _ := homeWith(t, "simple", "1.0.0-alpha.2", "1.0.0-alpha.10", "1.0.0-alpha.9")
	p, err := Finder{PulumiHome: home}.Find("simple", "")
	if err != nil {
		t.Fatal(err)
	}
	if p.Version != "1.0.0-alpha.10" {
		t.Fatalf("got %s, want 1.0.0-alpha.10 (numeric pre-release order)", p.Version)
	}
}

func TestExactPin(t *testing.T) {
	home, _ := homeWith(t, "simple", "1.0.0", "2.0.0", "2.1.0-rc.1")
	for _, tc := range []struct{ pin, want string }{{"1.0.0", "1.0.0"}, {"v1.0.0", "1.0.0"}, {"2.1.0-rc.1", "2.1.0-rc.1"}} {
		p, err := Finder{PulumiHome: home}.Find("simple", tc.pin)
		if err != nil {
			t.Fatal(err)
		}
		if p.Version != tc.want {
			t.Errorf("pin %s: got %s, want %s", tc.pin, p.Version, tc.want)
		}
	}
}

func TestPartialInstallIgnored(t *testing.T) {
	home, plugins := homeWith(t, "simple", "1.0.0", "2.0.0")
	if err := os.WriteFile(filepath.Join(plugins, "resource-simple-v2.0.0.partial"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	// a temporary extraction directory of older Pulumi versions
	install(t, plugins, "simple", "3.0.0.tmp123456")
	p, err := Finder{PulumiHome: home}.Find("simple", "")
	if err != nil {
		t.Fatal(err)
	}
	if p.Version != "1.0.0" {
		t.Fatalf("got %s, want 1.0.0: 2.0.0 has a .partial sibling", p.Version)
	}
	_, err = Finder{PulumiHome: home}.Find("simple", "2.0.0")
	var nf *NotFoundError
	if !errors.As(err, &nf) {
		t.Fatalf("pinned to a partial install: got %v, want NotFoundError", err)
	}
}

func TestNotFoundNamesPlacesAndVersions(t *testing.T) {
	home, plugins := homeWith(t, "simple", "2.0.0", "1.0.0")
	if err := os.MkdirAll(filepath.Join(plugins, "resource-simple-v1.5.0"), 0o755); err != nil {
		t.Fatal(err) // a directory without its binary is not an install
	}
	_, err := Finder{PulumiHome: home}.Find("simple", "3.0.0")
	want := "no pulumi-resource-simple 3.0.0 in " + plugins + " (found 2.0.0, 1.0.0)"
	if err == nil || err.Error() != want {
		t.Fatalf("got %v\nwant %s", err, want)
	}

	extra := t.TempDir()
	_, err = Finder{PluginDirs: []string{extra}, PulumiHome: home}.Find("other", "")
	if err == nil || !strings.Contains(err.Error(), "no pulumi-resource-other in "+extra+", "+plugins+" (cairn never downloads") {
		t.Fatalf("got %v", err)
	}
}

func TestPluginDirBeforePulumiHome(t *testing.T) {
	home, _ := homeWith(t, "simple", "9.0.0")
	dir := t.TempDir()
	exe := install(t, dir, "simple", "1.0.0")
	p, err := Finder{PluginDirs: []string{filepath.Join(dir, "missing"), dir}, PulumiHome: home}.Find("simple", "")
	if err != nil {
		t.Fatal(err)
	}
	if p.Executable != exe {
		t.Fatalf("got %s, want the --plugin-dir's %s", p.Executable, exe)
	}
	// a pin the plugin dir cannot serve falls through to the Pulumi home
	p, err = Finder{PluginDirs: []string{dir}, PulumiHome: home}.Find("simple", "9.0.0")
	if err != nil || p.Version != "9.0.0" {
		t.Fatalf("got %+v, %v", p, err)
	}
}

func TestPulumiHomeFromEnvironment(t *testing.T) {
	home, plugins := homeWith(t, "simple", "1.2.3")
	t.Setenv("PULUMI_HOME", home)
	p, err := Finder{}.Find("simple", "")
	if err != nil || p.Executable != filepath.Join(plugins, "resource-simple-v1.2.3", "pulumi-resource-simple") {
		t.Fatalf("got %+v, %v", p, err)
	}
	t.Setenv("PULUMI_HOME", "")
	t.Setenv("HOME", home) // ~/.pulumi/plugins
	install(t, filepath.Join(home, ".pulumi", "plugins"), "simple", "4.5.6")
	p, err = Finder{}.Find("simple", "")
	if err != nil || p.Version != "4.5.6" {
		t.Fatalf("got %+v, %v", p, err)
	}
}

func TestProjectPlugins(t *testing.T) {
	home, _ := homeWith(t, "simple", "9.0.0")
	local := t.TempDir()
	f := Finder{PulumiHome: home, Project: []ProjectPlugin{
		{Name: "simple", Path: filepath.Join(local, "v1"), Version: "1.0.0"},
		{Name: "other", Path: filepath.Join(local, "any")},
	}}
	p, err := f.Find("simple", "")
	if err != nil || p.Executable != filepath.Join(local, "v1", "pulumi-resource-simple") || p.Version != "1.0.0" {
		t.Fatalf("unpinned: got %+v, %v; want the project's plugin first", p, err)
	}
	p, err = f.Find("simple", "9.0.0")
	if err != nil || p.Version != "9.0.0" {
		t.Fatalf("pinned elsewhere: got %+v, %v; a project plugin of another version is skipped", p, err)
	}
	p, err = f.Find("other", "3.0.0")
	if err != nil || p.Executable != filepath.Join(local, "any", "pulumi-resource-other") || p.Version != "" {
		t.Fatalf("versionless: got %+v, %v; serves any version", p, err)
	}
	_, err = f.Find("simple", "2.0.0")
	if err == nil || !strings.Contains(err.Error(), "in the project's plugins, "+filepath.Join(home, "plugins")+" (found 9.0.0, 1.0.0)") {
		t.Fatalf("got %v", err)
	}

	dup := Finder{PulumiHome: home, Project: []ProjectPlugin{
		{Name: "simple", Path: "a", Version: "1.0.0"}, {Name: "simple", Path: "b", Version: "v1.0.0"},
	}}
	if _, err := dup.Find("simple", ""); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Fatalf("duplicate project plugins: got %v", err)
	}
}

func TestInvalidPin(t *testing.T) {
	if _, err := (Finder{PulumiHome: t.TempDir()}).Find("simple", "not-a-version"); err == nil || !strings.Contains(err.Error(), `invalid version "not-a-version"`) {
		t.Fatalf("got %v", err)
	}
}
