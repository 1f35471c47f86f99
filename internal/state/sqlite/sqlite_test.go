package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/cairn-dev/cairn/internal/secrets"
	"github.com/cairn-dev/cairn/internal/state"
	"github.com/cairn-dev/cairn/internal/state/statetest"
)

func TestConformance(t *testing.T) {
	statetest.Run(t, func(t *testing.T) state.Store { return open(t, filepath.Join(t.TempDir(), "state.db")) })
}

// testOpts open every store of the tests with one fixed key, so that a child process opens
// what its parent wrote.
var testOpts = Options{Keyring: must(secrets.New(secrets.Key{1, 2, 3}))}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// open opens path and closes it when the test ends.
func open(t testing.TB, path string) *Store {
	t.Helper()
	s, err := Open(path, testOpts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

var opts = cmp.Options{cmpopts.EquateApproxTime(time.Millisecond), cmpopts.EquateEmpty()}

// contents is everything a test writes and reads back across a Close or a kill.
type contents struct {
	Stack     state.Stack
	Resources []state.Resource
	Journal   []state.JournalEntry
	Running   []state.Operation
	Events    []state.Event
	Key       []byte
	Request   state.CustomRequest
}

// fill writes n resource steps and one of everything else, and returns what it wrote.
func fill(ctx context.Context, s state.Store, n int) (contents, error) {
	now := time.Now().UTC()
	c := contents{Stack: state.Stack{Tenant: state.DefaultTenant, Name: "s", ID: "id-s", Status: "CREATE_IN_PROGRESS", Operation: "op", CreatedAt: now},
		Running: []state.Operation{{ID: "op", Stack: "s", Kind: "deploy", Status: state.Running, Owner: "me",
			LeaseExpires: now.Add(time.Hour), StartedAt: now}},
		Key:     []byte("secret"),
		Request: state.CustomRequest{ID: "req", Stack: "s", LogicalID: "R0", Body: []byte(`{}`), Expires: now}}
	if err := s.StartOperation(ctx, c.Running[0]); err != nil {
		return c, err
	}
	if err := s.PutStack(ctx, c.Stack); err != nil {
		return c, err
	}
	if _, err := s.Key(ctx, "k", func() ([]byte, error) { return c.Key, nil }); err != nil {
		return c, err
	}
	if _, _, err := s.PutCustomRequest(ctx, c.Request); err != nil {
		return c, err
	}
	for i := range n {
		r := state.Resource{Stack: "s", Name: fmt.Sprintf("R%04d", i), Type: "T", Props: []byte(`{}`), UpdatedAt: now}
		for _, e := range []state.JournalEntry{
			{Operation: "op", Stack: "s", Step: "create/" + r.Name, Phase: state.Begin, At: now},
			{Operation: "op", Stack: "s", Step: "create/" + r.Name, Phase: state.End, At: now},
		} {
			var writes []state.Write
			if e.Phase == state.End {
				writes = []state.Write{{Put: &r}}
				c.Resources = append(c.Resources, r)
			}
			seq, err := s.Append(ctx, e, writes...)
			if err != nil {
				return c, err
			}
			e.Seq = seq
			c.Journal = append(c.Journal, e)
		}
		ev := state.Event{Stack: "s", Operation: "op", LogicalID: r.Name, Status: "CREATE_COMPLETE", At: now}
		seq, err := s.AppendEvent(ctx, ev)
		if err != nil {
			return c, err
		}
		ev.Seq = seq
		c.Events = append(c.Events, ev)
	}
	return c, nil
}

// read reads back what fill wrote.
func read(ctx context.Context, s state.Store) (contents, error) {
	var c contents
	var errs [7]error
	c.Stack, errs[0] = s.GetStack(ctx, "s")
	c.Resources, errs[1] = s.ListResources(ctx, "s")
	c.Journal, errs[2] = s.ListJournal(ctx, "op")
	c.Running, errs[3] = s.ListRunningOperations(ctx)
	c.Events, errs[4] = s.ListEvents(ctx, "s", 0, 0)
	c.Key, errs[5] = s.Key(ctx, "k", func() ([]byte, error) { return nil, errors.New("key lost") })
	c.Request, errs[6] = s.GetCustomRequest(ctx, "req")
	return c, errors.Join(errs[:]...)
}

func TestReopen(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "nested", "dir", "state.db")
	s, err := Open(path, testOpts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	want, err := fill(ctx, s, 20)
	if err != nil {
		t.Fatalf("fill: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	s = open(t, path)
	if s.Path() != path {
		t.Errorf("Path() = %q, want %q", s.Path(), path)
	}
	got, err := read(ctx, s)
	if err != nil {
		t.Fatalf("read after re-Open: %v", err)
	}
	if diff := cmp.Diff(want, got, opts); diff != "" {
		t.Errorf("after Close and re-Open: -want +got:\n%s", diff)
	}
}

func TestFileModes(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Windows has no Unix file modes")
	}
	dir := filepath.Join(t.TempDir(), "cairn")
	path := filepath.Join(dir, "state.db")
	s := open(t, path)
	if _, err := fill(t.Context(), s, 1); err != nil {
		t.Fatalf("fill: %v", err)
	}
	cases := map[string]struct {
		path string
		want os.FileMode
	}{
		"Dir":  {dir, os.ModeDir | 0o700},
		"File": {path, 0o600},
		"WAL":  {path + "-wal", 0o600}, // SQLite gives its side files the database's mode
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			fi, err := os.Stat(tc.path)
			if err != nil {
				t.Fatalf("Stat: %v", err)
			}
			if fi.Mode() != tc.want {
				t.Errorf("mode of %s = %v, want %v", tc.path, fi.Mode(), tc.want)
			}
		})
	}
}

// TestSurvivesKill writes from a child process that then dies by SIGKILL, without Close:
// everything Append and the others returned for must be there on re-Open.
func TestSurvivesKill(t *testing.T) {
	if path := os.Getenv("CAIRN_SQLITE_KILL_CHILD"); path != "" {
		s, err := Open(path, testOpts)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		if _, err := fill(context.Background(), s, 50); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		p, _ := os.FindProcess(os.Getpid())
		_ = p.Kill()
		select {} // wait for the signal
	}
	path := filepath.Join(t.TempDir(), "state.db")
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestSurvivesKill$")
	cmd.Env = append(os.Environ(), "CAIRN_SQLITE_KILL_CHILD="+path)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() == 2 {
		t.Fatalf("child: got %v, want it killed\n%s", err, out)
	}
	s := open(t, path)
	want, err := fill(t.Context(), open(t, filepath.Join(t.TempDir(), "other.db")), 50)
	if err != nil {
		t.Fatalf("fill: %v", err)
	}
	got, err := read(t.Context(), s)
	if err != nil {
		t.Fatalf("read after kill: %v", err)
	}
	// The child's times differ from ours: compare everything else.
	noTimes := cmpopts.IgnoreTypes(time.Time{})
	if diff := cmp.Diff(want, got, opts, noTimes); diff != "" {
		t.Errorf("after kill -9 and re-Open: -want +got:\n%s", diff)
	}
}

// TestAppendRollsBack makes SQLite itself fail the second write of an Append: the entry and
// the first write must be gone with it.
func TestAppendRollsBack(t *testing.T) {
	ctx := t.Context()
	s := open(t, filepath.Join(t.TempDir(), "state.db"))
	if _, err := s.w.ExecContext(ctx, `CREATE TRIGGER boom BEFORE INSERT ON resources WHEN NEW.name = 'Boom'
		BEGIN SELECT RAISE(ABORT, 'boom'); END`); err != nil {
		t.Fatalf("cannot create trigger: %v", err)
	}
	e := state.JournalEntry{Operation: "op", Stack: "s", Step: "create/Good", Phase: state.End}
	_, err := s.Append(ctx, e, state.Write{Put: &state.Resource{Stack: "s", Name: "Good"}},
		state.Write{Put: &state.Resource{Stack: "s", Name: "Boom"}})
	if err == nil {
		t.Fatal("Append: got no error from the failing trigger")
	}
	j, err := s.ListJournal(ctx, "op")
	if err != nil {
		t.Fatalf("ListJournal: %v", err)
	}
	res, err := s.ListResources(ctx, "s")
	if err != nil {
		t.Fatalf("ListResources: %v", err)
	}
	if len(j) != 0 || len(res) != 0 {
		t.Errorf("after a failed Append: %d journal entries and %d resources, want none", len(j), len(res))
	}
	// The writer is usable afterwards.
	if _, err := s.Append(ctx, e, state.Write{Put: &state.Resource{Stack: "s", Name: "Good"}}); err != nil {
		t.Errorf("Append after a rolled-back one: %v", err)
	}
}

// TestMigrateFromVersion1 opens a file written by the first schema, where stacks kept a copy
// of their running operation.
func TestMigrateFromVersion1(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "state.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatalf("sql.Open: %v", err)
	}
	for _, q := range []string{migrations[0], `CREATE TABLE schema_version (version INTEGER NOT NULL)`,
		`INSERT INTO schema_version VALUES (1)`,
		`INSERT INTO stacks VALUES ('s', 'id', 'cloudformation', 'CREATE_COMPLETE', '', '', NULL, NULL, 'stale', 1000, 2000)`,
		`INSERT INTO operations VALUES ('op', 's', 'deploy', 'running', '', NULL, 'me', 0, 1000, 0)`,
		`INSERT INTO resources VALUES ('s', 'R', 'Custom::X', 'phys', 'CREATE_COMPLETE', '', NULL, NULL, '[]', 'Delete', 1000)`,
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("cannot write a version 1 file: %v", err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	s := open(t, path)
	got, err := s.GetStack(ctx, "s")
	if err != nil {
		t.Fatalf("GetStack: %v", err)
	}
	want := state.Stack{Tenant: state.DefaultTenant, Name: "s", ID: "id", Dialect: "cloudformation", Status: "CREATE_COMPLETE", Operation: "op",
		CreatedAt: time.UnixMilli(1000), UpdatedAt: time.UnixMilli(2000)}
	if diff := cmp.Diff(want, got, opts); diff != "" {
		t.Errorf("GetStack after migrating: -want +got:\n%s", diff)
	}
	// A row written before the protect flag was kept does not say it is unprotected.
	if r, err := s.GetResource(ctx, "s", "R"); err != nil || r.Protect || !r.ProtectUnknown {
		t.Errorf("a resource of a version 1 file: Protect %v, ProtectUnknown %v (%v), want false, true", r.Protect, r.ProtectUnknown, err)
	}
	var v int
	if err := s.r.QueryRowContext(ctx, `SELECT version FROM schema_version`).Scan(&v); err != nil || v != len(migrations) {
		t.Errorf("schema version = %d (%v), want %d", v, err, len(migrations))
	}
}

func TestRefuseNewerSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	s := open(t, path)
	if _, err := s.w.ExecContext(t.Context(), `UPDATE schema_version SET version = 999`); err != nil {
		t.Fatalf("cannot set version: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if s, err := Open(path, testOpts); err == nil {
		s.Close()
		t.Errorf("Open of a file with schema version 999: got no error")
	}
}

// TestPragmas checks the settings every connection must run with.
func TestPragmas(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "state.db"))
	cases := map[string]struct {
		db      *sql.DB
		pragma  string
		want    string
		comment string
	}{
		"WriterWAL":         {s.w, "journal_mode", "wal", "durable and lets reads run beside the writer"},
		"WriterSynchronous": {s.w, "synchronous", "1", "NORMAL: no fsync per commit, safe against a killed process"},
		"WriterBusyTimeout": {s.w, "busy_timeout", "5000", "another process's writer is waited for"},
		"WriterForeignKeys": {s.w, "foreign_keys", "1", ""},
		"WriterSecureDel":   {s.w, "secure_delete", "1", "freed space is zeroed: no overwritten value lingers in the file"},
		"ReaderWAL":         {s.r, "journal_mode", "wal", ""},
		"ReaderBusyTimeout": {s.r, "busy_timeout", "5000", ""},
		"ReaderQueryOnly":   {s.r, "query_only", "1", "writes go through the one writer only"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var got string
			if err := tc.db.QueryRowContext(t.Context(), "PRAGMA "+tc.pragma).Scan(&got); err != nil {
				t.Fatalf("PRAGMA %s: %v", tc.pragma, err)
			}
			if got != tc.want {
				t.Errorf("PRAGMA %s = %s, want %s (%s)", tc.pragma, got, tc.want, tc.comment)
			}
		})
	}
}

func TestAccountsConformance(t *testing.T) {
	statetest.RunAccounts(t, func(t *testing.T) state.Accounts { return open(t, filepath.Join(t.TempDir(), "state.db")) })
}
