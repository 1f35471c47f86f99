package tfmodule

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	getter "github.com/hashicorp/go-getter/v2"
)

// detectors are the go-getter shorthands terraform expands ("github.com/o/r" becomes
// "git::https://github.com/o/r.git"), in terraform's order. The S3 and GCS ones are cairn's:
// go-getter/v2 keeps them with its S3 and GCS getters, whose SDKs cairn does not link, and
// the addresses they give are needed only to name such a package as terraform does. So is the
// BitBucket one: go-getter's asks BitBucket's API whether a repository is git or Mercurial, a
// network request the server (which parses sources too) must never make; BitBucket has served
// only git since 2020.
var detectors = []getter.Detector{new(getter.GitHubDetector), new(getter.GitDetector), bitbucketDetector{},
	gcsDetector{}, s3Detector{}}

// bitbucketDetector expands "bitbucket.org/o/r" to "git::https://bitbucket.org/o/r.git" without
// asking BitBucket.
type bitbucketDetector struct{}

func (bitbucketDetector) Detect(src, _ string) (string, bool, error) {
	if !strings.HasPrefix(src, "bitbucket.org/") {
		return "", false, nil
	}
	u, err := url.Parse("https://" + src)
	if err != nil {
		return "", true, fmt.Errorf("error parsing BitBucket URL: %w", err)
	}
	if !strings.HasSuffix(u.Path, ".git") {
		u.Path += ".git"
	}
	return "git::" + u.String(), true, nil
}

// errUndetected is a source no detector recognises.
var errUndetected = errors.New("invalid source string")

// detect expands a shorthand package address (without its subdirectory) into a go-getter
// address with a scheme, keeping a forced getter ("git::github.com/o/r"); an address that
// has a scheme already is returned as it is.
func detect(src string) (string, error) {
	forced := forcedPrefix(src)
	rest := strings.TrimPrefix(src, forced)
	if u, err := url.Parse(rest); err == nil && u.Scheme != "" {
		return src, nil
	}
	for _, d := range detectors {
		out, ok, err := d.Detect(rest, "")
		if err != nil {
			return "", err
		}
		if !ok {
			continue
		}
		if forced == "" {
			forced = forcedPrefix(out)
		}
		return forced + strings.TrimPrefix(out, forcedPrefix(out)), nil
	}
	return "", fmt.Errorf("%w: %s", errUndetected, src)
}

// s3Detector names an S3 object written without a scheme ("bucket.s3.amazonaws.com/m.zip",
// "s3-eu-west-1.amazonaws.com/bucket/m.zip") as terraform does: "s3::https://...".
type s3Detector struct{}

func (s3Detector) Detect(src, _ string) (string, bool, error) {
	if !strings.Contains(src, ".amazonaws.com/") {
		return "", false, nil
	}
	host, key, _ := strings.Cut(src, "/")
	labels := strings.Split(host, ".")
	var raw string
	switch {
	case len(labels) == 3: // path style: s3[-region].amazonaws.com/bucket/key
		raw = "https://" + labels[0] + ".amazonaws.com/" + key
	case len(labels) == 4: // bucket.s3[-region].amazonaws.com/key
		raw = "https://" + labels[1] + ".amazonaws.com/" + labels[0] + "/" + key
	case len(labels) == 5 && labels[1] == "s3": // bucket.s3.region.amazonaws.com/key
		raw = "https://s3." + labels[2] + ".amazonaws.com/" + labels[0] + "/" + key
	default:
		return "", false, errors.New("URL is not a valid S3 URL")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", false, fmt.Errorf("error parsing S3 URL: %w", err)
	}
	return "s3::" + u.String(), true, nil
}

// gcsDetector names a Google Cloud Storage object written without a scheme
// ("www.googleapis.com/storage/v1/bucket/m.zip") as terraform does: "gcs::https://...".
type gcsDetector struct{}

func (gcsDetector) Detect(src, _ string) (string, bool, error) {
	if !strings.Contains(src, ".googleapis.com/") {
		return "", false, nil
	}
	parts := strings.Split(src, "/")
	if len(parts) < 5 {
		return "", false, errors.New("URL is not a valid GCS URL")
	}
	u, err := url.Parse("https://www.googleapis.com/storage/" + parts[2] + "/" + parts[3] + "/" + strings.Join(parts[4:], "/"))
	if err != nil {
		return "", false, fmt.Errorf("error parsing GCS URL: %w", err)
	}
	return "gcs::" + u.String(), true, nil
}

// CloudStorage names the object store a remote package is kept in, "S3" or "GCS" ("" for
// any other): cairn does not fetch from either, as their SDKs are not part of it.
func (s Source) CloudStorage() string {
	if s.Kind != Remote {
		return ""
	}
	return CloudStorage(s.Addr)
}

// CloudStorage is Source.CloudStorage of a go-getter address: "s3::…", "gcs::…", or a URL
// whose scheme is s3, gs or gcs.
func CloudStorage(addr string) string {
	scheme := strings.TrimSuffix(forcedPrefix(addr), "::")
	if scheme == "" {
		if u, err := url.Parse(addr); err == nil {
			scheme = u.Scheme
		}
	}
	switch strings.ToLower(scheme) {
	case "s3":
		return "S3"
	case "gcs", "gs":
		return "GCS"
	}
	return ""
}
