package app

import (
	"context"
	"encoding/base64"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/secrets"
)

// TestSecretsKeySources: the key file is created 0600 on first start, refused when others may
// read it, and replaced by CAIRN_SECRETS_KEY when that is given; a state opens only with its key.
func TestSecretsKeySources(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	cfg := Config{Dir: dir, Listen: "127.0.0.1:0", NoAuth: true}
	a := start(t, cfg)
	if err := a.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	keyFile := DefaultKeyFile(dir)
	fi, err := os.Stat(keyFile)
	if err != nil {
		t.Fatalf("first start made no key file: %v", err)
	}
	if runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600 {
		t.Errorf("key file mode = %v, want 0600", fi.Mode())
	}
	if a, err := Start(ctx, cfg); err != nil {
		t.Errorf("second start with the same key file: %v", err)
	} else {
		a.Shutdown(ctx)
	}

	k := secrets.NewKey()
	other := base64.StdEncoding.EncodeToString(k[:])
	cases := map[string]struct {
		reason string
		cfg    Config
		chmod  os.FileMode
		want   string
	}{
		"OpenKeyFile": {reason: "A key file its group may read is refused, as ssh refuses such a private key.",
			cfg: cfg, chmod: 0o640, want: "chmod 600"},
		"OtherKey": {reason: "A key that did not seal the state does not open it.",
			cfg: Config{Dir: dir, Listen: "127.0.0.1:0", NoAuth: true, SecretsKey: other}, want: "does not open this database"},
		"Both": {reason: "A key file and a key in the environment are one too many.",
			cfg: Config{Dir: dir, Listen: "127.0.0.1:0", NoAuth: true, SecretsKey: other, SecretsKeyFile: keyFile}, want: "not both"},
		"BadEnvKey": {reason: "CAIRN_SECRETS_KEY must be base64 of 32 bytes.",
			cfg: Config{Dir: dir, Listen: "127.0.0.1:0", NoAuth: true, SecretsKey: "c2hvcnQ="}, want: "CAIRN_SECRETS_KEY"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if tc.chmod != 0 {
				if runtime.GOOS == "windows" {
					t.Skip("no Unix permissions")
				}
				os.Chmod(keyFile, tc.chmod)
				defer os.Chmod(keyFile, 0o600)
			}
			a, err := Start(ctx, tc.cfg)
			if err == nil {
				a.Shutdown(ctx)
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s\nStart: %v, want an error saying %q", tc.reason, err, tc.want)
			}
		})
	}

	// A state started with CAIRN_SECRETS_KEY makes no key file.
	envDir := t.TempDir()
	a = start(t, Config{Dir: envDir, Listen: "127.0.0.1:0", NoAuth: true, SecretsKey: other})
	if _, err := os.Stat(DefaultKeyFile(envDir)); !os.IsNotExist(err) {
		t.Errorf("a key file was made although CAIRN_SECRETS_KEY gave the key: %v", err)
	}
}
