package provider

import "strings"

// WithoutCairnEnv drops cairn's own settings (CAIRN_TOKEN, CAIRN_SECRETS_KEY, ...) from env: a
// plugin or provisioner binary, possibly a tenant's, has no business with the server's
// credentials.
func WithoutCairnEnv(env []string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if !strings.HasPrefix(kv, "CAIRN_") {
			out = append(out, kv)
		}
	}
	return out
}
