package app

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/cairn-dev/cairn/internal/auth"
	"github.com/cairn-dev/cairn/internal/provider/customresource"
	"github.com/cairn-dev/cairn/internal/secrets"
	"github.com/cairn-dev/cairn/internal/state"
	"github.com/cairn-dev/cairn/internal/state/postgres"
	"github.com/cairn-dev/cairn/internal/state/sqlite"
)

// backend is everything cairn keeps, in one database.
type backend interface {
	state.Store
	state.Functions
	state.Registry
	state.Accounts
}

// openBackend opens the state: cfg.Database when set, else SQLite in cfg.Dir.
func openBackend(ctx context.Context, cfg Config, ring *secrets.Keyring) (backend, error) {
	if cfg.Database != "" {
		store, err := postgres.Open(ctx, cfg.Database, postgres.Options{Keyring: ring})
		if err != nil {
			return nil, fmt.Errorf("cannot open state: %w", err)
		}
		return store, nil
	}
	store, err := sqlite.Open(filepath.Join(cfg.Dir, "state.db"), sqlite.Options{Keyring: ring})
	if err != nil {
		return nil, fmt.Errorf("cannot open state: %w", err)
	}
	return store, nil
}

// authenticator checks the API's callers: the server's token, the tenants file's, the tokens
// made with `cairn token create` and, when configured, OIDC ID tokens. Without auth
// (--no-auth) every caller is the server's admin.
func (a *App) authenticator(cfg Config) (*auth.Authenticator, error) {
	if a.token == "" {
		return auth.New(auth.Config{}), nil
	}
	ac := auth.Config{ServerToken: a.token, Tenants: cfg.Tenants, Accounts: a.store}
	if cfg.OIDC != nil {
		o, err := auth.NewOIDC(*cfg.OIDC)
		if err != nil {
			return nil, err
		}
		ac.OIDC = o
	}
	return auth.New(ac), nil
}

// backendName names the state backend, for metrics.
func backendName(cfg Config) string {
	if cfg.Database != "" {
		return "postgres"
	}
	return "sqlite"
}

// watchReplicas, when the state is shared (PostgreSQL), wakes the long polls when another
// replica writes an event, and a custom-resource wait here when another replica took its
// response, until the app stops. SQLite has one process: nothing to hear.
func (a *App) watchReplicas(cr *customresource.Provider) {
	pg, ok := a.store.(*postgres.Store)
	if !ok {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	a.stopWatch = cancel
	go pg.Listen(ctx, postgres.Listeners{Events: a.eng.Wake, Response: cr.Recheck})
}
