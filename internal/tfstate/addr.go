package tfstate

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2/hclsyntax"

	"github.com/cairn-dev/cairn/internal/addr"
)

// Addr is a resource instance's address split as a state file keeps it.
type Addr struct {
	Module string // "" or e.g. module.a["x"].module.b
	Mode   string // Managed or Data
	Type   string
	Name   string
	Key    any // nil, string or int
}

// String is the address as terraform prints it: module.a["x"].data.t.n[0].
func (a Addr) String() string {
	var b strings.Builder
	if a.Module != "" {
		b.WriteString(a.Module)
		b.WriteByte('.')
	}
	if a.Mode == Data {
		b.WriteString("data.")
	}
	b.WriteString(a.Type)
	b.WriteByte('.')
	b.WriteString(a.Name)
	b.WriteString(KeyString(a.Key))
	return b.String()
}

// Config is the address of the resource without any instance keys (of the resource or of its
// modules), as dependencies name resources: module.a.t.n.
func (a Addr) Config() string {
	c := a
	c.Key = nil
	c.Module = stripKeys(a.Module)
	return c.String()
}

// KeyString formats an instance key: "", [0] or ["k"].
func KeyString(k any) string {
	if k == nil {
		return ""
	}
	if s, ok := k.(string); ok {
		return "[" + strconv.Quote(s) + "]"
	}
	if i, ok := keyInt(k); ok {
		return "[" + strconv.Itoa(i) + "]"
	}
	return ""
}

func keyInt(k any) (int, bool) {
	switch k := k.(type) {
	case int:
		return k, true
	case float64:
		return int(k), true
	}
	return 0, false
}

// NormalizeKey turns a decoded instance key into nil, string or int.
func NormalizeKey(k any) any {
	if i, ok := keyInt(k); ok {
		return i
	}
	return k
}

// ParseAddr splits a resource instance address such as module.m["a"].time_static.t[0].
func ParseAddr(s string) (Addr, error) {
	steps, err := scan(s)
	if err != nil {
		return Addr{}, err
	}
	var a Addr
	var mods []string
	i := 0
	for i < len(steps) && steps[i].name == "module" {
		if i+1 >= len(steps) || steps[i].key != nil {
			return Addr{}, fmt.Errorf("invalid address %q: a module call needs a name", s)
		}
		mods = append(mods, "module."+steps[i+1].name+KeyString(steps[i+1].key))
		i += 2
	}
	a.Module = strings.Join(mods, ".")
	a.Mode = Managed
	if i < len(steps) && steps[i].name == "data" && steps[i].key == nil {
		a.Mode = Data
		i++
	}
	if len(steps)-i != 2 || steps[i].key != nil {
		return Addr{}, fmt.Errorf("invalid resource instance address %q", s)
	}
	a.Type, a.Name, a.Key = steps[i].name, steps[i+1].name, steps[i+1].key
	return a, nil
}

func stripKeys(module string) string {
	if module == "" {
		return ""
	}
	steps, err := scan(module)
	if err != nil {
		return module
	}
	parts := make([]string, len(steps))
	for i, st := range steps {
		parts[i] = st.name
	}
	return strings.Join(parts, ".")
}

// step is one dotted part of an address with its optional key.
type step struct {
	name string
	key  any
}

// scan splits name[key].name... where keys are integers or quoted strings.
func scan(s string) ([]step, error) {
	var out []step
	for pos := 0; pos < len(s); {
		end := pos
		for end < len(s) && s[end] != '.' && s[end] != '[' {
			end++
		}
		if end == pos {
			return nil, fmt.Errorf("invalid address %q at offset %d", s, pos)
		}
		st := step{name: s[pos:end]}
		pos = end
		if pos < len(s) && s[pos] == '[' {
			close, key, err := scanKey(s, pos+1)
			if err != nil {
				return nil, err
			}
			st.key, pos = key, close+1
		}
		out = append(out, st)
		if pos < len(s) {
			if s[pos] != '.' || pos == len(s)-1 {
				return nil, fmt.Errorf("invalid address %q at offset %d", s, pos)
			}
			pos++
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("empty address")
	}
	return out, nil
}

// scanKey reads a key starting at i (after '['); it returns the index of the closing ']'.
func scanKey(s string, i int) (int, any, error) {
	if i < len(s) && s[i] == '"' {
		j := i + 1
		for j < len(s) && s[j] != '"' {
			if s[j] == '\\' {
				j++
			}
			j++
		}
		if j+1 >= len(s) || s[j+1] != ']' {
			return 0, nil, fmt.Errorf("invalid instance key in %q", s)
		}
		k, err := strconv.Unquote(s[i : j+1])
		if err != nil {
			return 0, nil, fmt.Errorf("invalid instance key in %q: %w", s, err)
		}
		return j + 1, k, nil
	}
	j := strings.IndexByte(s[i:], ']')
	if j < 0 {
		return 0, nil, fmt.Errorf("invalid instance key in %q", s)
	}
	n, err := strconv.Atoi(s[i : i+j])
	if err != nil || n < 0 {
		return 0, nil, fmt.Errorf("invalid instance key in %q", s)
	}
	return i + j, n, nil
}

// ProviderAddr is a provider configuration as state files name it: the module path of the
// configuration (without keys), the provider's source address and its alias.
type ProviderAddr struct {
	Module string // "" or module.a.module.b
	Source string // registry.terraform.io/hashicorp/time
	Alias  string
}

func (p ProviderAddr) String() string {
	s := "provider[" + strconv.Quote(p.Source) + "]"
	if p.Module != "" {
		s = p.Module + "." + s
	}
	if p.Alias != "" {
		s += "." + p.Alias
	}
	return s
}

// ParseProvider reads provider["source"], module.m.provider["source"].alias and friends. The
// source is a provider source address (internal/addr), normalized as required_providers
// sources are.
func ParseProvider(s string) (ProviderAddr, error) {
	i := strings.Index(s, "provider[")
	if i < 0 || (i > 0 && s[i-1] != '.') {
		return ProviderAddr{}, fmt.Errorf("invalid provider configuration address %q", s)
	}
	var p ProviderAddr
	if i > 0 {
		mod, err := ParseModule(s[:i-1])
		if err != nil {
			return ProviderAddr{}, fmt.Errorf("invalid provider configuration address %q: %w", s, err)
		}
		if mod != s[:i-1] {
			return ProviderAddr{}, fmt.Errorf("invalid provider configuration address %q: a provider configuration's module path has no instance keys", s)
		}
		p.Module = mod
	}
	close, key, err := scanKey(s, i+len("provider["))
	src, ok := key.(string)
	if err != nil || !ok || src == "" {
		return ProviderAddr{}, fmt.Errorf("invalid provider configuration address %q", s)
	}
	// The source as required_providers gives it after parsing, so that the two compare.
	pa, err := addr.ParseProvider(src)
	if err != nil {
		return ProviderAddr{}, fmt.Errorf("invalid provider configuration address %q: %w", s, err)
	}
	p.Source = pa.String()
	rest := s[close+1:]
	if rest != "" {
		alias, ok := strings.CutPrefix(rest, ".")
		if !ok || alias == "" || strings.ContainsAny(alias, ".[") {
			return ProviderAddr{}, fmt.Errorf("invalid provider configuration address %q", s)
		}
		p.Alias = alias
	}
	return p, nil
}

// checkModuleInstance checks a resource's module instance path as state files write it
// ("" for the root module, module.a["x"].module.b).
func checkModuleInstance(s string) error {
	if s == "" {
		return nil
	}
	steps, err := scan(s)
	if err != nil || len(steps)%2 != 0 {
		return fmt.Errorf("state contains an invalid module path %q", s)
	}
	for i := 0; i < len(steps); i += 2 {
		if steps[i].name != "module" || steps[i].key != nil || !hclsyntax.ValidIdentifier(steps[i+1].name) {
			return fmt.Errorf("state contains an invalid module path %q", s)
		}
	}
	return nil
}

// ParseModule checks a module instance path (module.a["x"].module.b) and returns it without
// instance keys, as provider configurations are addressed.
func ParseModule(s string) (string, error) {
	steps, err := scan(s)
	if err != nil {
		return "", err
	}
	if len(steps)%2 != 0 {
		return "", fmt.Errorf("invalid module path %q", s)
	}
	for i := 0; i < len(steps); i += 2 {
		if steps[i].name != "module" || steps[i].key != nil {
			return "", fmt.Errorf("invalid module path %q", s)
		}
	}
	return stripKeys(s), nil
}
