// Package kubetypes turns resource types cairn can serve into Kubernetes types: the
// CustomResourceDefinition of a Terraform provider's resource type, generated from the
// provider's schema at run time (no code generation), and the way between an object of that
// type and the resource's configuration. It imports no Kubernetes library: a CRD is JSON.
package kubetypes

import (
	"fmt"
	"sort"
	"strings"

	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/addr"
	"github.com/cairn-dev/cairn/internal/provider"
)

// Labels and annotations cairn puts on the CRDs it makes; the reconciler finds them by the
// label and reads the provider and type from the annotations.
const (
	LabelEnabled       = "cairn.dev/enabled"
	AnnotationProvider = "cairn.dev/provider"
	AnnotationVersion  = "cairn.dev/provider-version"
	AnnotationType     = "cairn.dev/type"
	Version            = "v1alpha1"
)

// Type is a resource type offered as a Kubernetes type.
type Type struct {
	Provider addr.Provider
	Version  string // the provider's version
	Name     string // the resource type, e.g. random_pet
	Group    string // e.g. random.hashicorp.tf.cairn.dev
	Kind     string // e.g. Pet
	Plural   string // e.g. pets
}

// TypeOf names the Kubernetes type of resource type name of provider p.
func TypeOf(p addr.Provider, version, name string) Type {
	short := strings.TrimPrefix(name, p.Type+"_")
	var kind strings.Builder
	for _, part := range strings.Split(short, "_") {
		if part != "" {
			kind.WriteString(strings.ToUpper(part[:1]) + part[1:])
		}
	}
	k := kind.String()
	return Type{Provider: p, Version: version, Name: name, Kind: k, Plural: strings.ToLower(k) + "s",
		Group: dns(p.Type) + "." + dns(p.Namespace) + ".tf.cairn.dev"}
}

// dns is s as a DNS label: lower case, letters, digits and '-'.
func dns(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	return strings.Trim(b.String(), "-")
}

// CRDName is the CRD's metadata.name.
func (t Type) CRDName() string { return t.Plural + "." + t.Group }

// CRD is the CustomResourceDefinition of t with schema s: the configurable attributes in
// spec (required ones required), the computed ones in status.atProvider, sensitive computed
// attributes left out of status (they stay in cairn's state, encrypted), printer columns for
// readiness and a few attributes.
func CRD(t Type, s provider.Schema) map[string]any {
	specProps, statusProps := map[string]any{}, map[string]any{}
	var required []string
	var columns []map[string]any
	for _, a := range s.Attributes {
		if a.Name == "id" {
			continue // the resource's id: status.id
		}
		if a.Required || a.Optional {
			specProps[a.Name] = openAPI(a.Type)
			if a.Required {
				required = append(required, a.Name)
			}
		} else if a.Computed && !a.Sensitive {
			statusProps[a.Name] = openAPI(a.Type)
		}
	}
	statusProps["id"] = map[string]any{"type": "string"}
	// Columns: the id, then primitive inputs (required first), then computed primitive outputs.
	addColumn := func(name, path string, ty cty.Type) {
		if len(columns) >= 4 || !ty.IsPrimitiveType() {
			return
		}
		col := map[string]any{"name": columnName(name), "type": "string", "jsonPath": path}
		switch ty {
		case cty.Number:
			col["type"] = "number"
		case cty.Bool:
			col["type"] = "boolean"
		}
		columns = append(columns, col)
	}
	for _, a := range s.Attributes {
		if a.Required && !a.Sensitive {
			addColumn(a.Name, ".spec."+a.Name, a.Type)
		}
	}
	for _, a := range s.Attributes {
		if a.Optional && !a.Required && !a.Sensitive && a.Name != "id" {
			addColumn(a.Name, ".spec."+a.Name, a.Type)
		}
	}
	for _, a := range s.Attributes {
		if a.Computed && !a.Required && !a.Optional && !a.Sensitive && a.Name != "id" {
			addColumn(a.Name, ".status.atProvider."+a.Name, a.Type)
		}
	}
	columns = append([]map[string]any{
		{"name": "Ready", "type": "string", "jsonPath": `.status.conditions[?(@.type=="Ready")].status`},
		{"name": "Synced", "type": "string", "jsonPath": `.status.conditions[?(@.type=="Synced")].status`},
		{"name": "ID", "type": "string", "jsonPath": ".status.atProvider.id"},
	}, columns...)
	columns = append(columns, map[string]any{"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"})
	sort.Strings(required)
	spec := map[string]any{"type": "object", "properties": specProps}
	if len(required) > 0 {
		spec["required"] = required
	}
	condition := map[string]any{"type": "object", "properties": map[string]any{
		"type": map[string]any{"type": "string"}, "status": map[string]any{"type": "string"},
		"reason": map[string]any{"type": "string"}, "message": map[string]any{"type": "string"},
		"lastTransitionTime": map[string]any{"type": "string"}, "observedGeneration": map[string]any{"type": "integer"}}}
	status := map[string]any{"type": "object", "properties": map[string]any{
		"atProvider":         map[string]any{"type": "object", "properties": statusProps},
		"conditions":         map[string]any{"type": "array", "items": condition},
		"observedGeneration": map[string]any{"type": "integer"},
		"stack":              map[string]any{"type": "string", "description": "the cairn stack that holds this object's resource"},
	}}
	root := map[string]any{"type": "object", "required": []string{"spec"},
		"description": fmt.Sprintf("%s of the Terraform provider %s %s, served by cairn.", t.Name, t.Provider.ForDisplay(), t.Version),
		"properties":  map[string]any{"spec": spec, "status": status}}
	return map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1",
		"kind":       "CustomResourceDefinition",
		"metadata": map[string]any{
			"name":   t.CRDName(),
			"labels": map[string]any{LabelEnabled: "true"},
			"annotations": map[string]any{AnnotationProvider: t.Provider.String(), AnnotationVersion: t.Version,
				AnnotationType: t.Name},
		},
		"spec": map[string]any{
			"group": t.Group,
			"scope": "Namespaced",
			"names": map[string]any{"plural": t.Plural, "singular": strings.ToLower(t.Kind), "kind": t.Kind,
				"categories": []string{"cairn", dns(t.Provider.Type)}},
			"versions": []any{map[string]any{
				"name": Version, "served": true, "storage": true,
				"subresources":             map[string]any{"status": map[string]any{}},
				"additionalPrinterColumns": columns,
				"schema":                   map[string]any{"openAPIV3Schema": root},
			}},
		},
	}
}

func columnName(attr string) string {
	var b strings.Builder
	for _, part := range strings.Split(attr, "_") {
		if part != "" {
			b.WriteString(strings.ToUpper(part[:1]) + part[1:])
		}
	}
	return b.String()
}

// openAPI is the structural OpenAPI v3 schema of values of ty.
func openAPI(ty cty.Type) map[string]any {
	switch {
	case ty == cty.String:
		return map[string]any{"type": "string"}
	case ty == cty.Number:
		return map[string]any{"type": "number"}
	case ty == cty.Bool:
		return map[string]any{"type": "boolean"}
	case ty.IsListType() || ty.IsSetType():
		return map[string]any{"type": "array", "items": openAPI(ty.ElementType())}
	case ty.IsMapType():
		return map[string]any{"type": "object", "additionalProperties": openAPI(ty.ElementType())}
	case ty.IsObjectType():
		props := map[string]any{}
		for name, at := range ty.AttributeTypes() {
			props[name] = openAPI(at)
		}
		return map[string]any{"type": "object", "properties": props}
	}
	return map[string]any{"x-kubernetes-preserve-unknown-fields": true}
}

// ParseType reads back the Type of a CRD cairn made, from its annotations and names.
func ParseType(annotations map[string]string, group, kind, plural string) (Type, error) {
	p, err := addr.ParseProvider(annotations[AnnotationProvider])
	if err != nil {
		return Type{}, err
	}
	name := annotations[AnnotationType]
	if name == "" || annotations[AnnotationVersion] == "" {
		return Type{}, fmt.Errorf("not a CRD of cairn kube enable")
	}
	return Type{Provider: p, Version: annotations[AnnotationVersion], Name: name, Group: group, Kind: kind, Plural: plural}, nil
}
