package postgres

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/jackc/pgx/v5"

	"github.com/cairn-dev/cairn/internal/secrets"
	"github.com/cairn-dev/cairn/internal/state"
	"github.com/cairn-dev/cairn/internal/state/postgres/pgtest"
	"github.com/cairn-dev/cairn/internal/state/sqlite"
)

// Secret values, each written to another sealed column by writeSecrets (as the SQLite
// backend's test does), and a value stored in clear that shows the search really searches.
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
	envSecret    = "function-env-secret-4d1a"
	visible      = "Custom::VisibleTypeName"
)

var allSecrets = []string{noEchoParam, outputSecret, privateState, responseData, bodySecret, detailSecret, requestArg,
	providerCred, keyValue, envSecret}

// secretStore is what writeSecrets writes to.
type secretStore interface {
	state.Store
	state.Functions
}

// writeSecrets writes each secret where cairn keeps such values.
func writeSecrets(ctx context.Context, s secretStore) error {
	now := time.Now()
	op := state.Operation{ID: "op", Stack: "s", Kind: "deploy", Request: []byte(`{"Password":"` + requestArg + `"}`),
		Owner: "me", LeaseExpires: now.Add(time.Hour), StartedAt: now}
	if err := s.StartOperation(ctx, op); err != nil {
		return err
	}
	st := state.Stack{Name: "s", ID: "id-s", Status: "CREATE_IN_PROGRESS",
		Parameters: []byte(`{"Password":{"value":"` + noEchoParam + `","sensitive":true}}`),
		Outputs:    []byte(`[{"OutputKey":"Token","OutputValue":"` + outputSecret + `"}]`),
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
	if _, err := s.Key(ctx, "k", func() ([]byte, error) { return []byte(keyValue), nil }); err != nil {
		return err
	}
	f := state.Function{Tenant: "team-b", Name: "fn", Kind: "url", URL: "https://h/x", Timeout: time.Second, MemoryMB: 128,
		Concurrency: 1, Env: map[string]string{"TOKEN": envSecret}, CreatedAt: now}
	return s.PutFunction(ctx, f)
}

// contents is what writeSecrets wrote, read back.
type contents struct {
	Stack     state.Stack
	Resources []state.Resource
	Journal   []state.JournalEntry
	Operation state.Operation
	Request   state.CustomRequest
	Key       []byte
	Function  state.Function
}

func read(ctx context.Context, s secretStore) (contents, error) {
	var c contents
	var errs [7]error
	c.Stack, errs[0] = s.GetStack(ctx, "s")
	c.Resources, errs[1] = s.ListResources(ctx, "s")
	c.Journal, errs[2] = s.ListJournal(ctx, "op")
	c.Operation, errs[3] = s.GetOperation(ctx, "op")
	c.Request, errs[4] = s.GetCustomRequest(ctx, "req")
	c.Key, errs[5] = s.Key(ctx, "k", func() ([]byte, error) { return nil, errors.New("key lost") })
	c.Function, errs[6] = s.GetFunction(ctx, "team-b", "fn")
	return c, errors.Join(errs[:]...)
}

// TestNoSecretAtRest: no table holds a secret value in clear, in any column, and every value of
// a sealed column is sealed; reads give the plaintext back.
func TestNoSecretAtRest(t *testing.T) {
	ctx := t.Context()
	s := newStore(t)
	if err := writeSecrets(ctx, s); err != nil {
		t.Fatalf("writeSecrets: %v", err)
	}
	// Every row of every table, as text (bytea in hex, so search the hex of each secret too).
	tables, err := list(ctx, s, func(sc scanner) (string, error) {
		var name string
		return name, sc.Scan(&name)
	}, `SELECT tablename FROM pg_tables WHERE schemaname = current_schema()`)
	if err != nil || len(tables) < 10 {
		t.Fatalf("tables: %v, %v", tables, err)
	}
	var dump strings.Builder
	for _, tb := range tables {
		rows, err := list(ctx, s, func(sc scanner) (string, error) {
			var row string
			return row, sc.Scan(&row)
		}, `SELECT t::text FROM `+pgx.Identifier{tb}.Sanitize()+` t`)
		if err != nil {
			t.Fatalf("dump %s: %v", tb, err)
		}
		dump.WriteString(strings.Join(rows, "\n"))
	}
	text := dump.String()
	if !strings.Contains(text, visible) {
		t.Fatalf("%q, stored in clear, is not in the dump: the search is broken", visible)
	}
	for _, secret := range allSecrets {
		if strings.Contains(text, secret) || strings.Contains(text, hexOf(secret)) {
			t.Errorf("secret %q is stored in clear", secret)
		}
	}
	for _, tb := range state.SealedTables {
		for _, col := range tb.Cols {
			blobs, err := list(ctx, s, func(sc scanner) ([]byte, error) {
				var b []byte
				return b, sc.Scan(&b)
			}, `SELECT `+col+` FROM `+tb.Table+` WHERE `+col+` IS NOT NULL`)
			if err != nil {
				t.Fatal(err)
			}
			for _, b := range blobs {
				if !secrets.IsSealed(b) {
					t.Errorf("%s.%s holds a value that is not sealed: %q", tb.Table, col, b)
				}
			}
		}
	}
	got, err := read(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(got.Resources[0].Outputs), outputSecret) || got.Function.Env["TOKEN"] != envSecret ||
		!strings.Contains(string(got.Request.Response), responseData) {
		t.Errorf("read = %+v; want the secrets in clear", got)
	}
}

func hexOf(s string) string {
	const digits = "0123456789abcdef"
	b := make([]byte, 0, 2*len(s))
	for i := range len(s) {
		b = append(b, digits[s[i]>>4], digits[s[i]&15])
	}
	return string(b)
}

func TestWrongKeyIsRefused(t *testing.T) {
	url := pgtest.Start(t)
	s := open(t, url)
	if err := writeSecrets(t.Context(), s); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if x, err := Open(t.Context(), url, Options{Keyring: secrets.Generate()}); err == nil || !strings.Contains(err.Error(), "does not open this database") {
		if x != nil {
			x.Close()
		}
		t.Errorf("Open with another key: %v, want a refusal", err)
	}
	// The rotated ring holds the database's key: it opens it.
	x, err := Open(t.Context(), url, Options{Keyring: testOpts.Keyring.Rotate()})
	if err != nil {
		t.Fatalf("Open with a ring that holds the key: %v", err)
	}
	x.Close()
}

// TestBlobsAreBoundToTheirRow: a sealed value copied into another row does not open there.
func TestBlobsAreBoundToTheirRow(t *testing.T) {
	ctx := t.Context()
	s := newStore(t)
	for _, name := range []string{"A", "B"} {
		r := state.Resource{Stack: "s", Name: name, Outputs: []byte(`{"Who":"` + name + `"}`)}
		if _, err := s.Append(ctx, state.JournalEntry{Operation: "op", Stack: "s", Step: "create/" + name}, state.Write{Put: &r}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.pool.Exec(ctx, `UPDATE resources SET outputs = (SELECT outputs FROM resources WHERE name = 'A') WHERE name = 'B'`); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetResource(ctx, "s", "B"); !errors.Is(err, secrets.ErrAuth) {
		t.Errorf("GetResource of a row given another row's blob: %v, want ErrAuth", err)
	}
	if _, err := s.GetResource(ctx, "s", "A"); err != nil {
		t.Errorf("GetResource of the untouched row: %v", err)
	}
}

// TestSealedLikeSQLite: blobs sealed by the SQLite backend, copied into the same rows of a
// PostgreSQL database (as `cairn migrate` will), open there, and the rows read back alike: the
// two backends seal the same columns with the same associated data.
func TestSealedLikeSQLite(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "state.db")
	lite, err := sqlite.Open(path, sqlite.Options{Keyring: testOpts.Keyring})
	if err != nil {
		t.Fatal(err)
	}
	defer lite.Close()
	pg := newStore(t)
	for _, s := range []secretStore{lite, pg} {
		if err := writeSecrets(ctx, s); err != nil {
			t.Fatalf("writeSecrets: %v", err)
		}
	}
	want, err := read(ctx, lite)
	if err != nil {
		t.Fatal(err)
	}

	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	copied := 0
	for _, tb := range state.SealedTables {
		rows, err := db.QueryContext(ctx, `SELECT `+strings.Join(tb.Key, ", ")+`, `+strings.Join(tb.Cols, ", ")+` FROM `+tb.Table)
		if err != nil {
			t.Fatalf("read %s from SQLite: %v", tb.Table, err)
		}
		for rows.Next() {
			key := make([]string, len(tb.Key))
			blobs := make([][]byte, len(tb.Cols))
			var dest []any
			for i := range key {
				dest = append(dest, &key[i])
			}
			for i := range blobs {
				dest = append(dest, &blobs[i])
			}
			if err := rows.Scan(dest...); err != nil {
				t.Fatal(err)
			}
			if tb.Table == "keys" && key[0] == state.SecretsCheckKey {
				continue
			}
			for i, col := range tb.Cols {
				where, args := []string{}, []any{blobs[i]}
				for j, k := range tb.Key {
					args = append(args, key[j])
					where = append(where, k+" = $"+strconv.Itoa(len(args)))
				}
				tag, err := pg.pool.Exec(ctx, `UPDATE `+tb.Table+` SET `+col+` = $1 WHERE `+strings.Join(where, " AND "), args...)
				if err != nil || tag.RowsAffected() != 1 {
					t.Fatalf("copy %s.%s of %v: %d rows, %v", tb.Table, col, key, tag.RowsAffected(), err)
				}
				copied++
			}
		}
		if err := rows.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if copied < len(allSecrets) {
		t.Fatalf("copied %d blobs, want at least %d", copied, len(allSecrets))
	}
	got, err := read(ctx, pg)
	if err != nil {
		t.Fatalf("read the copied blobs: %v", err)
	}
	opts := cmp.Options{cmpopts.EquateApproxTime(time.Millisecond), cmpopts.EquateEmpty(),
		cmpopts.IgnoreFields(state.JournalEntry{}, "Seq"), cmpopts.IgnoreFields(state.Stack{}, "CreatedAt"),
		cmpopts.IgnoreFields(state.Resource{}, "UpdatedAt"), cmpopts.IgnoreFields(state.JournalEntry{}, "At"),
		cmpopts.IgnoreFields(state.Operation{}, "LeaseExpires", "StartedAt"),
		cmpopts.IgnoreFields(state.CustomRequest{}, "Expires", "RespondedAt"), cmpopts.IgnoreFields(state.Function{}, "CreatedAt")}
	if diff := cmp.Diff(want, got, opts); diff != "" {
		t.Errorf("PostgreSQL rows with SQLite's blobs: -want +got\n%s", diff)
	}
}
