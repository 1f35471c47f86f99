package registry

import (
	"crypto/rand"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cairn-dev/cairn/api"
)

// TimeLayout is how create_time and update_time are written: UTC with milliseconds.
const TimeLayout = "2006-01-02T15:04:05.000Z"

// FormatTime writes t as RFS does.
func FormatTime(t time.Time) string { return t.UTC().Format(TimeLayout) }

// Source is the provider_source of provider name.
func Source(name string) string { return api.PrivateProviderSourcePrefix + name }

var (
	requestIDRE = regexp.MustCompile(`^[A-Za-z0-9]+[A-Za-z0-9-]*$`)
	// nameRE is the newer SDK's rule; the older one allowed a trailing hyphen.
	nameRE       = regexp.MustCompile(`^[0-9a-z]([0-9a-z-]*[0-9a-z])*$`)
	providerIDRE = regexp.MustCompile(`^[a-z0-9]+[a-z0-9-]*$`)
	// semverRE is Semantic Versioning 2.0.0: no leading zeros, optional pre-release and build.
	semverRE = regexp.MustCompile(`^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)` +
		`(-(0|[1-9][0-9]*|[0-9]*[A-Za-z-][0-9A-Za-z-]*)(\.(0|[1-9][0-9]*|[0-9]*[A-Za-z-][0-9A-Za-z-]*))*)?` +
		`(\+[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$`)
	urnRE = regexp.MustCompile(`^urn:fss:.+:[A-Za-z0-9]{3,64}:function:default:[A-Za-z][A-Za-z0-9_-]{0,58}[A-Za-z0-9]:` +
		`([A-Za-z0-9][A-Za-z0-9_.-]{0,40}|![A-Za-z][A-Za-z0-9_-]{0,61})[A-Za-z0-9]$`)
	agencyURNRE = regexp.MustCompile(`^(iam:\*?:[A-Za-z0-9-]{1,64}:agency:.{1,64})?$`)
)

// Limits of the digest (§1.3).
const (
	maxDescription   = 1024
	maxAgencyName    = 64
	minRequestID     = 36
	maxRequestID     = 128
	providerIDLength = 36
)

// CheckRequestID checks the Client-Request-Id header every operation requires: 36..128
// characters, letters, digits and '-', not starting with '-'. A UUID passes.
func CheckRequestID(id string) error {
	switch {
	case id == "":
		return missing(api.ClientRequestIDHeader + " (header)")
	case len(id) < minRequestID || len(id) > maxRequestID:
		return invalid("header %s must have 36..128 characters, not %d", api.ClientRequestIDHeader, len(id))
	case !requestIDRE.MatchString(id):
		return invalid("header %s may hold letters, digits and '-' only, starting with a letter or digit (a UUID is recommended)", api.ClientRequestIDHeader)
	}
	return nil
}

// CheckName checks a provider_name: 1..64 lowercase letters, digits and hyphens, beginning
// and ending with a letter or digit.
func CheckName(name string) error {
	switch {
	case name == "":
		return missing("provider_name")
	case len(name) > 64:
		return invalid("provider_name must have 1..64 characters, not %d", len(name))
	case !nameRE.MatchString(name):
		return invalid("provider_name %q: use lowercase letters, digits and '-', beginning and ending with a letter or digit", name)
	}
	return nil
}

// CheckVersion checks a provider_version: 5..128 characters of Semantic Versioning 2.0.0
// whose major, minor and patch each fit an unsigned 64-bit integer.
func CheckVersion(v string) error {
	switch {
	case v == "":
		return missing("provider_version")
	case len(v) < 5 || len(v) > 128:
		return invalid("provider_version must have 5..128 characters, not %d", len(v))
	}
	m := semverRE.FindStringSubmatch(v)
	if m == nil {
		return invalid("provider_version %q is not a semantic version such as 1.0.0", v)
	}
	for _, n := range m[1:4] {
		if _, err := strconv.ParseUint(n, 10, 64); err != nil {
			return invalid("provider_version %q: %s is larger than an unsigned 64-bit integer", v, n)
		}
	}
	return nil
}

// checkDescription checks a provider_description or version_description: 0..1024 characters.
func checkDescription(field, d string) error {
	if n := utf8.RuneCountInString(d); n > maxDescription {
		return invalid("%s must have at most 1024 characters, not %d", field, n)
	}
	return nil
}

// CheckURN checks a function_graph_urn: 32..256 characters, FunctionGraph's function URN with
// the package "default" and a mandatory version or !alias, in region when region is not "".
func CheckURN(urn, region string) error {
	switch {
	case urn == "":
		return missing("function_graph_urn")
	case len(urn) < 32 || len(urn) > 256:
		return invalid("function_graph_urn must have 32..256 characters, not %d", len(urn))
	case !urnRE.MatchString(urn):
		return invalid("function_graph_urn %q is not a FunctionGraph function URN such as "+
			"urn:fss:REGION:PROJECT_ID:function:default:NAME:latest (the version or !alias is required)", urn)
	}
	if got := URNRegion(urn); region != "" && got != region {
		return invalid("function_graph_urn %q is in region %s; this registry is in region %s", urn, got, region)
	}
	return nil
}

// URNRegion is the region field of a function URN (its third field).
func URNRegion(urn string) string {
	f := strings.SplitN(urn, ":", 4)
	if len(f) < 4 {
		return ""
	}
	return f[2]
}

// CheckProviderID checks a provider_id given with a request: a 36-character lowercase id.
func CheckProviderID(id string) error {
	if len(id) != providerIDLength || !providerIDRE.MatchString(id) {
		return invalid("provider_id %q must be the 36-character id the provider was created with", id)
	}
	return nil
}

func checkAgency(urn, name string) error {
	switch {
	case urn != "" && name != "":
		return invalid("give at most one of provider_agency_urn and provider_agency_name")
	case !agencyURNRE.MatchString(urn) || len(urn) > 256:
		return invalid("provider_agency_urn %q is not an agency URN such as iam::ACCOUNT_ID:agency:NAME", urn)
	case utf8.RuneCountInString(name) > maxAgencyName:
		return invalid("provider_agency_name must have at most 64 characters")
	}
	return nil
}

// newID returns a random (version 4) UUID in lowercase hex.
func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
