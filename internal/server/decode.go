package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"
)

// decode reads one JSON object into v, refusing unknown fields, trailing data and bodies over
// MaxBodyBytes. With optional, an empty body leaves v as it is.
func decode(w http.ResponseWriter, r *http.Request, v any, optional bool) error {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var big *http.MaxBytesError
		switch {
		case errors.As(err, &big):
			return err
		case errors.Is(err, io.EOF) && optional:
			return nil
		case errors.Is(err, io.EOF):
			return &requestError{msg: "request body is empty; expected a JSON object"}
		default:
			return &requestError{msg: "cannot decode request body: " + err.Error()}
		}
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		var big *http.MaxBytesError
		if errors.As(err, &big) {
			return err
		}
		return &requestError{msg: "cannot decode request body: unexpected data after the JSON object"}
	}
	return nil
}

// query holds the query parameters of the long polls and of outputs.
type query struct {
	after        int64
	wait         time.Duration
	showSecrets  bool // outputs?show-secrets=true
	latest       bool // events?latest=true
	noAttributes bool // stacks/{name}?attributes=false
}

// parseQuery parses the named query parameters and refuses any other.
func parseQuery(r *http.Request, names ...string) (query, error) {
	var q query
	for key, vals := range r.URL.Query() {
		known := false
		for _, n := range names {
			known = known || n == key
		}
		if !known {
			return q, &requestError{msg: fmt.Sprintf("unknown query parameter %q", key)}
		}
		if len(vals) != 1 {
			return q, &requestError{msg: fmt.Sprintf("query parameter %q is given %d times", key, len(vals))}
		}
		var err error
		switch key {
		case "after":
			q.after, err = strconv.ParseInt(vals[0], 10, 64)
			if err != nil || q.after < 0 {
				return q, &requestError{msg: fmt.Sprintf("query parameter after=%q: want a sequence number >= 0", vals[0])}
			}
		case "wait":
			q.wait, err = parseWait(vals[0])
			if err != nil {
				return q, err
			}
		case "attributes":
			var attributes bool
			attributes, err = trueOrFalse(key, vals[0])
			q.noAttributes = !attributes
		case "latest":
			q.latest, err = trueOrFalse(key, vals[0])
		case "show-secrets":
			q.showSecrets, err = trueOrFalse(key, vals[0])
		}
		if err != nil {
			return q, err
		}
	}
	return q, nil
}

// trueOrFalse parses the boolean query parameter key: exactly "true" or "false".
func trueOrFalse(key, val string) (bool, error) {
	if val != "true" && val != "false" {
		return false, &requestError{msg: fmt.Sprintf("query parameter %s=%q: want true or false", key, val)}
	}
	return val == "true", nil
}

// parseWait accepts a Go duration ("30s", "1m") or a number of seconds; more than MaxWait
// waits MaxWait.
func parseWait(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil {
		n, nerr := strconv.Atoi(s)
		if nerr != nil {
			return 0, &requestError{msg: fmt.Sprintf("query parameter wait=%q: want a duration such as 30s", s)}
		}
		d = time.Duration(n) * time.Second
	}
	if d < 0 {
		return 0, &requestError{msg: fmt.Sprintf("query parameter wait=%q: want a duration >= 0", s)}
	}
	return min(d, MaxWait), nil
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
