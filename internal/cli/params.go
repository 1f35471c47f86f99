package cli

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// Parsing of flag values into the typed values the API takes. Errors are usage errors.

// parseParameters turns --parameter K=V values into a map, splitting at the first "=". A
// key given twice takes the last value.
func parseParameters(kvs []string) (map[string]string, error) {
	if len(kvs) == 0 {
		return nil, nil
	}
	m := make(map[string]string, len(kvs))
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, usagef("--parameter %q: want KEY=VALUE", kv)
		}
		m[k] = v
	}
	return m, nil
}

// timeoutSeconds turns --timeout into whole seconds, rounding up; 0 means none.
func timeoutSeconds(d time.Duration) (int, error) {
	if d < 0 {
		return 0, usagef("--timeout must not be negative, got %s", d)
	}
	return int((d + time.Second - 1) / time.Second), nil
}

// required is the usage error of a required flag left empty.
func required(flag, value string) error {
	if value == "" {
		return usagef("%s is required", flag)
	}
	return nil
}

// readTemplate reads the template file ("-": stdin) and returns the name to report it by
// and its text.
func (r *runner) readTemplate(path string) (name, text string, err error) {
	var b []byte
	switch path {
	case "":
		return "", "", usagef("-f FILE is required")
	case "-":
		name = "<stdin>"
		b, err = io.ReadAll(r.env.Stdin)
	default:
		name = path
		b, err = os.ReadFile(path)
	}
	if err != nil {
		return "", "", fmt.Errorf("cannot read the template: %w", err)
	}
	return name, string(b), nil
}
