package pulumiyaml

import (
	"encoding/base64"
	"net/url"
	"strings"
)

// A parameterized package (a package declaration with `parameterization:`) is served by a base
// plugin (`parameterized` 1.2.3) that Parameterize turns into another package (`goodbye`
// 2.0.0). Its requirement is named by the package's namespace, pinned to the base plugin's
// version, and its source carries the parameterization, so that the plugin resolver launches the
// base plugin and parameterizes it; each parameterization is its own requirement, hence its own
// plugin instance.

// Parameterization is what a parameterized package's source carries.
type Parameterization struct {
	Plugin  string // the base plugin's package
	Name    string // the package it becomes
	Version string // that package's version
	Value   []byte
}

// ParameterizedSource is the requirement source of package pz.Name served by pz.Plugin.
func ParameterizedSource(pz Parameterization) string {
	q := url.Values{"name": {pz.Name}, "version": {pz.Version}, "value": {base64.StdEncoding.EncodeToString(pz.Value)}}
	return sourcePrefix + pz.Plugin + "?" + q.Encode()
}

// ParameterizationOf returns the parameterization a requirement source carries, if any.
func ParameterizationOf(source string) (Parameterization, bool) {
	rest, ok := strings.CutPrefix(source, sourcePrefix)
	plugin, query, param := strings.Cut(rest, "?")
	if !ok || !param {
		return Parameterization{}, false
	}
	q, err := url.ParseQuery(query)
	if err != nil {
		return Parameterization{}, false
	}
	value, err := base64.StdEncoding.DecodeString(q.Get("value"))
	if err != nil || plugin == "" || q.Get("name") == "" {
		return Parameterization{}, false
	}
	return Parameterization{Plugin: plugin, Name: q.Get("name"), Version: q.Get("version"), Value: value}, true
}

// parameterization is the Parameterization a declaration asks for; its value is checked
// when the declaration is read (invalid).
func (d packageDecl) parameterization() Parameterization {
	value, _ := base64.StdEncoding.DecodeString(d.Parameterization.Value)
	return Parameterization{Plugin: d.Name, Name: d.Parameterization.Name, Version: d.Parameterization.Version, Value: value}
}
