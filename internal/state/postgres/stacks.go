package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/cairn-dev/cairn/internal/state"
)

// stackSelect reads stacks with their running operation, found through
// one_running_operation_per_stack.
const stackSelect = `SELECT s.name, s.id, s.dialect, s.status, s.status_reason, s.description, s.parameters, s.outputs,
	COALESCE(o.id, ''), s.created_at, s.updated_at, s.template, s.providers, s.tfstate
	FROM stacks s LEFT JOIN operations o ON o.stack = s.name AND o.status = 'running'`

func scanStack(sc scanner) (state.Stack, error) {
	var st state.Stack
	var key string
	var c, u int64
	err := sc.Scan(&key, &st.ID, &st.Dialect, &st.Status, &st.StatusReason, &st.Description, &st.Parameters,
		&st.Outputs, &st.Operation, &c, &u, &st.Template, &st.Providers, &st.TFState)
	st.Tenant, st.Name = state.SplitStackKey(key)
	st.CreatedAt, st.UpdatedAt = tm(c), tm(u)
	return st, err
}

const putStackQuery = `INSERT INTO stacks
	(name, id, dialect, status, status_reason, description, parameters, outputs, created_at, updated_at, template, providers, tenant, tfstate)
	VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
	ON CONFLICT (name) DO UPDATE SET id = EXCLUDED.id, dialect = EXCLUDED.dialect, status = EXCLUDED.status,
	status_reason = EXCLUDED.status_reason, description = EXCLUDED.description, parameters = EXCLUDED.parameters,
	outputs = EXCLUDED.outputs, created_at = EXCLUDED.created_at, updated_at = EXCLUDED.updated_at,
	template = EXCLUDED.template, providers = EXCLUDED.providers, tfstate = EXCLUDED.tfstate`

// putStackArgs are putStackQuery's arguments for st, its blobs sealed.
func (s *Store) putStackArgs(st state.Stack) []any {
	key := state.StackKey(st.Tenant, st.Name)
	return []any{key, st.ID, st.Dialect, st.Status, st.StatusReason, st.Description,
		s.seal(st.Parameters, "stacks", "parameters", key), s.seal(st.Outputs, "stacks", "outputs", key),
		ms(st.CreatedAt), ms(st.UpdatedAt), s.seal(st.Template, "stacks", "template", key),
		s.seal(st.Providers, "stacks", "providers", key), tenantOf(st.Tenant), st.TFState}
}

// PutStack inserts or replaces the stack's row and announces the change (watch.go).
// Stack.Operation is not stored: it is read from the stack's running operation.
func (s *Store) PutStack(ctx context.Context, st state.Stack) error {
	args := s.putStackArgs(st)
	err := s.batch(ctx, func(b *pgx.Batch) {
		b.Queue(putStackQuery, args...)
		b.Queue(notifyQuery, args[0])
	}, execAll(2))
	if err != nil {
		return fmt.Errorf("cannot put stack %s: %w", st.Name, err)
	}
	return nil
}

// execAll reads n results of a batch whose statements return no rows.
func execAll(n int) func(pgx.BatchResults) error {
	return func(br pgx.BatchResults) error {
		for range n {
			if _, err := br.Exec(); err != nil {
				return err
			}
		}
		return nil
	}
}

func (s *Store) GetStack(ctx context.Context, name string) (state.Stack, error) {
	if badKey(name) {
		return state.Stack{}, fmt.Errorf("cannot get stack %s: %w", name, state.ErrNotFound)
	}
	st, err := scanStack(s.queryRow(ctx, stackSelect+` WHERE s.name = $1`, name))
	if err == nil {
		err = s.openStack(&st)
	}
	if err != nil {
		return state.Stack{}, fmt.Errorf("cannot get stack %s: %w", name, noRow(err))
	}
	return st, nil
}

// StackStatus reads one small column: the large ones are TOASTed out of the row.
func (s *Store) StackStatus(ctx context.Context, name string) (string, error) {
	if badKey(name) {
		return "", fmt.Errorf("cannot get stack %s: %w", name, state.ErrNotFound)
	}
	var status string
	if err := s.queryRow(ctx, `SELECT status FROM stacks WHERE name = $1`, name).Scan(&status); err != nil {
		return "", fmt.Errorf("cannot get stack %s: %w", name, noRow(err))
	}
	return status, nil
}

func (s *Store) ListStacks(ctx context.Context, tenant string) ([]state.Stack, error) {
	out, err := list(ctx, s, scanStack, stackSelect+` WHERE s.tenant = $1 ORDER BY s.name`, tenantOf(tenant))
	if err == nil {
		err = openAll(out, s.openStack)
	}
	if err != nil {
		return nil, fmt.Errorf("cannot list stacks: %w", err)
	}
	return out, nil
}

// DeleteStack removes the stack with its resources, operations (a running one too) and their
// journal, events and custom-resource requests, in one transaction.
func (s *Store) DeleteStack(ctx context.Context, name string) error {
	if badKey(name) {
		return fmt.Errorf("cannot delete stack %s: %w", name, state.ErrNotFound)
	}
	err := s.tx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `DELETE FROM stacks WHERE name = $1`, name)
		if err != nil {
			return err
		}
		if err := affected(tag); err != nil {
			return err
		}
		b := &pgx.Batch{}
		for _, q := range []string{
			`DELETE FROM resources WHERE stack = $1`,
			// By operation, through journal_by_operation: every entry belongs to an operation
			// that StartOperation wrote.
			`DELETE FROM journal WHERE operation IN (SELECT id FROM operations WHERE stack = $1) AND stack = $1`,
			`DELETE FROM operations WHERE stack = $1`,
			`DELETE FROM events WHERE stack = $1`,
			`DELETE FROM custom_requests WHERE stack = $1`,
			notifyQuery,
		} {
			b.Queue(q, name)
		}
		return tx.SendBatch(ctx, b).Close()
	})
	if err != nil {
		return fmt.Errorf("cannot delete stack %s: %w", name, err)
	}
	return nil
}

const resourceCols = `stack, name, type, id, status, status_reason, props, outputs, deps, deletion_policy, updated_at, private, provider, protect`

func scanResource(sc scanner) (state.Resource, error) {
	var r state.Resource
	var deps string
	var u int64
	var protect *bool
	if err := sc.Scan(&r.Stack, &r.Name, &r.Type, &r.ID, &r.Status, &r.StatusReason, &r.Props, &r.Outputs, &deps,
		&r.DeletionPolicy, &u, &r.Private, &r.Provider, &protect); err != nil {
		return r, err
	}
	r.Protect, r.ProtectUnknown = protect != nil && *protect, protect == nil
	r.UpdatedAt = tm(u)
	if err := json.Unmarshal([]byte(deps), &r.Deps); err != nil {
		return r, fmt.Errorf("cannot decode deps of resource %s: %w", r.Name, err)
	}
	return r, nil
}

func (s *Store) ListResources(ctx context.Context, stack string) ([]state.Resource, error) {
	if badKey(stack) {
		return nil, nil
	}
	out, err := list(ctx, s, scanResource, `SELECT `+resourceCols+` FROM resources WHERE stack = $1 ORDER BY name`, stack)
	if err == nil {
		err = openAll(out, s.openResource)
	}
	if err != nil {
		return nil, fmt.Errorf("cannot list resources of stack %s: %w", stack, err)
	}
	return out, nil
}

func (s *Store) GetResource(ctx context.Context, stack, name string) (state.Resource, error) {
	if badKey(stack) {
		return state.Resource{}, fmt.Errorf("cannot get resource %s of stack %s: %w", name, stack, state.ErrNotFound)
	}
	r, err := scanResource(s.queryRow(ctx, `SELECT `+resourceCols+` FROM resources WHERE stack = $1 AND name = $2`,
		stack, name))
	if err == nil {
		err = s.openResource(&r)
	}
	if err != nil {
		return state.Resource{}, fmt.Errorf("cannot get resource %s of stack %s: %w", name, stack, noRow(err))
	}
	return r, nil
}

const (
	journalQuery = `INSERT INTO journal (operation, stack, step, phase, token, failed, detail, at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING seq`
	putResourceQuery = `INSERT INTO resources (` + resourceCols + `)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
		ON CONFLICT (stack, name) DO UPDATE SET type = EXCLUDED.type, id = EXCLUDED.id, status = EXCLUDED.status,
		status_reason = EXCLUDED.status_reason, props = EXCLUDED.props, outputs = EXCLUDED.outputs,
		deps = EXCLUDED.deps, deletion_policy = EXCLUDED.deletion_policy, updated_at = EXCLUDED.updated_at,
		private = EXCLUDED.private, provider = EXCLUDED.provider, protect = EXCLUDED.protect`
	delResourceQuery = `DELETE FROM resources WHERE stack = $1 AND name = $2`
	fenceQuery       = `SELECT cairn_fence($1, $2)`
)

// stmt is one statement of a batch.
type stmt struct {
	sql  string
	args []any
}

// Append writes e and its writes in one pipelined batch, hence one transaction, after
// checking e.Fence in it (cairn_fence). A Put with an empty Resource.Stack is for e.Stack; a
// Put or a Stack for another stack, or a Write that sets not exactly one of Put, Delete and
// Stack, fails the whole Append before anything is sent.
func (s *Store) Append(ctx context.Context, e state.JournalEntry, writes ...state.Write) (int64, error) {
	fail := func(err error) (int64, error) {
		return 0, fmt.Errorf("cannot append journal entry %s %s of operation %s: %w", e.Step, e.Phase, e.Operation, err)
	}
	stmts := make([]stmt, 0, len(writes)+1)
	notify := false
	for i, w := range writes {
		st, err := s.write(e.Stack, w)
		if err != nil {
			return fail(fmt.Errorf("write %d: %w", i, err))
		}
		stmts = append(stmts, st)
		notify = notify || w.Stack != nil
	}
	if notify {
		stmts = append(stmts, stmt{notifyQuery, []any{e.Stack}})
	}
	entry := []any{e.Operation, e.Stack, e.Step, e.Phase, e.Token, e.Failed,
		s.seal(e.Detail, "journal", "detail", e.Operation, e.Stack, e.Step, e.Phase, e.Token), ms(e.At)}
	var seq int64
	err := s.grouped(ctx, func(b *pgx.Batch) {
		if e.Fence != "" {
			b.Queue(fenceQuery, e.Operation, e.Fence)
		}
		b.Queue(journalQuery, entry...)
		for _, st := range stmts {
			b.Queue(st.sql, st.args...)
		}
	}, func(br pgx.BatchResults) error {
		if e.Fence != "" {
			if _, err := br.Exec(); err != nil {
				return fenced(err)
			}
		}
		if err := br.QueryRow().Scan(&seq); err != nil {
			return err
		}
		return execAll(len(stmts))(br)
	})
	if err != nil {
		return fail(err)
	}
	return seq, nil
}

// fenced turns cairn_fence's refusal into an error wrapping state.ErrFenced.
func fenced(err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "CRNF0" {
		return fmt.Errorf("%s: %w", pe.Message, state.ErrFenced)
	}
	return err
}

// write is the statement of one write of an entry of stack.
func (s *Store) write(stack string, w state.Write) (stmt, error) {
	switch r := w.Put; {
	case r != nil && w.Delete != "":
		return stmt{}, fmt.Errorf("cannot both put %s and delete %s", r.Name, w.Delete)
	case w.Stack != nil && (r != nil || w.Delete != ""):
		return stmt{}, errors.New("cannot write a stack row and a resource row in one write")
	case w.Stack != nil:
		if key := state.StackKey(w.Stack.Tenant, w.Stack.Name); key != stack {
			return stmt{}, fmt.Errorf("cannot put stack %q with an entry of stack %q", key, stack)
		}
		return stmt{putStackQuery, s.putStackArgs(*w.Stack)}, nil
	case r != nil:
		if r.Stack != "" && r.Stack != stack {
			return stmt{}, fmt.Errorf("cannot put resource %s of stack %q with an entry of stack %q", r.Name, r.Stack, stack)
		}
		deps, err := json.Marshal(r.Deps)
		if err != nil {
			return stmt{}, fmt.Errorf("cannot encode deps of resource %s: %w", r.Name, err)
		}
		return stmt{putResourceQuery, []any{stack, r.Name, r.Type, r.ID, r.Status, r.StatusReason,
			s.seal(r.Props, "resources", "props", stack, r.Name), s.seal(r.Outputs, "resources", "outputs", stack, r.Name),
			string(deps), r.DeletionPolicy, ms(r.UpdatedAt), s.seal(r.Private, "resources", "private", stack, r.Name),
			r.Provider, protectColumn(*r)}}, nil
	case w.Delete != "":
		return stmt{delResourceQuery, []any{stack, w.Delete}}, nil
	default:
		return stmt{}, errors.New("cannot apply a write with neither Put nor Delete")
	}
}

// protectColumn is a row's protect flag as stored: NULL while it is not known.
func protectColumn(r state.Resource) *bool {
	if r.ProtectUnknown && !r.Protect {
		return nil
	}
	return &r.Protect
}

func scanEntry(sc scanner) (state.JournalEntry, error) {
	var e state.JournalEntry
	var at int64
	err := sc.Scan(&e.Seq, &e.Operation, &e.Stack, &e.Step, &e.Phase, &e.Token, &e.Failed, &e.Detail, &at)
	e.At = tm(at)
	return e, err
}

func (s *Store) ListJournal(ctx context.Context, operation string) ([]state.JournalEntry, error) {
	out, err := list(ctx, s, scanEntry, `SELECT seq, operation, stack, step, phase, token, failed, detail, at
		FROM journal WHERE operation = $1 ORDER BY seq`, operation)
	if err == nil {
		err = openAll(out, s.openEntry)
	}
	if err != nil {
		return nil, fmt.Errorf("cannot list journal of operation %s: %w", operation, err)
	}
	return out, nil
}
