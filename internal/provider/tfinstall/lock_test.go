package tfinstall

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cairn-dev/cairn/internal/addr"
	"github.com/cairn-dev/cairn/internal/diag"
)

// header is the comment terraform puts at the top of every lock file.
const header = "# This file is maintained automatically by \"terraform init\".\n# Manual edits may be lost in future updates.\n\n"

func TestLockRoundTrip(t *testing.T) {
	cases := map[string]struct {
		reason string
		src    string // a lock file as terraform writes it
		want   *Lock
	}{
		"Empty": {
			reason: "A lock with no providers is just the header.",
			src:    header,
			want:   emptyLock(),
		},
		"OneProvider": {
			reason: "version and constraints are aligned, hashes are one per line with a trailing comma.",
			src: header + `provider "registry.terraform.io/hashicorp/time" {
  version     = "0.14.2"
  constraints = "~> 0.14"
  hashes = [
    "h1:34PLoe8c/AMVKslD2oV06mO7RbT8Lf1d2DoYi1Ak4BY=",
  ]
}
`,
			want: &Lock{Providers: map[addr.Provider]LockedProvider{timeSrc: {Version: "0.14.2", Constraints: "~> 0.14",
				Hashes: []string{"h1:34PLoe8c/AMVKslD2oV06mO7RbT8Lf1d2DoYi1Ak4BY="}}}},
		},
		"SortedProvidersAndHashes": {
			reason: "Providers are sorted by address and separated by a blank line; without constraints the attribute is omitted; hashes keep their order.",
			src: header + `provider "example.com/acme/widget" {
  version = "1.0.0"
  hashes = [
    "h1:s8mu/sTla7Uc+lHnyz+AW09wYfPOUQJLN0mdKMwiOSM=",
    "zh:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
  ]
}

provider "registry.terraform.io/hashicorp/time" {
  version     = "0.14.2"
  constraints = ">= 0.14.0, != 0.14.1"
  hashes = [
    "h1:34PLoe8c/AMVKslD2oV06mO7RbT8Lf1d2DoYi1Ak4BY=",
  ]
}
`,
			want: &Lock{Providers: map[addr.Provider]LockedProvider{
				acmeSrc: {Version: "1.0.0", Hashes: []string{"h1:s8mu/sTla7Uc+lHnyz+AW09wYfPOUQJLN0mdKMwiOSM=",
					"zh:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"}},
				timeSrc: {Version: "0.14.2", Constraints: ">= 0.14.0, != 0.14.1", Hashes: []string{"h1:34PLoe8c/AMVKslD2oV06mO7RbT8Lf1d2DoYi1Ak4BY="}},
			}},
		},
		"NoHashes": {
			reason: "A provider without hashes has no hashes attribute.",
			src: header + `provider "registry.terraform.io/hashicorp/time" {
  version = "0.14.2"
}
`,
			want: &Lock{Providers: map[addr.Provider]LockedProvider{timeSrc: {Version: "0.14.2"}}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, ds := ParseLock(".terraform.lock.hcl", []byte(tc.src))
			if len(ds) > 0 {
				t.Fatalf("%s\nParseLock: %v", tc.reason, ds)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nParseLock: -want +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(tc.src, string(got.Bytes())); diff != "" {
				t.Errorf("%s\nParseLock(...).Bytes(): -want +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestLockBytesFromStruct(t *testing.T) {
	// Bytes sorts providers by their full address, whatever order the map yields; the default
	// registry host sorts after example.com.
	l := &Lock{Providers: map[addr.Provider]LockedProvider{
		timeSrc: {Version: "0.14.2", Hashes: []string{"h1:b=", "h1:a="}},
		acmeSrc: {Version: "1.0.0", Constraints: "1.0.0"},
		{Host: "registry.terraform.io", Namespace: "hashicorp", Type: "random"}: {Version: "3.6.0"},
	}}
	want := header + `provider "example.com/acme/widget" {
  version     = "1.0.0"
  constraints = "1.0.0"
}

provider "registry.terraform.io/hashicorp/random" {
  version = "3.6.0"
}

provider "registry.terraform.io/hashicorp/time" {
  version = "0.14.2"
  hashes = [
    "h1:b=",
    "h1:a=",
  ]
}
`
	for range 5 { // map order varies between runs
		if diff := cmp.Diff(want, string(l.Bytes())); diff != "" {
			t.Fatalf("Bytes(): -want +got:\n%s", diff)
		}
	}
}

func TestParseLockErrors(t *testing.T) {
	cases := map[string]struct {
		reason, src string
		want        diag.Diagnostic // Detail is matched as a substring
	}{
		"Syntax": {
			reason: "An HCL syntax error points at its line and column.",
			src:    "provider \"registry.terraform.io/hashicorp/time\" {\n  version = \n}\n",
			want:   diag.Diagnostic{Summary: "Invalid expression", Range: diag.Range{Filename: "x.lock.hcl", Line: 2, Column: 13}},
		},
		"MissingVersion": {
			reason: "version is required.",
			src:    "provider \"registry.terraform.io/hashicorp/time\" {\n  hashes = []\n}\n",
			want:   diag.Diagnostic{Summary: "Missing required argument", Range: diag.Range{Filename: "x.lock.hcl", Line: 1, Column: 49}},
		},
		"UnknownArgument": {
			reason: "Arguments terraform does not write are rejected.",
			src:    "provider \"registry.terraform.io/hashicorp/time\" {\n  version = \"1.0.0\"\n  url = \"x\"\n}\n",
			want:   diag.Diagnostic{Summary: "Unsupported argument", Range: diag.Range{Filename: "x.lock.hcl", Line: 3, Column: 3}},
		},
		"BadAddress": {
			reason: "An invalid provider address names the file.",
			src:    "provider \"a/b/c/d\" {\n  version = \"1.0.0\"\n}\n",
			want:   diag.Diagnostic{Summary: `invalid provider address in lock file: invalid provider source "a/b/c/d": expected [hostname/]namespace/type`, Range: diag.Range{Filename: "x.lock.hcl"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, ds := ParseLock("x.lock.hcl", []byte(tc.src))
			if !ds.HasErrors() || len(ds) != 1 {
				t.Fatalf("%s\nParseLock: got %v, want one error", tc.reason, ds)
			}
			got := ds[0]
			got.Detail = ""
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nParseLock diagnostic: -want +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestParseLockMixedValidity(t *testing.T) {
	// One bad provider address does not hide the good entries.
	src := "provider \"bad address!\" {\n  version = \"1.0.0\"\n}\n\nprovider \"hashicorp/time\" {\n  version = \"0.14.2\"\n}\n"
	l, ds := ParseLock("x", []byte(src))
	if len(ds) != 1 || !strings.Contains(ds[0].Summary, "bad address!") {
		t.Errorf("ParseLock diagnostics = %v, want one about the bad address", ds)
	}
	if got := l.Providers[timeSrc]; got.Version != "0.14.2" {
		t.Errorf("ParseLock: the valid entry (short form hashicorp/time) = %+v, want version 0.14.2 under %s", got, timeSrc)
	}
}

func TestVersionConstraintsString(t *testing.T) {
	// terraform's normal form for the constraints a lock file records (TestTerraformParityConstraints
	// checks the same against the terraform CLI).
	cases := map[string]string{
		"":                             "",
		"  ":                           "",
		"~> 0.14":                      "~> 0.14",
		"~> 1":                         "~> 1.0",
		"~> 0.14.0":                    "~> 0.14.0",
		"= 0.14.2":                     "0.14.2",
		"=0.14.2":                      "0.14.2",
		">=0.14,<1":                    ">= 0.14.0, < 1.0.0",
		">= 0.14.2, ~> 0.14":           "~> 0.14, >= 0.14.2",
		">= 2.0, >= 2.0.0, >= 2":       ">= 2.0.0",
		"< 2, 1.5, != 1.5, > 1.5":      "> 1.5.0, 1.5.0, != 1.5.0, < 2.0.0",
		"<= 1.5, ~> 1.5.0, >= 1.5":     ">= 1.5.0, ~> 1.5.0, <= 1.5.0",
		">= 1.0.0-beta, >= 1.0.0":      ">= 1.0.0-beta, >= 1.0.0",
		">= 1.0.0-rc.10, < 1.0.0-rc.2": "< 1.0.0-rc.2, >= 1.0.0-rc.10",
		"~> 1.2-beta":                  "~> 1.2-beta",
		"1.0.0+build":                  "1.0.0+build",
		"01.002.0003":                  "1.2.3",
		"not a constraint":             "not a constraint",
		">= 1.0.0.0":                   ">= 1.0.0.0",
	}
	for in, want := range cases {
		if got := VersionConstraintsString(in); got != want {
			t.Errorf("VersionConstraintsString(%q) = %q, want %q", in, got, want)
		}
	}
}
