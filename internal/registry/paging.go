package registry

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cairn-dev/cairn/internal/state"
)

// Paging limits of the list operations.
const (
	MinLimit     = 10
	MaxLimit     = 1000
	DefaultLimit = 1000
	maxMarker    = 512
)

// Query holds the parameters of a request's query string.
type Query struct {
	ProviderID string // optional name/id guard
	Desc       bool   // sort_dir: default desc (newest first)
	Limit      int
	Marker     string
	canonical  string // sort and limit as given, what a marker is tied to
}

// ParseQuery checks the query of an operation. Every operation but the lists takes
// provider_id only; the lists (list) also take sort_key, sort_dir, marker and limit, and
// ListPrivateProviders (list without id) no provider_id.
func ParseQuery(q url.Values, list, id bool) (Query, error) {
	out := Query{Desc: true, Limit: DefaultLimit}
	allowed := []string{}
	if id {
		allowed = append(allowed, "provider_id")
	}
	if list {
		allowed = append(allowed, "sort_key", "sort_dir", "marker", "limit")
	}
	var unknown []string
	for k := range q {
		if !slices.Contains(allowed, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return out, Unknown(strings.Join(unknown, ", "))
	}
	for _, k := range []string{"provider_id", "marker", "limit"} {
		if len(q[k]) > 1 {
			return out, invalid("query parameter %s is given %d times", k, len(q[k]))
		}
	}
	if vs, ok := q["provider_id"]; ok {
		if err := CheckProviderID(vs[0]); err != nil {
			return out, err
		}
		out.ProviderID = vs[0]
	}
	if !list {
		return out, nil
	}
	if err := parseSort(q, &out); err != nil {
		return out, err
	}
	if vs, ok := q["limit"]; ok {
		n, err := strconv.Atoi(vs[0])
		if err != nil || n < MinLimit || n > MaxLimit {
			return out, invalid("limit=%q: want an integer from 10 to 1000", vs[0])
		}
		out.Limit = n
	}
	if vs, ok := q["marker"]; ok {
		if len(vs[0]) < 1 || len(vs[0]) > maxMarker {
			return out, newError(http.StatusBadRequest, CodeInvalidMarker, "marker must have 1..512 characters")
		}
		out.Marker = vs[0]
	}
	out.canonical = strings.Join(q["sort_key"], ",") + "|" + strings.Join(q["sort_dir"], ",") + "|" + q.Get("limit")
	return out, nil
}

// parseSort checks sort_key and sort_dir: arrays (repeated parameters) of equal length, keys
// create_time only (once), directions asc or desc.
func parseSort(q url.Values, out *Query) error {
	keys, dirs := q["sort_key"], q["sort_dir"]
	if len(keys) != len(dirs) {
		return invalid("sort_key and sort_dir must have as many values each; got %d and %d", len(keys), len(dirs))
	}
	for _, k := range keys {
		if k != "create_time" {
			return invalid("sort_key=%q: only create_time is supported", k)
		}
	}
	if len(keys) > 1 {
		return invalid("sort_key create_time is given %d times", len(keys))
	}
	for _, d := range dirs {
		switch d {
		case "asc":
			out.Desc = false
		case "desc":
			out.Desc = true
		default:
			return invalid("sort_dir=%q: want asc or desc", d)
		}
	}
	return nil
}

// marker is what next_marker encodes: the position after the page's last row, and a
// fingerprint of everything else the request said, so that it is refused with other ones.
type marker struct {
	At   int64  `json:"t"` // unix ms
	Seq  int64  `json:"s"`
	Desc bool   `json:"d,omitempty"`
	Tied string `json:"f"`
}

// fingerprint ties a marker to the scope (tenant, route, provider) and the query.
func (q Query) fingerprint(scope string) string {
	h := sha256.Sum256([]byte(scope + "\x00" + q.canonical))
	return hex.EncodeToString(h[:8])
}

// page turns the query into a state.Page one row longer than the limit (to learn whether a
// next page exists), checking the marker against scope.
func (q Query) page(scope string) (state.Page, error) {
	p := state.Page{Desc: q.Desc, Limit: q.Limit + 1}
	if q.Marker == "" {
		return p, nil
	}
	bad := newError(http.StatusBadRequest, CodeInvalidMarker,
		"marker is not one this list returned for the same parameters; start again without it")
	raw, err := base64.RawURLEncoding.DecodeString(q.Marker)
	if err != nil {
		return p, bad
	}
	var m marker
	if err := json.Unmarshal(raw, &m); err != nil || m.Tied != q.fingerprint(scope) || m.Desc != q.Desc {
		return p, bad
	}
	p.After = &state.Cursor{CreatedAt: time.UnixMilli(m.At).UTC(), Seq: m.Seq}
	return p, nil
}

// next returns the next_marker of a page whose last row is at (at, seq), or nil when more is
// false.
func (q Query) next(scope string, more bool, at time.Time, seq int64) *string {
	if !more {
		return nil
	}
	b, _ := json.Marshal(marker{At: at.UnixMilli(), Seq: seq, Desc: q.Desc, Tied: q.fingerprint(scope)})
	s := base64.RawURLEncoding.EncodeToString(b)
	return &s
}
