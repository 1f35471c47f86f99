package pulumistate

import "github.com/cairn-dev/cairn/internal/template"

// parentOf is the resource's parent option ("" for the stack).
func parentOf(r *template.Resource) string { return r.Parent }
