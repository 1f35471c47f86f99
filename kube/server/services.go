package server

import (
	"errors"
	"net/url"
)

// noServices answers every webhook service lookup: cairn runs no Services, so a CRD's
// conversion webhook must name a URL.
type noServices struct{}

func (noServices) ResolveEndpoint(namespace, name string, port int32) (*url.URL, error) {
	return nil, errors.New("cairn's kube API has no Services: give the conversion webhook a url")
}
