package cli

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestExamples: every command has examples, and every example line runs the command it
// names with flags and arguments that command accepts.
func TestExamples(t *testing.T) {
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Hidden {
			return
		}
		if strings.TrimSpace(c.Example) == "" {
			t.Errorf("%s has no Example", c.CommandPath())
		}
		for _, line := range strings.Split(c.Example, "\n") {
			checkExample(t, c.CommandPath(), strings.TrimSpace(line))
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk((&runner{}).rootCommand())
	for path := range examples {
		root := (&runner{}).rootCommand()
		if c, _, err := root.Find(strings.Fields(path)); err != nil || c.CommandPath() != strings.TrimSpace("cairn "+path) {
			t.Errorf("examples[%q] names no command", path)
		}
	}
}

// checkExample parses the cairn command of line (after any "cmd |", up to a "|" or ">").
func checkExample(t *testing.T, owner, line string) {
	t.Helper()
	if line == "" || strings.HasPrefix(line, "#") {
		return
	}
	i := strings.Index(line, "cairn ")
	if i < 0 {
		return // another tool's command in a sequence (terraform state pull ...)
	}
	words := shellWords(line[i:])
	for j, w := range words {
		if w == "|" || w == ">" {
			words = words[:j]
			break
		}
	}
	root := (&runner{}).rootCommand()
	c, rest, err := root.Find(words[1:])
	if err != nil {
		t.Errorf("%s: example %q: %v", owner, line, err)
		return
	}
	if err := c.ParseFlags(rest); err != nil {
		t.Errorf("%s: example %q: %v", owner, line, err)
		return
	}
	if err := c.ValidateArgs(c.Flags().Args()); err != nil {
		t.Errorf("%s: example %q: %v", owner, line, err)
	}
	if c.Runnable() == false {
		t.Errorf("%s: example %q runs no command", owner, line)
	}
}

// shellWords splits s as a POSIX shell would, for the quoting the examples use.
func shellWords(s string) []string {
	var words []string
	var cur strings.Builder
	in, quote := false, rune(0)
	for _, r := range s {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '\'' || r == '"':
			quote, in = r, true
		case r == ' ':
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if in {
		words = append(words, cur.String())
	}
	return words
}
