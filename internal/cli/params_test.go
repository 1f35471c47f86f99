package cli

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseParameters(t *testing.T) {
	tests := []struct {
		in      []string
		want    map[string]string
		wantErr bool
	}{
		{in: nil, want: nil},
		{in: []string{"A=1", "B=x=y", "C="}, want: map[string]string{"A": "1", "B": "x=y", "C": ""}},
		{in: []string{"A=1", "A=2"}, want: map[string]string{"A": "2"}},
		{in: []string{"A"}, wantErr: true},
		{in: []string{"=1"}, wantErr: true},
	}
	for _, tt := range tests {
		got, err := parseParameters(tt.in)
		var ue *usageError
		if tt.wantErr != errors.As(err, &ue) {
			t.Errorf("parseParameters(%q) err = %v, want usage error: %v", tt.in, err, tt.wantErr)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("parseParameters(%q) (-want +got):\n%s", tt.in, diff)
		}
	}
}

func TestEnvName(t *testing.T) {
	if got := envName("tls-public-url"); got != "CAIRN_TLS_PUBLIC_URL" {
		t.Errorf("envName = %q", got)
	}
}
