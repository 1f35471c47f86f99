package server

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"sync"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver, for a PostgreSQL shared by replicas
	_ "modernc.org/sqlite"
)

// Claims records which tenant owns each namespace, in namespaces.db beside kube.db. A claim,
// once made, never changes, so answers are kept in memory.
type Claims struct {
	db    *sql.DB
	pg    bool // PostgreSQL: $1 placeholders
	mu    sync.Mutex
	owner map[string]string
}

// OpenClaimsPostgres opens (or creates) the claims in the PostgreSQL database at url, which
// every replica's cairn-kube shares.
func OpenClaimsPostgres(url string) (*Claims, error) {
	db, err := sql.Open("pgx", url)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(4)
	if _, err := db.Exec(`CREATE TABLE IF NOT EXISTS namespace_claims (namespace TEXT PRIMARY KEY, tenant TEXT NOT NULL)`); err != nil {
		db.Close()
		return nil, fmt.Errorf("cannot open the namespace claims: %w", err)
	}
	return &Claims{db: db, pg: true, owner: map[string]string{}}, nil
}

// OpenClaims opens (or creates) the claims of dir.
func OpenClaims(dir string) (*Claims, error) {
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "namespaces.db")+"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)")
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(`CREATE TABLE IF NOT EXISTS namespace_claims (namespace TEXT PRIMARY KEY, tenant TEXT NOT NULL)`); err != nil {
		db.Close()
		return nil, fmt.Errorf("cannot open the namespace claims: %w", err)
	}
	return &Claims{db: db, owner: map[string]string{}}, nil
}

// Close closes the database.
func (c *Claims) Close() error { return c.db.Close() }

// ownerLocked is the tenant that owns ns, "" when none does; c.mu is held.
func (c *Claims) ownerLocked(ctx context.Context, ns string) (string, error) {
	if t, ok := c.owner[ns]; ok {
		return t, nil
	}
	var t string
	err := c.db.QueryRowContext(ctx, c.q(`SELECT tenant FROM namespace_claims WHERE namespace = ?`), ns).Scan(&t)
	if err == sql.ErrNoRows {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("cannot read the owner of namespace %q: %w", ns, err)
	}
	c.owner[ns] = t
	return t, nil
}

// Claim makes ns tenant's unless another tenant owns it, and returns its owner.
func (c *Claims) Claim(ctx context.Context, ns, tenant string) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t, err := c.ownerLocked(ctx, ns); err != nil || t != "" {
		return t, err
	}
	if _, err := c.db.ExecContext(ctx, c.q(`INSERT INTO namespace_claims (namespace, tenant) VALUES (?, ?) ON CONFLICT DO NOTHING`), ns, tenant); err != nil {
		return "", fmt.Errorf("cannot claim namespace %q: %w", ns, err)
	}
	delete(c.owner, ns)
	return c.ownerLocked(ctx, ns)
}

// q is query with PostgreSQL's numbered placeholders when the claims are there.
func (c *Claims) q(query string) string {
	if !c.pg {
		return query
	}
	var b strings.Builder
	n := 0
	for _, r := range query {
		if r == '?' {
			n++
			fmt.Fprintf(&b, "$%d", n)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}
