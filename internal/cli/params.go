package cli

import (
	"fmt"
	"os"
	"strings"
)

// parseParameters turns --parameter K=V values into a map, splitting at the first "=".
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

// readTemplate reads the template file and returns the name to report it by and its text.
func readTemplate(path string) (name, text string, err error) {
	if path == "" {
		return "", "", usagef("-f FILE is required")
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", "", fmt.Errorf("cannot read the template: %w", err)
	}
	return path, string(b), nil
}
