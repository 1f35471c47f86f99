package budget

import (
	"gopkg.in/yaml.v3"
)

// YAMLNodes charges the nodes a YAML document expands to, aliases and merge keys followed, to
// m's alias-node budget, and checks its nesting depth. It never expands anything: it counts
// each node once and reuses the count wherever an alias points at it, so a billion laughs is
// refused in time linear in its size. A recursive alias is an error.
func YAMLNodes(m *Meter, root *yaml.Node) error {
	c := yamlCounter{m: m, memo: map[*yaml.Node]int64{}, active: map[*yaml.Node]bool{}}
	n, err := c.count(root, 0)
	if err != nil {
		return err
	}
	return m.AliasNodes(n)
}

// YAMLText parses text as YAML (aliases unexpanded) and checks it with YAMLNodes. Text that is
// not YAML is left for the real decoder to report.
func YAMLText(m *Meter, text string) error {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(text), &doc); err != nil {
		return nil
	}
	return YAMLNodes(m, &doc)
}

type yamlCounter struct {
	m      *Meter
	memo   map[*yaml.Node]int64
	active map[*yaml.Node]bool
}

// errRecursiveAlias is returned for an alias that contains itself.
type recursiveAliasError struct{ line, col int }

func (e *recursiveAliasError) Error() string {
	return "a YAML alias refers to a node that contains it (a recursive alias)"
}

func (c *yamlCounter) count(y *yaml.Node, depth int) (int64, error) {
	if y == nil {
		return 0, nil
	}
	if err := c.m.b.Depth(depth); err != nil {
		return 0, err
	}
	if n, ok := c.memo[y]; ok {
		return n, nil
	}
	if c.active[y] {
		return 0, &recursiveAliasError{y.Line, y.Column}
	}
	c.active[y] = true
	defer delete(c.active, y)
	var n int64 = 1
	if y.Kind == yaml.AliasNode {
		sub, err := c.count(y.Alias, depth+1)
		if err != nil {
			return 0, err
		}
		n = sub
	}
	for _, ch := range y.Content {
		sub, err := c.count(ch, depth+1)
		if err != nil {
			return 0, err
		}
		if n += sub; n > c.m.b.lim.AliasNodes && c.m.b.lim.AliasNodes >= 0 {
			return 0, &Exceeded{Limit: "alias-nodes", Max: c.m.b.lim.AliasNodes, What: "YAML aliases"}
		}
	}
	c.memo[y] = n
	return n, nil
}
