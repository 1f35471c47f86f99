package pulumirpc

import (
	"maps"
	"slices"
	"strconv"
	"strings"

	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"

	"github.com/cairn-dev/cairn/internal/provider"
)

// replaceOnChanges turns the changes under the resource's replaceOnChanges paths into
// replacements, as Pulumi's engine does after the provider's Diff: every changed top-level
// key and every detailed-diff path that one of paths contains ("*" matches any one step)
// is a replacement.
func replaceOnChanges(resp provider.DiffResponse, detailed map[string]*pulumirpc.PropertyDiff, paths []string) provider.DiffResponse {
	if len(paths) == 0 || !resp.Changed {
		return resp
	}
	var patterns [][]string
	for _, p := range paths {
		if steps, ok := propertyPath(p); ok {
			patterns = append(patterns, steps)
		}
	}
	contained := func(path string) bool {
		steps, ok := propertyPath(path)
		return ok && slices.ContainsFunc(patterns, func(pat []string) bool { return contains(pat, steps) })
	}
	replace := map[string]bool{}
	for _, k := range resp.ReplacePaths {
		replace[k] = true
	}
	for path := range detailed {
		if contained(path) {
			replace[path] = true
		}
	}
	for _, k := range resp.ChangedKeys {
		if contained(k) {
			replace[k] = true
		}
	}
	resp.ReplacePaths = slices.Sorted(maps.Keys(replace))
	resp.Replace = len(resp.ReplacePaths) > 0
	return resp
}

// contains says whether pattern is a prefix of steps, "*" matching any one step.
func contains(pattern, steps []string) bool {
	if len(pattern) > len(steps) {
		return false
	}
	for i, s := range pattern {
		if s != "*" && s != steps[i] {
			return false
		}
	}
	return true
}

// propertyPath splits a Pulumi property path (`a.b`, `a[0]`, `a["k.x"]`, `["a.b"].c`,
// `a[*]`) into its steps.
func propertyPath(path string) ([]string, bool) {
	var steps []string
	s := path
	for s != "" {
		switch {
		case strings.HasPrefix(s, "["):
			end := strings.IndexByte(s, ']')
			if strings.HasPrefix(s, `["`) {
				end = strings.Index(s, `"]`) + 1
			}
			if end <= 0 {
				return nil, false
			}
			in := s[1:end]
			if q, err := strconv.Unquote(in); err == nil {
				in = q
			}
			steps, s = append(steps, in), s[end+1:]
		case strings.HasPrefix(s, "."):
			s = s[1:]
		default:
			end := strings.IndexAny(s, ".[")
			if end < 0 {
				end = len(s)
			}
			steps, s = append(steps, s[:end]), s[end:]
		}
	}
	return steps, len(steps) > 0
}
