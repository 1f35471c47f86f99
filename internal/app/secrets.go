package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/cairn-dev/cairn/internal/secrets"
	"github.com/cairn-dev/cairn/internal/state/sqlite"
)

// keyFile is the key file of cfg (defaults applied), or "" when cfg.SecretsKey gives the keys.
func keyFile(cfg Config) (string, error) {
	switch {
	case cfg.SecretsKey != "" && cfg.SecretsKeyFile != "":
		return "", errors.New("give the secrets key by a file (--secrets-key-file) or by CAIRN_SECRETS_KEY, not both")
	case cfg.SecretsKey != "":
		return "", nil
	case cfg.SecretsKeyFile != "":
		return cfg.SecretsKeyFile, nil
	}
	return DefaultKeyFile(cfg.Dir), nil
}

// DefaultKeyFile is the key file of state directory dir: beside it, not in it, so that a copy
// of the directory (a backup, a tarball sent for support) does not carry the key with the
// secrets it opens. For ".cairn" it is ".cairn.secrets.key".
func DefaultKeyFile(dir string) string {
	return filepath.Clean(dir) + ".secrets.key"
}

// loadKeys reads the keys of cfg; create makes the key file when it is absent.
func loadKeys(cfg Config, create bool) (ring *secrets.Keyring, file string, created bool, err error) {
	if file, err = keyFile(cfg); err != nil {
		return nil, "", false, err
	}
	switch {
	case file == "":
		ring, err = secrets.Parse(cfg.SecretsKey)
		if err != nil {
			err = fmt.Errorf("invalid CAIRN_SECRETS_KEY: %w", err)
		}
	case create:
		ring, created, err = secrets.LoadOrCreateFile(file)
	default:
		ring, err = secrets.LoadFile(file)
	}
	return ring, file, created, err
}

// keyring returns the keys that seal the state's secrets, creating the key file on first start.
func (a *App) keyring(cfg Config) (*secrets.Keyring, error) {
	ring, file, created, err := loadKeys(cfg, true)
	if err != nil {
		return nil, err
	}
	if created {
		a.log.Info("created the secrets key file: back it up with the state (without it, the state's secrets are lost)",
			"path", file)
	}
	return ring, nil
}

// Rotation is what RotateSecretsKey did.
type Rotation struct {
	KeyFile string   `json:"keyFile,omitempty"` // rewritten with the new key alone; "" with CAIRN_SECRETS_KEY
	Old     []string `json:"old"`               // ids of the keys no longer needed
	New     string   `json:"new"`               // id of the key that seals every value now
	Values  int      `json:"values"`            // values re-sealed
}

// RotateSecretsKey re-seals the secrets of the state in cfg.Dir with a new key. With a key
// file, it writes the file with a new first key before the old ones, re-seals every value with
// the new key in one transaction, and only then leaves the new key alone in the file: whenever
// it stops, the file opens the state. With cfg.SecretsKey, it re-seals with the first key
// given, which the user has put before the old one. It holds the database's lock throughout,
// and fails while a server or another command uses the state.
func RotateSecretsKey(ctx context.Context, cfg Config) (Rotation, error) {
	cfg = withDefaults(cfg)
	path := filepath.Join(cfg.Dir, "state.db")
	if _, err := os.Stat(path); err != nil {
		return Rotation{}, fmt.Errorf("cannot rotate the secrets key: no state in %s: %w", cfg.Dir, err)
	}
	ring, file, _, err := loadKeys(cfg, false)
	if err != nil {
		return Rotation{}, fmt.Errorf("cannot rotate the secrets key: %w", err)
	}
	store, err := sqlite.Open(path, sqlite.Options{Keyring: ring, Exclusive: true})
	if errors.Is(err, sqlite.ErrInUse) {
		return Rotation{}, fmt.Errorf("cannot rotate the secrets key: the state in %s is in use by a cairn server or command: stop it first", cfg.Dir)
	}
	if err != nil {
		return Rotation{}, fmt.Errorf("cannot rotate the secrets key: %w", err)
	}
	defer store.Close()

	next, old := ring, ring.IDs()[1:]
	if file != "" {
		next, old = ring.Rotate(), ring.IDs()
		if err := secrets.WriteFile(file, next); err != nil {
			return Rotation{}, fmt.Errorf("cannot rotate the secrets key: %w", err)
		}
	}
	n, err := store.Reseal(ctx, next)
	if err != nil {
		return Rotation{}, fmt.Errorf("cannot rotate the secrets key (the state still opens with the key file): %w", err)
	}
	if file != "" {
		if err := secrets.WriteFile(file, next.PrimaryOnly()); err != nil {
			return Rotation{}, fmt.Errorf("cannot remove the old key from the key file (every value is sealed with the new key %08x; the old one may be removed): %w",
				next.PrimaryID(), err)
		}
	}
	rot := Rotation{KeyFile: file, New: fmt.Sprintf("%08x", next.PrimaryID()), Values: n, Old: []string{}}
	for _, id := range old {
		rot.Old = append(rot.Old, fmt.Sprintf("%08x", id))
	}
	if err := store.Close(); err != nil {
		return rot, fmt.Errorf("cannot close the state after rotating the secrets key: %w", err)
	}
	return rot, nil
}
