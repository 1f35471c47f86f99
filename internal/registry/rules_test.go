package registry

import (
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"
)

// code is the RFS code of err, "" for nil.
func code(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	if err != nil {
		return "not an *Error: " + err.Error()
	}
	return ""
}

func TestRules(t *testing.T) {
	const urn = "urn:fss:cn-north-7:a61dfe3154de42829367056598d5040f:function:default:test:latest"
	cases := map[string]struct {
		reason string
		err    error
		want   string
	}{
		"UUIDRequestID":      {"A UUID is a request id.", CheckRequestID("3f9c2a70-5d1e-4b8e-9a61-0c7d2e4f1b22"), ""},
		"NoRequestID":        {"The header is required.", CheckRequestID(""), CodeMissingParameter},
		"ShortRequestID":     {"36 characters at least.", CheckRequestID("3f9c2a70-5d1e-4b8e-9a61-0c7d2e4f1b2"), CodeInvalidParameter},
		"SpaceRequestID":     {"No spaces.", CheckRequestID("3f9c2a70 5d1e-4b8e-9a61-0c7d2e4f1b22"), CodeInvalidParameter},
		"Name":               {"Lowercase, digits, hyphens inside.", CheckName("acme-widgets-2"), ""},
		"NameDigitsOnly":     {"Digits alone are a name.", CheckName("42"), ""},
		"NameDoubleHyphen":   {"Hyphens may repeat inside.", CheckName("a--b"), ""},
		"NameTrailingHyphen": {"The newer SDK rule: no trailing hyphen.", CheckName("ab-"), CodeInvalidParameter},
		"NameUpper":          {"No upper case.", CheckName("aB"), CodeInvalidParameter},
		"NameDot":            {"No dots.", CheckName("a.b"), CodeInvalidParameter},
		"Version":            {"Semver.", CheckVersion("1.2.3"), ""},
		"VersionShort":       {"5 characters at least (so 1.2.3).", CheckVersion("1.2"), CodeInvalidParameter},
		"VersionV":           {"No v prefix.", CheckVersion("v1.2.3"), CodeInvalidParameter},
		"VersionPre":         {"Pre-release identifiers.", CheckVersion("1.2.3-rc.1"), ""},
		"VersionPreZero":     {"Numeric pre-release identifiers have no leading zero.", CheckVersion("1.2.3-rc.01"), CodeInvalidParameter},
		"VersionBuild":       {"Build metadata.", CheckVersion("1.2.3+20260101.sha"), ""},
		"VersionLong":        {"128 characters at most.", CheckVersion("1.2.3-" + strings.Repeat("a", 123)), CodeInvalidParameter},
		"VersionMax":         {"Parts fit uint64.", CheckVersion("18446744073709551615.0.0"), ""},
		"URN":                {"The doc example.", CheckURN(urn, ""), ""},
		"URNRegion":          {"Same region.", CheckURN(urn, "cn-north-7"), ""},
		"URNOtherRegion":     {"Another region is refused.", CheckURN(urn, "cn-north-4"), CodeInvalidParameter},
		"URNAlias":           {"!alias qualifier.", CheckURN(strings.Replace(urn, ":latest", ":!dev1", 1), ""), ""},
		"URNOneCharQual":     {"Single-character versions fail.", CheckURN(strings.Replace(urn, ":latest", ":1", 1), ""), CodeInvalidParameter},
		"URNShortProject":    {"Project ids have 3..64 characters.", CheckURN(strings.Replace(urn, "a61dfe3154de42829367056598d5040f", "ab", 1), ""), CodeInvalidParameter},
		"URNFunctionDigit":   {"Function names start with a letter.", CheckURN(strings.Replace(urn, ":test:", ":1test:", 1), ""), CodeInvalidParameter},
		"URNMissing":         {"Required.", CheckURN("", ""), CodeMissingParameter},
		"URNTooLong":         {"256 characters at most.", CheckURN(strings.Replace(urn, "cn-north-7", strings.Repeat("r", 200), 1), ""), CodeInvalidParameter},
		"ProviderID":         {"A lowercase UUID.", CheckProviderID(newID()), ""},
		"ProviderIDUpper":    {"Lowercase only.", CheckProviderID(strings.ToUpper(newID())), CodeInvalidParameter},
		"AgencyURN":          {"An agency URN.", checkAgency("iam::0a1b:agency:rfs", ""), ""},
		"AgencyWildcard":     {"iam:*: is allowed.", checkAgency("iam:*:0a1b:agency:rfs", ""), ""},
		"AgencyBoth":         {"At most one.", checkAgency("iam::0a1b:agency:rfs", "rfs"), CodeInvalidParameter},
		"AgencyNameLong":     {"64 at most.", checkAgency("", strings.Repeat("a", 65)), CodeInvalidParameter},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := code(tc.err); got != tc.want {
				t.Errorf("%s\ngot code %q (%v), want %q", tc.reason, got, tc.err, tc.want)
			}
		})
	}
}

func TestParseQuery(t *testing.T) {
	cases := map[string]struct {
		query    string
		list, id bool
		want     Query
		code     string
	}{
		"Defaults":     {query: "", list: true, want: Query{Desc: true, Limit: 1000}},
		"Asc":          {query: "sort_key=create_time&sort_dir=asc&limit=10", list: true, want: Query{Limit: 10}},
		"ID":           {query: "provider_id=7d4f0c9e-2b61-4a3f-8e55-1c2d3e4f5a6b", id: true, want: Query{Desc: true, Limit: 1000, ProviderID: "7d4f0c9e-2b61-4a3f-8e55-1c2d3e4f5a6b"}},
		"IDNotAllowed": {query: "provider_id=7d4f0c9e-2b61-4a3f-8e55-1c2d3e4f5a6b", list: true, code: CodeUnknownParameter},
		"ListNotHere":  {query: "limit=10", id: true, code: CodeUnknownParameter},
		"BadID":        {query: "provider_id=x", id: true, code: CodeInvalidParameter},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			q, _ := url.ParseQuery(tc.query)
			got, err := ParseQuery(q, tc.list, tc.id)
			if c := code(err); c != tc.code {
				t.Fatalf("ParseQuery(%q): code %q (%v), want %q", tc.query, c, err, tc.code)
			}
			if err != nil {
				return
			}
			got.canonical = ""
			if got != tc.want {
				t.Errorf("ParseQuery(%q) = %+v, want %+v", tc.query, got, tc.want)
			}
		})
	}
}

func TestFormatTime(t *testing.T) {
	if got := FormatTime(time.Date(1970, 1, 1, 1, 0, 0, 7_999_999, time.FixedZone("CET", 3600))); got != "1970-01-01T00:00:00.007Z" {
		t.Errorf("FormatTime = %q", got)
	}
}
