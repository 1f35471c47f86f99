package tfmodule

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The normal forms are those terraform records in modules.json for the same sources.
func TestParseSource(t *testing.T) {
	cases := map[string]struct {
		raw     string
		version bool
		kind    Kind
		want    string
		subdir  string
	}{
		"Local":              {raw: "./modules/net/", kind: Local, want: "./modules/net"},
		"Parent":             {raw: "../../", kind: Local, want: "../.."},
		"ParentOfSub":        {raw: "./../x", kind: Local, want: "../x"},
		"Registry":           {raw: "cloudposse/label/null", version: true, kind: Registry, want: "registry.terraform.io/cloudposse/label/null"},
		"RegistryHost":       {raw: "registry.cairn.test/acme/label/null//modules/sub", kind: Registry, want: "registry.cairn.test/acme/label/null//modules/sub", subdir: "modules/sub"},
		"GitHubShorthand":    {raw: "github.com/org/repo//sub?ref=v1", kind: Remote, want: "git::https://github.com/org/repo.git//sub?ref=v1", subdir: "sub"},
		"GitForced":          {raw: "git::https://example.com/repo.git?ref=v1.2.0", kind: Remote, want: "git::https://example.com/repo.git?ref=v1.2.0"},
		"GitFile":            {raw: "git::file:///srv/repo.git//a/b/?ref=v1", kind: Remote, want: "git::file:///srv/repo.git//a/b?ref=v1", subdir: "a/b"},
		"GitSSH":             {raw: "git@github.com:org/repo.git", kind: Remote, want: "git::ssh://git@github.com/org/repo.git"},
		"Archive":            {raw: "https://example.com/m.tar.gz", kind: Remote, want: "https://example.com/m.tar.gz"},
		"AbsolutePath":       {raw: "/srv/modules/x", kind: Remote, want: "file:///srv/modules/x"},
		"RegistryWithSubdir": {raw: "hashicorp/consul/aws//modules/consul-cluster", version: true, kind: Registry, want: "registry.terraform.io/hashicorp/consul/aws//modules/consul-cluster", subdir: "modules/consul-cluster"},
		// S3 and GCS packages are named as terraform names them, though cairn does not fetch them.
		"S3Forced":           {raw: "s3::https://s3.amazonaws.com/bucket/m.zip", kind: Remote, want: "s3::https://s3.amazonaws.com/bucket/m.zip"},
		"S3VirtualHost":      {raw: "bucket.s3.eu-west-1.amazonaws.com/dir/m.zip//sub", kind: Remote, want: "s3::https://s3.eu-west-1.amazonaws.com/bucket/dir/m.zip//sub", subdir: "sub"},
		"S3PathStyle":        {raw: "s3-eu-west-1.amazonaws.com/bucket/m.zip", kind: Remote, want: "s3::https://s3-eu-west-1.amazonaws.com/bucket/m.zip"},
		"S3LegacyHost":       {raw: "bucket.s3.amazonaws.com/m.zip", kind: Remote, want: "s3::https://s3.amazonaws.com/bucket/m.zip"},
		"GCSForced":          {raw: "gcs::https://www.googleapis.com/storage/v1/bucket/m.zip", kind: Remote, want: "gcs::https://www.googleapis.com/storage/v1/bucket/m.zip"},
		"GCSBare":            {raw: "www.googleapis.com/storage/v1/bucket/dir/m.zip", kind: Remote, want: "gcs::https://www.googleapis.com/storage/v1/bucket/dir/m.zip"},
		"GitForcedShorthand": {raw: "git::github.com/org/repo", kind: Remote, want: "git::https://github.com/org/repo.git"},
		"GitHubSubdir":       {raw: "github.com/org/repo/modules/x", kind: Remote, want: "git::https://github.com/org/repo.git//modules/x", subdir: "modules/x"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s, err := ParseSource(tc.raw, tc.version)
			if err != nil {
				t.Fatal(err)
			}
			if s.Kind != tc.kind || s.String() != tc.want || s.Subdir != tc.subdir {
				t.Errorf("ParseSource(%q) = kind %d %q subdir %q, want kind %d %q subdir %q", tc.raw, s.Kind, s.String(), s.Subdir, tc.kind, tc.want, tc.subdir)
			}
		})
	}
}

func TestParseSourceErrors(t *testing.T) {
	if _, err := ParseSource("modules/net", false); !errors.Is(err, ErrMaybeRelative) {
		t.Errorf("a relative path without ./ = %v, want ErrMaybeRelative", err)
	}
	if _, err := ParseSource("git::https://example.com/r.git", true); err == nil {
		t.Errorf("a git source with a version argument parsed, want a registry address error")
	}
	if _, err := ParseSource("git::https://example.com/r.git//../x", false); err == nil {
		t.Errorf("a subdirectory leaving the package parsed")
	}
}

func TestCloudStorage(t *testing.T) {
	cases := map[string]string{
		"s3::https://s3.amazonaws.com/b/m.zip":               "S3",
		"bucket.s3.amazonaws.com/m.zip":                      "S3",
		"gcs::https://www.googleapis.com/storage/v1/b/m.zip": "GCS",
		"www.googleapis.com/storage/v1/b/m.zip":              "GCS",
		"https://bucket.s3.amazonaws.com/m.zip":              "", // plain https: fetched as an archive
		"https://storage.googleapis.com/bucket/m.zip":        "",
		"git::https://example.com/r.git":                     "",
		"github.com/org/repo":                                "",
		"cloudposse/label/null":                              "",
	}
	for raw, want := range cases {
		s, err := ParseSource(raw, false)
		if err != nil {
			t.Fatalf("ParseSource(%q): %v", raw, err)
		}
		if got := s.CloudStorage(); got != want {
			t.Errorf("CloudStorage of %q (%q) = %q, want %q", raw, s, got, want)
		}
	}
	if _, err := ParseSource("a.b.c.d.e.amazonaws.com/m.zip", false); err == nil {
		t.Errorf("an S3 host of six labels parsed")
	}
}

func TestManifestRoundTrip(t *testing.T) {
	src := []byte(`{"Modules":[{"Key":"","Source":"","Dir":"."},{"Key":"label","Source":"registry.terraform.io/cloudposse/label/null","Version":"0.25.0","Dir":".terraform/modules/label"},{"Key":"label.sub","Source":"./modules/sub","Dir":".terraform/modules/label/modules/sub"}]}`)
	m, err := ParseManifest(src)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(src), string(m.Bytes())); diff != "" {
		t.Errorf("Bytes: -read +written:\n%s", diff)
	}
	if why := m["label"].Check(Source{Kind: Registry, Package: mustRegistry(t, "cloudposse/label/null").Package}, nil); why != "" {
		t.Errorf("Check of the same source = %q", why)
	}
	if _, err := ParseManifest([]byte(`{"Modules":[{"Key":"a","Dir":"x"},{"Key":"a","Dir":"y"}]}`)); err == nil {
		t.Errorf("two records for one key were accepted")
	}
	if m, err := ParseManifest(nil); err != nil || len(m) != 0 {
		t.Errorf("empty manifest = %v, %v", m, err)
	}
}

func mustRegistry(t *testing.T, raw string) Source {
	t.Helper()
	s, err := ParseSource(raw, true)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestBitBucketWithoutNetwork: a BitBucket shorthand becomes a git source as terraform names
// it, without the API request go-getter's detector makes (the server parses sources too).
func TestBitBucketWithoutNetwork(t *testing.T) {
	for raw, want := range map[string]string{
		"bitbucket.org/hashicorp/tf-test-git":            "git::https://bitbucket.org/hashicorp/tf-test-git.git",
		"bitbucket.org/hashicorp/tf-test-git.git?ref=v1": "git::https://bitbucket.org/hashicorp/tf-test-git.git?ref=v1",
	} {
		got, err := detect(raw)
		if err != nil || got != want {
			t.Errorf("detect(%q) = %q, %v; want %q", raw, got, err, want)
		}
	}
}
