package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

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

// PutStack inserts or replaces the stack's row. Stack.Operation is not stored: it is read
// from the stack's running operation.
func (s *Store) PutStack(ctx context.Context, st state.Stack) error {
	if err := s.putStack(ctx, s.w, st); err != nil {
		return fmt.Errorf("cannot put stack %s: %w", st.Name, err)
	}
	return nil
}

// execer is a database or a transaction.
type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

func (s *Store) putStack(ctx context.Context, db execer, st state.Stack) error {
	key := state.StackKey(st.Tenant, st.Name)
	_, err := db.ExecContext(ctx, `INSERT INTO stacks
		(name, id, dialect, status, status_reason, description, parameters, outputs, created_at, updated_at, template, providers, tenant, tfstate)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (name) DO UPDATE SET id = excluded.id, dialect = excluded.dialect, status = excluded.status,
		status_reason = excluded.status_reason, description = excluded.description, parameters = excluded.parameters,
		outputs = excluded.outputs, created_at = excluded.created_at, updated_at = excluded.updated_at,
		template = excluded.template, providers = excluded.providers, tfstate = excluded.tfstate`,
		key, st.ID, st.Dialect, st.Status, st.StatusReason, st.Description,
		s.seal(st.Parameters, "stacks", "parameters", key), s.seal(st.Outputs, "stacks", "outputs", key),
		ms(st.CreatedAt), ms(st.UpdatedAt), s.seal(st.Template, "stacks", "template", key),
		s.seal(st.Providers, "stacks", "providers", key), tenantOf(st.Tenant), st.TFState)
	return err
}

func (s *Store) GetStack(ctx context.Context, name string) (state.Stack, error) {
	st, err := scanStack(s.r.QueryRowContext(ctx, stackSelect+` WHERE s.name = ?`, name))
	if err == nil {
		err = s.openStack(&st)
	}
	if err != nil {
		return state.Stack{}, fmt.Errorf("cannot get stack %s: %w", name, noRow(err))
	}
	return st, nil
}

// StackStatus reads one column, which the row stores before the large ones.
func (s *Store) StackStatus(ctx context.Context, name string) (string, error) {
	var status string
	if err := s.r.QueryRowContext(ctx, `SELECT status FROM stacks WHERE name = ?`, name).Scan(&status); err != nil {
		return "", fmt.Errorf("cannot get stack %s: %w", name, noRow(err))
	}
	return status, nil
}

func (s *Store) ListStacks(ctx context.Context, tenant string) ([]state.Stack, error) {
	out, err := list(ctx, s.r, scanStack, stackSelect+` WHERE s.tenant = ? ORDER BY s.name`, tenantOf(tenant))
	if err == nil {
		err = openAll(out, s.openStack)
	}
	if err != nil {
		return nil, fmt.Errorf("cannot list stacks: %w", err)
	}
	return out, nil
}

// DeleteStack removes the stack with its resources, operations (a running one too) and their
// journal, events and custom-resource requests.
func (s *Store) DeleteStack(ctx context.Context, name string) error {
	err := s.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM stacks WHERE name = ?`, name)
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		if err != nil {
			return err
		}
		if n == 0 {
			return state.ErrNotFound
		}
		for _, q := range []string{
			`DELETE FROM resources WHERE stack = ?`,
			// By operation, through journal_by_operation: the journal is the biggest table, and
			// every entry belongs to an operation that StartOperation wrote.
			`DELETE FROM journal WHERE operation IN (SELECT id FROM operations WHERE stack = ?1) AND stack = ?1`,
			`DELETE FROM operations WHERE stack = ?`,
			`DELETE FROM events WHERE stack = ?`,
			`DELETE FROM custom_requests WHERE stack = ?`,
		} {
			if _, err := tx.ExecContext(ctx, q, name); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("cannot delete stack %s: %w", name, err)
	}
	return nil
}

// tenantOf names the default tenant explicitly, as rows store it.
func tenantOf(t string) string {
	if t == "" {
		return state.DefaultTenant
	}
	return t
}

const resourceCols = `stack, name, type, id, status, status_reason, props, outputs, deps, deletion_policy, updated_at, private, provider, protect`

func scanResource(sc scanner) (state.Resource, error) {
	var r state.Resource
	var deps string
	var u int64
	var protect sql.NullBool
	if err := sc.Scan(&r.Stack, &r.Name, &r.Type, &r.ID, &r.Status, &r.StatusReason, &r.Props, &r.Outputs, &deps,
		&r.DeletionPolicy, &u, &r.Private, &r.Provider, &protect); err != nil {
		return r, err
	}
	r.Protect, r.ProtectUnknown = protect.Bool, !protect.Valid
	r.UpdatedAt = tm(u)
	if err := json.Unmarshal([]byte(deps), &r.Deps); err != nil {
		return r, fmt.Errorf("cannot decode deps of resource %s: %w", r.Name, err)
	}
	return r, nil
}

func (s *Store) ListResources(ctx context.Context, stack string) ([]state.Resource, error) {
	out, err := list(ctx, s.r, scanResource, `SELECT `+resourceCols+` FROM resources WHERE stack = ? ORDER BY name`, stack)
	if err == nil {
		err = openAll(out, s.openResource)
	}
	if err != nil {
		return nil, fmt.Errorf("cannot list resources of stack %s: %w", stack, err)
	}
	return out, nil
}

func (s *Store) GetResource(ctx context.Context, stack, name string) (state.Resource, error) {
	r, err := scanResource(s.r.QueryRowContext(ctx, `SELECT `+resourceCols+` FROM resources WHERE stack = ? AND name = ?`,
		stack, name))
	if err == nil {
		err = s.openResource(&r)
	}
	if err != nil {
		return state.Resource{}, fmt.Errorf("cannot get resource %s of stack %s: %w", name, stack, noRow(err))
	}
	return r, nil
}

// Append writes e and its writes in one transaction, after checking e.Fence in it. A Put with an empty Resource.Stack is
// for e.Stack; a Put or a Stack for another stack, or a Write that sets not exactly one of
// Put, Delete and Stack, fails the whole Append.
func (s *Store) Append(ctx context.Context, e state.JournalEntry, writes ...state.Write) (int64, error) {
	var seq int64
	err := s.batched(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if e.Fence != "" {
			if err := s.fenced(ctx, tx, e.Operation, e.Fence); err != nil {
				return err
			}
		}
		res, err := tx.StmtContext(ctx, s.st.journal).ExecContext(ctx,
			e.Operation, e.Stack, e.Step, e.Phase, e.Token, e.Failed,
			s.seal(e.Detail, "journal", "detail", e.Operation, e.Stack, e.Step, e.Phase, e.Token), ms(e.At))
		if err != nil {
			return err
		}
		if seq, err = res.LastInsertId(); err != nil {
			return err
		}
		for i, w := range writes {
			if err := s.write(ctx, tx, e.Stack, w); err != nil {
				return fmt.Errorf("write %d: %w", i, err)
			}
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("cannot append journal entry %s %s of operation %s: %w", e.Step, e.Phase, e.Operation, err)
	}
	return seq, nil
}

// fenceQuery reads what fenced checks, through operations_small.
const fenceQuery = `SELECT status, owner FROM operations INDEXED BY operations_small WHERE id = ?`

// fenced returns an error wrapping state.ErrFenced unless operation is running and held by
// owner; in Append's write transaction, so no other engine claims it in between.
func (s *Store) fenced(ctx context.Context, tx *sql.Tx, operation, owner string) error {
	var status, holder string
	err := tx.StmtContext(ctx, s.st.fence).QueryRowContext(ctx, operation).Scan(&status, &holder)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("operation %s does not exist: %w", operation, state.ErrFenced)
	case err != nil:
		return err
	case status != state.Running:
		return fmt.Errorf("operation %s is %s: %w", operation, status, state.ErrFenced)
	case holder != owner:
		return fmt.Errorf("operation %s is held by %s: %w", operation, holder, state.ErrFenced)
	}
	return nil
}

// write applies one resource write of an entry of stack.
func (s *Store) write(ctx context.Context, tx *sql.Tx, stack string, w state.Write) error {
	switch r := w.Put; {
	case r != nil && w.Delete != "":
		return fmt.Errorf("cannot both put %s and delete %s", r.Name, w.Delete)
	case w.Stack != nil && (r != nil || w.Delete != ""):
		return errors.New("cannot write a stack row and a resource row in one write")
	case w.Stack != nil:
		if key := state.StackKey(w.Stack.Tenant, w.Stack.Name); key != stack {
			return fmt.Errorf("cannot put stack %q with an entry of stack %q", key, stack)
		}
		return s.putStack(ctx, tx, *w.Stack)
	case r != nil:
		if r.Stack != "" && r.Stack != stack {
			return fmt.Errorf("cannot put resource %s of stack %q with an entry of stack %q", r.Name, r.Stack, stack)
		}
		deps, err := json.Marshal(r.Deps)
		if err != nil {
			return fmt.Errorf("cannot encode deps of resource %s: %w", r.Name, err)
		}
		_, err = tx.StmtContext(ctx, s.st.putResource).ExecContext(ctx, stack, r.Name, r.Type, r.ID, r.Status,
			r.StatusReason, s.seal(r.Props, "resources", "props", stack, r.Name), s.seal(r.Outputs, "resources", "outputs", stack, r.Name),
			string(deps), r.DeletionPolicy, ms(r.UpdatedAt), s.seal(r.Private, "resources", "private", stack, r.Name), r.Provider, protectColumn(*r))
		return err
	case w.Delete != "":
		_, err := tx.StmtContext(ctx, s.st.delResource).ExecContext(ctx, stack, w.Delete)
		return err
	default:
		return errors.New("cannot apply a write with neither Put nor Delete")
	}
}

func scanEntry(sc scanner) (state.JournalEntry, error) {
	var e state.JournalEntry
	var at int64
	err := sc.Scan(&e.Seq, &e.Operation, &e.Stack, &e.Step, &e.Phase, &e.Token, &e.Failed, &e.Detail, &at)
	e.At = tm(at)
	return e, err
}

func (s *Store) ListJournal(ctx context.Context, operation string) ([]state.JournalEntry, error) {
	out, err := list(ctx, s.r, scanEntry, `SELECT seq, operation, stack, step, phase, token, failed, detail, at
		FROM journal WHERE operation = ? ORDER BY seq`, operation)
	if err == nil {
		err = openAll(out, s.openEntry)
	}
	if err != nil {
		return nil, fmt.Errorf("cannot list journal of operation %s: %w", operation, err)
	}
	return out, nil
}

// protectColumn is a row's protect flag as stored: NULL while it is not known (a row written
// before the flag was kept, and not rewritten since with one).
func protectColumn(r state.Resource) any {
	if r.ProtectUnknown && !r.Protect {
		return nil
	}
	return r.Protect
}
