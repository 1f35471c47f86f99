package cli

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cairn-dev/cairn/internal/app"
)

// TestServerServiceTokenAllowFlag: --service-token-allow is comma-separated and repeatable;
// CAIRN_SERVICE_TOKEN_ALLOW applies when the flag is not given (app splits its commas).
func TestServerServiceTokenAllowFlag(t *testing.T) {
	cases := map[string]struct {
		args []string
		env  string
		want []string
	}{
		"None": {args: nil, want: nil},
		"Repeated": {args: []string{"--service-token-allow", "10.0.0.0/8,handlers.internal", "--service-token-allow", "127.0.0.1"}, env: "ignored.example",
			want: []string{"10.0.0.0/8", "handlers.internal", "127.0.0.1"}},
		"Env": {env: "10.0.0.0/8,handlers.internal", want: []string{"10.0.0.0/8,handlers.internal"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var got app.Config
			env := Env{Stderr: new(strings.Builder),
				Getenv: func(k string) string { return map[string]string{"CAIRN_SERVICE_TOKEN_ALLOW": tc.env}[k] },
				Start: func(_ context.Context, cfg app.Config) (*app.App, error) {
					got = cfg
					return nil, context.DeadlineExceeded
				}}
			Run(context.Background(), append([]string{"server", "--dir", t.TempDir()}, tc.args...), env)
			if diff := cmp.Diff(tc.want, got.ServiceTokenAllow); diff != "" {
				t.Errorf("ServiceTokenAllow: -want +got\n%s", diff)
			}
		})
	}
}
