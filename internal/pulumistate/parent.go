package pulumistate

import "github.com/cairn-dev/cairn/internal/template"

// parentOf is the resource's parent option ("" until the front end records parents).
func parentOf(*template.Resource) string { return "" }
