package cli

import (
	"errors"
	"testing"
	"time"

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

func TestTimeoutSeconds(t *testing.T) {
	tests := map[string]struct {
		in      time.Duration
		want    int
		wantErr bool
	}{
		"None":         {in: 0, want: 0},
		"Whole":        {in: 30 * time.Minute, want: 1800},
		"RoundedUp":    {in: 1500 * time.Millisecond, want: 2},
		"Negative":     {in: -time.Second, wantErr: true},
		"SubSecondUp1": {in: time.Nanosecond, want: 1},
	}
	for name, tc := range tests {
		got, err := timeoutSeconds(tc.in)
		var ue *usageError
		if got != tc.want || tc.wantErr != errors.As(err, &ue) {
			t.Errorf("%s: timeoutSeconds(%s) = %d, %v; want %d, usage error %v", name, tc.in, got, err, tc.want, tc.wantErr)
		}
	}
}
