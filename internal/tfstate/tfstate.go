// Package tfstate reads and writes terraform state files (format version 4, as terraform
// 0.12 to 1.x write them) and the resource-instance addresses they hold. It knows nothing of
// stacks or providers: the engine maps cairn's rows to it. It imports only go-cty, hcl's
// identifier rules and internal/addr.
package tfstate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"

	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// Version is the only state format version read and written.
const Version = 4

// State is a terraform state file, field for field.
type State struct {
	Version          int               `json:"version"`
	TerraformVersion string            `json:"terraform_version"`
	Serial           uint64            `json:"serial"`
	Lineage          string            `json:"lineage"`
	Outputs          map[string]Output `json:"outputs"`
	Resources        []Resource        `json:"resources"`
	CheckResults     json.RawMessage   `json:"check_results"`
}

// Output is a root module output value with its type (cty's JSON type notation).
type Output struct {
	Value     json.RawMessage `json:"value"`
	Type      json.RawMessage `json:"type"`
	Sensitive bool            `json:"sensitive,omitempty"`
}

// Resource is one resource (all its instances) of one module instance.
type Resource struct {
	Module    string     `json:"module,omitempty"` // "" for the root module, else e.g. module.a["x"].module.b
	Mode      string     `json:"mode"`             // "managed" or "data"
	Type      string     `json:"type"`
	Name      string     `json:"name"`
	Each      string     `json:"each,omitempty"` // written by old versions only; ignored
	Provider  string     `json:"provider"`       // e.g. provider["registry.terraform.io/hashicorp/time"]
	Instances []Instance `json:"instances"`
}

// Modes of Resource.
const (
	Managed = "managed"
	Data    = "data"
)

// Instance is one object of a resource.
type Instance struct {
	IndexKey            any               `json:"index_key,omitempty"` // nil, a string, or an integer (float64 once decoded)
	Status              string            `json:"status,omitempty"`    // "" or "tainted"
	Deposed             string            `json:"deposed,omitempty"`
	SchemaVersion       uint64            `json:"schema_version"`
	Attributes          json.RawMessage   `json:"attributes,omitempty"`
	AttributesFlat      map[string]string `json:"attributes_flat,omitempty"`
	SensitiveAttributes json.RawMessage   `json:"sensitive_attributes,omitempty"`
	Private             []byte            `json:"private,omitempty"` // base64 in JSON, as terraform writes it
	Dependencies        []string          `json:"dependencies,omitempty"`
	CreateBeforeDestroy bool              `json:"create_before_destroy,omitempty"`
}

// Decode reads a state file. Only format version 4 is accepted: terraform itself upgrades
// older files when it writes them.
func Decode(b []byte) (*State, error) {
	var head struct {
		Version *int `json:"version"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return nil, fmt.Errorf("cannot decode the state file: %w", err)
	}
	switch {
	case head.Version == nil:
		return nil, errors.New("cannot decode the state file: it has no version: not a terraform state")
	case *head.Version != Version:
		return nil, fmt.Errorf("state file format version %d is not supported: only version %d (terraform 0.12 and later) is; "+
			"run terraform apply or terraform state pull with terraform 1.x to write it in version %d", *head.Version, Version, Version)
	}
	var s State
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("cannot decode the state file: %w", err)
	}
	if err := s.check(); err != nil {
		return nil, err
	}
	return &s, nil
}

// check refuses what terraform never writes and cairn would misread: modes other than managed
// and data, addresses that are not valid (module paths, types, names), instance keys other
// than strings and whole numbers from 0, and a resource or an instance listed twice, which
// would overwrite one another.
func (s *State) check() error {
	resources := map[string]bool{}
	for i := range s.Resources {
		r := &s.Resources[i]
		if r.Mode != Managed && r.Mode != Data {
			return fmt.Errorf("state contains a resource with mode %q (%q %q) which is not supported", r.Mode, r.Type, r.Name)
		}
		if err := checkModuleInstance(r.Module); err != nil {
			return err
		}
		if !hclsyntax.ValidIdentifier(r.Type) {
			return fmt.Errorf("state contains an invalid resource type %q", r.Type)
		}
		if !hclsyntax.ValidIdentifier(r.Name) {
			return fmt.Errorf("state contains an invalid resource name %q", r.Name)
		}
		base := Addr{Module: r.Module, Mode: r.Mode, Type: r.Type, Name: r.Name}
		if resources[base.String()] {
			return fmt.Errorf("resource %s appears twice in the state", base)
		}
		resources[base.String()] = true
		instances := map[string]bool{}
		for j := range r.Instances {
			in := &r.Instances[j]
			switch k := in.IndexKey.(type) {
			case nil, string:
			case float64:
				if k < 0 || k != math.Trunc(k) || k > math.MaxInt32 {
					return fmt.Errorf("resource %s has an instance with the invalid instance key %v: keys are strings or whole numbers from 0", base, k)
				}
			default:
				return fmt.Errorf("resource %s has an instance with the invalid instance key %v", base, in.IndexKey)
			}
			if in.Status != "" && in.Status != "tainted" {
				return fmt.Errorf("instance of %s has invalid status %q", base, in.Status)
			}
			a := base
			a.Key = NormalizeKey(in.IndexKey)
			id := a.String() + "\x00" + in.Deposed
			if instances[id] {
				return fmt.Errorf("resource instance %s appears twice in the state", a)
			}
			instances[id] = true
			// The address reads back as written: what a row is named after is what terraform means.
			if back, err := ParseAddr(a.String()); err != nil || back.String() != a.String() {
				return fmt.Errorf("state contains the invalid resource instance address %s", a)
			}
		}
	}
	return nil
}

// Encode writes s as terraform does: version 4, resources and instances in terraform's order,
// indented JSON with a final newline.
func Encode(s *State) ([]byte, error) {
	out := *s
	out.Version = Version
	if out.Outputs == nil {
		out.Outputs = map[string]Output{}
	}
	if out.Resources == nil {
		out.Resources = []Resource{}
	}
	if out.CheckResults == nil {
		out.CheckResults = json.RawMessage("null")
	}
	sort.SliceStable(out.Resources, func(i, j int) bool { return resourceLess(out.Resources[i], out.Resources[j]) })
	for _, r := range out.Resources {
		sort.SliceStable(r.Instances, func(i, j int) bool { return keyLess(r.Instances[i].IndexKey, r.Instances[j].IndexKey) })
	}
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("cannot encode the state: %w", err)
	}
	return append(b, '\n'), nil
}

func resourceLess(a, b Resource) bool {
	switch {
	case a.Module != b.Module:
		return a.Module < b.Module
	case a.Mode != b.Mode:
		return a.Mode < b.Mode
	case a.Type != b.Type:
		return a.Type < b.Type
	}
	return a.Name < b.Name
}

// keyLess orders instance keys as terraform does: no key, then integers, then strings.
func keyLess(a, b any) bool {
	rank := func(k any) int {
		switch k.(type) {
		case nil:
			return 0
		case int, float64:
			return 1
		}
		return 2
	}
	if ra, rb := rank(a), rank(b); ra != rb {
		return ra < rb
	}
	if sa, ok := a.(string); ok {
		return sa < b.(string)
	}
	ia, _ := keyInt(a)
	ib, _ := keyInt(b)
	return ia < ib
}

// TerraformVersion is the terraform version written into state files: the language version
// cairn implements, and one every terraform 1.11 reads.
const TerraformVersion = "1.11.0"
