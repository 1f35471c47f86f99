package cfn

import (
	"github.com/cairn-dev/cairn/internal/budget"
)

// tooManyNodes returns an *budget.Exceeded when src may hold far more nodes than the
// alias-node limit (budget.YAMLTooBig), so that it is refused before yaml.v3 builds them.
func tooManyNodes(src []byte, lim budget.Limits) error {
	return budget.YAMLTooBig(src, lim, "the template's YAML nodes")
}

// jsonDepth returns the deepest nesting of [ and { in src outside JSON strings, found by one
// scan without decoding anything, and the line and column of the first bracket deeper than
// limit (0, 0 if none is). For JSON it is the document's depth; for YAML flow collections an
// upper bound, which the check of the decoded nodes makes exact.
func jsonDepth(src []byte, limit int) (max, line, col int) {
	depth, inStr := 0, false
	l, lineStart := 1, 0
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch {
		case c == '\n':
			l, lineStart = l+1, i+1
		case inStr && c == '\\':
			i++
		case c == '"':
			inStr = !inStr
		case inStr:
		case c == '[' || c == '{':
			depth++
			if depth > max {
				max = depth
				if limit >= 0 && depth > limit && line == 0 {
					line, col = l, i-lineStart+1
				}
			}
		case c == ']' || c == '}':
			depth--
		}
	}
	return max, line, col
}
