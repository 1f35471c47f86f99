package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cairn-dev/cairn/internal/secrets"
	"github.com/cairn-dev/cairn/internal/state"
)

// Secret values, each written to another sealed column by writeSecrets, and a value stored in
// clear that shows the files are really searched.
const (
	noEchoParam  = "noecho-param-7f3a9c"
	outputSecret = "output-secret-21be44"
	privateState = "private-state-9d0c12"
	responseData = "response-data-secret-5e8f"
	bodySecret   = "request-body-secret-a41c"
	detailSecret = "journal-detail-secret-c3d2"
	requestArg   = "operation-request-secret-77ab"
	providerCred = "provider-credential-0b9e"
	keyValue     = "url-key-bytes-e6f1"
	visible      = "Custom::VisibleTypeName"
)

var allSecrets = []string{noEchoParam, outputSecret, privateState, responseData, bodySecret, detailSecret, requestArg,
	providerCred, keyValue}

// writeSecrets writes each secret where cairn keeps such values: a stack with a NoEcho
// parameter and provider credentials, a resource whose outputs and private state hold
// secrets, its journal entry, the operation's request, a custom request whose response Data
// is NoEcho, and a key.
func writeSecrets(ctx context.Context, s state.Store) error {
	now := time.Now()
	op := state.Operation{ID: "op", Stack: "s", Kind: "deploy", Request: []byte(`{"Password":"` + requestArg + `"}`),
		Owner: "me", LeaseExpires: now.Add(time.Hour), StartedAt: now}
	if err := s.StartOperation(ctx, op); err != nil {
		return err
	}
	st := state.Stack{Name: "s", ID: "id-s", Status: "CREATE_IN_PROGRESS",
		Parameters: []byte(`{"Password":{"value":"` + noEchoParam + `","sensitive":true}}`),
		Template:   []byte(`{"Parameters":{"Password":"` + noEchoParam + `"}}`),
		Providers:  []byte(`{"aws":{"config":{"secret_key":"` + providerCred + `"}}}`), CreatedAt: now}
	if err := s.PutStack(ctx, st); err != nil {
		return err
	}
	r := state.Resource{Stack: "s", Name: "R", Type: visible, ID: "phys", Status: "CREATE_COMPLETE",
		Props:   []byte(`{"Password":"` + noEchoParam + `"}`),
		Outputs: []byte(`{"Token":"` + outputSecret + `"}`), Private: []byte(privateState), UpdatedAt: now}
	e := state.JournalEntry{Operation: "op", Stack: "s", Step: "create/R", Phase: state.End, Token: "tok",
		Detail: []byte(`{"after":{"Token":"` + detailSecret + `"}}`), At: now}
	if _, err := s.Append(ctx, e, state.Write{Put: &r}); err != nil {
		return err
	}
	cr := state.CustomRequest{ID: "req", Stack: "s", LogicalID: "R", Body: []byte(`{"ResourceProperties":{"P":"` + bodySecret + `"}}`),
		Expires: now.Add(time.Hour)}
	if _, _, err := s.PutCustomRequest(ctx, cr); err != nil {
		return err
	}
	if _, err := s.SaveCustomResponse(ctx, "req", []byte(`{"Status":"SUCCESS","NoEcho":true,"Data":{"Token":"`+responseData+`"}}`), now); err != nil {
		return err
	}
	_, err := s.Key(ctx, "k", func() ([]byte, error) { return []byte(keyValue), nil })
	return err
}

// found lists the secrets among want that the database files at path hold, as "FILE: SECRET".
// It fails the test unless needle, stored in clear, is found in one of them.
func found(t *testing.T, path, needle string, want ...string) []string {
	t.Helper()
	var hits []string
	seen := false
	for _, f := range []string{path, path + "-wal", path + "-shm"} {
		b, err := os.ReadFile(f)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		seen = seen || bytes.Contains(b, []byte(needle))
		for _, s := range want {
			if bytes.Contains(b, []byte(s)) {
				hits = append(hits, filepath.Base(f)+": "+s)
			}
		}
	}
	if !seen {
		t.Fatalf("%q, stored in clear, is in none of the files: the search is broken", needle)
	}
	return hits
}

// TestNoSecretAtRest: no secret value is found in the database, its WAL or its shared memory,
// neither while the store is open (with every write still in the WAL) nor after Close.
func TestNoSecretAtRest(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "state.db")
	s, err := Open(path, testOpts)
	if err != nil {
		t.Fatal(err)
	}
	walSize := walBytes(t, s) // no checkpoint: every frame written stays in the WAL
	if err := writeSecrets(ctx, s); err != nil {
		t.Fatalf("writeSecrets: %v", err)
	}
	if walSize() == 0 {
		t.Fatal("the WAL is empty: nothing to search")
	}
	if hits := found(t, path+"-wal", visible, allSecrets...); len(hits) > 0 {
		t.Errorf("secrets in the WAL while open:\n%s", strings.Join(hits, "\n"))
	}
	if hits := found(t, path, visible, allSecrets...); len(hits) > 0 {
		t.Errorf("secrets in the database files while open:\n%s", strings.Join(hits, "\n"))
	}
	// Reads give the plaintext back.
	if r, err := s.GetResource(ctx, "s", "R"); err != nil || !strings.Contains(string(r.Outputs), outputSecret) ||
		string(r.Private) != privateState {
		t.Errorf("GetResource = %+v, %v; want the outputs and private state in clear", r, err)
	}
	if cr, err := s.GetCustomRequest(ctx, "req"); err != nil || !strings.Contains(string(cr.Response), responseData) {
		t.Errorf("GetCustomRequest = %+v, %v; want the response in clear", cr, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if hits := found(t, path, visible, allSecrets...); len(hits) > 0 {
		t.Errorf("secrets in the database files after Close:\n%s", strings.Join(hits, "\n"))
	}
}

// TestSealsOlderDatabase opens a database an older cairn wrote in clear: Open seals every
// value, and no plaintext is left in the file or the WAL (the old pages are vacuumed).
func TestSealsOlderDatabase(t *testing.T) {
	for name, leaveWAL := range map[string]bool{"Closed": false, "WALLeftBehind": true} {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			path := filepath.Join(t.TempDir(), "state.db")
			want, err := writeUnsealed(t, path, leaveWAL)
			if err != nil {
				t.Fatal(err)
			}
			if hits := found(t, path, visible, allSecrets...); len(hits) < len(allSecrets) {
				t.Fatalf("the unsealed database holds %d of the %d secrets, want all: the test writes them elsewhere\n%s",
					len(hits), len(allSecrets), strings.Join(hits, "\n"))
			}

			s := open(t, path)
			got, err := read(ctx, s)
			if err != nil {
				t.Fatalf("read after sealing: %v", err)
			}
			if diff := cmp.Diff(want, got, opts); diff != "" {
				t.Errorf("values after sealing: -want +got\n%s", diff)
			}
			if hits := found(t, path, visible, allSecrets...); len(hits) > 0 {
				t.Errorf("plaintext left after sealing at Open:\n%s", strings.Join(hits, "\n"))
			}
			// Every sealed column holds sealed blobs now.
			for _, tb := range state.SealedTables {
				for _, col := range tb.Cols {
					var n int
					q := fmt.Sprintf(`SELECT COUNT(*) FROM %s WHERE %s IS NOT NULL AND substr(%s, 1, 1) != x'CA'`, tb.Table, col, col)
					if err := s.r.QueryRowContext(ctx, q).Scan(&n); err != nil || n > 0 {
						t.Errorf("%s.%s: %d values not sealed (%v)", tb.Table, col, n, err)
					}
				}
			}
		})
	}
}

// writeUnsealed writes secrets into a database at path as cairn did before it sealed them: in
// clear, without the check row. It returns what it wrote, as read reads it. With leaveWAL, the
// writes stay in the WAL, as a killed cairn leaves them.
func writeUnsealed(t *testing.T, path string, leaveWAL bool) (contents, error) {
	ctx := t.Context()
	s := open(t, path)
	if leaveWAL {
		walBytes(t, s)
	}
	if err := writeSecrets(ctx, s); err != nil {
		return contents{}, err
	}
	want, err := read(ctx, s)
	if err != nil {
		return contents{}, err
	}
	err = s.tx(ctx, func(tx *sql.Tx) error {
		for _, tb := range state.SealedTables {
			for _, col := range tb.Cols {
				rows, err := tx.QueryContext(ctx, `SELECT rowid, `+strings.Join(tb.Key, ", ")+`, `+col+` FROM `+tb.Table)
				if err != nil {
					return err
				}
				var ups [][]any
				for rows.Next() {
					var id int64
					var blob []byte
					key := make([]string, len(tb.Key))
					dest := []any{&id}
					for i := range key {
						dest = append(dest, &key[i])
					}
					if err := rows.Scan(append(dest, &blob)...); err != nil {
						return err
					}
					if err := s.open(&blob, tb.Table, col, key...); err != nil {
						return err
					}
					ups = append(ups, []any{blob, id})
				}
				rows.Close()
				for _, u := range ups {
					if _, err := tx.ExecContext(ctx, `UPDATE `+tb.Table+` SET `+col+` = ? WHERE rowid = ?`, u...); err != nil {
						return err
					}
				}
			}
		}
		_, err := tx.ExecContext(ctx, `DELETE FROM keys WHERE name = ?`, state.SecretsCheckKey)
		return err
	})
	if !leaveWAL {
		err = errors.Join(err, s.Close())
	}
	return want, err
}

func TestWrongKeyIsRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	s := open(t, path)
	if err := writeSecrets(t.Context(), s); err != nil {
		t.Fatal(err)
	}
	s.Close()
	other := Options{Keyring: secrets.Generate()}
	if s, err := Open(path, other); err == nil || !strings.Contains(err.Error(), "does not open this database") {
		if s != nil {
			s.Close()
		}
		t.Errorf("Open with another key: %v, want a refusal", err)
	}
	if _, err := Open(path, Options{}); err == nil {
		t.Errorf("Open without a key ring: no error")
	}
}

// TestBlobsAreBoundToTheirRow: a sealed value copied into another row does not open there.
func TestBlobsAreBoundToTheirRow(t *testing.T) {
	ctx := t.Context()
	s := open(t, filepath.Join(t.TempDir(), "state.db"))
	for _, name := range []string{"A", "B"} {
		r := state.Resource{Stack: "s", Name: name, Outputs: []byte(`{"Who":"` + name + `"}`)}
		if _, err := s.Append(ctx, state.JournalEntry{Operation: "op", Stack: "s", Step: "create/" + name}, state.Write{Put: &r}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.w.ExecContext(ctx, `UPDATE resources SET outputs = (SELECT outputs FROM resources WHERE name = 'A') WHERE name = 'B'`); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetResource(ctx, "s", "B"); !errors.Is(err, secrets.ErrAuth) {
		t.Errorf("GetResource of a row given another row's blob: %v, want ErrAuth", err)
	}
	if _, err := s.GetResource(ctx, "s", "A"); err != nil {
		t.Errorf("GetResource of the untouched row: %v", err)
	}
}

// TestReseal: after Reseal with a rotated ring, the new key alone opens everything.
func TestReseal(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "state.db")
	ring := secrets.Generate()
	s, err := Open(path, Options{Keyring: ring, Exclusive: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := writeSecrets(ctx, s); err != nil {
		t.Fatal(err)
	}
	want, err := read(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	next := ring.Rotate()
	n, err := s.Reseal(ctx, next)
	if err != nil {
		t.Fatalf("Reseal: %v", err)
	}
	if n < len(allSecrets) {
		t.Errorf("Reseal re-sealed %d values, want at least %d", n, len(allSecrets))
	}
	if again, err := s.Reseal(ctx, next); err != nil || again != 0 {
		t.Errorf("a second Reseal with the same ring re-sealed %d values (%v), want none", again, err)
	}
	s.Close()
	s, err = Open(path, Options{Keyring: next.PrimaryOnly()})
	if err != nil {
		t.Fatalf("Open with the new key alone: %v", err)
	}
	defer s.Close()
	got, err := read(ctx, s)
	if err != nil {
		t.Fatalf("read with the new key alone: %v", err)
	}
	if diff := cmp.Diff(want, got, opts); diff != "" {
		t.Errorf("values after Reseal: -want +got\n%s", diff)
	}
	if hits := found(t, path, visible, allSecrets...); len(hits) > 0 {
		t.Errorf("plaintext after Reseal:\n%s", strings.Join(hits, "\n"))
	}
}

// TestExclusive: an Exclusive Open fails while another connection has the file open.
func TestExclusive(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	s := open(t, path)
	if _, err := s.GetStack(t.Context(), "none"); !errors.Is(err, state.ErrNotFound) { // open a reader too
		t.Fatal(err)
	}
	if x, err := Open(path, Options{Keyring: testOpts.Keyring, Exclusive: true}); !errors.Is(err, ErrInUse) {
		if x != nil {
			x.Close()
		}
		t.Errorf("Exclusive Open of a file in use: %v, want ErrInUse", err)
	}
	s.Close()
	x, err := Open(path, Options{Keyring: testOpts.Keyring, Exclusive: true})
	if err != nil {
		t.Fatalf("Exclusive Open of a file no one uses: %v", err)
	}
	x.Close()
}
