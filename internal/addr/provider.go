// Package addr parses and prints the addresses users write: Terraform provider source
// addresses today. It imports nothing of cairn's.
package addr

import (
	"fmt"
	"regexp"
	"strings"
)

// DefaultRegistryHost is the host a provider source without one implies. It is the host
// terraform uses, so a filesystem mirror laid out for terraform works for cairn unchanged.
const DefaultRegistryHost = "registry.terraform.io"

// Provider is a fully qualified provider source address: host/namespace/type.
type Provider struct {
	Host, Namespace, Type string
}

func (p Provider) String() string { return p.Host + "/" + p.Namespace + "/" + p.Type }

// ForDisplay drops the default host, as terraform prints addresses.
func (p Provider) ForDisplay() string {
	if p.Host == DefaultRegistryHost {
		return p.Namespace + "/" + p.Type
	}
	return p.String()
}

var (
	partRe = regexp.MustCompile(`^[0-9A-Za-z](?:[0-9A-Za-z_-]{0,62}[0-9A-Za-z])?$`)
	hostRe = regexp.MustCompile(`^[0-9A-Za-z.-]+(?::[0-9]+)?$`)
)

// ParseProvider parses a source as required_providers writes it: "type", "namespace/type" or
// "host/namespace/type". A bare type implies the hashicorp namespace, as terraform does for
// providers without a required_providers entry. Host and namespace are lower-cased, as
// terraform compares them case-insensitively; the type keeps its case for the caller to
// judge (private providers match it case-insensitively, see the RFS registry).
func ParseProvider(src string) (Provider, error) {
	parts := strings.Split(src, "/")
	var p Provider
	switch len(parts) {
	case 1:
		p = Provider{DefaultRegistryHost, "hashicorp", parts[0]}
	case 2:
		p = Provider{DefaultRegistryHost, parts[0], parts[1]}
	case 3:
		p = Provider{parts[0], parts[1], parts[2]}
	default:
		return Provider{}, fmt.Errorf("invalid provider source %q: expected [hostname/]namespace/type", src)
	}
	if !hostRe.MatchString(p.Host) {
		return Provider{}, fmt.Errorf("invalid provider source %q: invalid hostname %q", src, p.Host)
	}
	for _, part := range []string{p.Namespace, p.Type} {
		if !partRe.MatchString(part) {
			return Provider{}, fmt.Errorf("invalid provider source %q: %q must be letters, digits, dashes and underscores, starting and ending with a letter or digit", src, part)
		}
	}
	p.Host, p.Namespace = strings.ToLower(p.Host), strings.ToLower(p.Namespace)
	if strings.HasPrefix(p.Type, "terraform-provider-") {
		return Provider{}, fmt.Errorf("invalid provider source %q: the type must not include the \"terraform-provider-\" prefix", src)
	}
	return p, nil
}
