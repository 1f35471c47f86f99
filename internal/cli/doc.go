// Package cli is the cairn command line: cobra commands that parse typed flags, call the API
// through internal/client (against --server, or a cairn started in-process through
// Env.Start), and hand the answers to views that render them as text or JSON.
//
// Layout: run.go is the entry point (Run, Env, exit codes), root.go the global flags and the
// connection, one file per command (deploy.go, preview.go, ...), follow.go the event
// following shared by deploy and delete, params.go the parsing of flag values, and view*.go
// the rendering. Commands decide what to show; views decide only how.
//
// It may import api, internal/client and internal/app (for Config and App, and
// RotateSecretsKey, which works on a state directory rather than through the API), and the
// version constants of template/tflang and provider/tfplugin for `cairn version`; it holds no
// engine logic.
package cli
