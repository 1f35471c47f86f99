package engine_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/api"
	"github.com/cairn-dev/cairn/internal/state"
)

// importKillingStore dies (panics, as kill -9 ends a process) at the write that ends an
// import step: before it, or just after it.
type importKillingStore struct {
	state.Store
	after bool
}

func (k *importKillingStore) Append(ctx context.Context, e state.JournalEntry, w ...state.Write) (int64, error) {
	ending := strings.HasPrefix(e.Step, "import/") && e.Phase == state.End
	if ending && !k.after {
		panic(errKilled)
	}
	seq, err := k.Store.Append(ctx, e, w...)
	if ending && err == nil {
		panic(errKilled)
	}
	return seq, err
}

// TestImportKilled: a server killed in the middle of `cairn import` leaves the operation
// running; the next server finishes it as what happened (the object adopted, or nothing), and
// the stack takes the import again (it used to fail "cannot decode operation").
func TestImportKilled(t *testing.T) {
	const tf = `terraform {
  required_providers {
    fake = { source = "example.com/test/fake" }
  }
}
resource "fake_thing" "r" {
  value = "new"
}
`
	for _, after := range []bool{false, true} {
		t.Run(fmt.Sprintf("after=%v", after), func(t *testing.T) {
			h := newHarness(t, nil)
			ctx := context.Background()
			e1 := importEngine(t, &importKillingStore{Store: h.store, after: after}, newImportFake())
			func() {
				defer func() {
					if r := recover(); r != errKilled {
						t.Fatalf("the import was not killed: %v", r)
					}
				}()
				_, err := e1.Import(ctx, "s", api.ImportRequest{Source: api.DeployRequest{Files: map[string]string{"main.tf": tf}},
					Address: "fake_thing.r", ID: "obj-1"})
				t.Fatalf("the import was not killed: %v", err)
			}()
			ops, err := h.store.ListRunningOperations(ctx)
			if err != nil || len(ops) != 1 {
				t.Fatalf("running operations after the kill: %+v, %v; want the import", ops, err)
			}
			e2 := importEngine(t, h.store, newImportFake())
			if err := e2.Resume(ctx); err != nil {
				t.Fatal(err)
			}
			wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
			defer cancel()
			op, err := e2.Wait(wctx, ops[0].ID)
			if err != nil {
				t.Fatal(err)
			}
			want := state.Failed
			if after {
				want = state.Succeeded
			}
			if op.Status != want {
				t.Errorf("resumed import: %s (%s), want %s", op.Status, op.StatusReason, want)
			}
			rows, _ := h.store.ListResources(ctx, "s")
			if len(rows) != map[bool]int{false: 0, true: 1}[after] {
				t.Errorf("stack s holds %d rows after the resumed import", len(rows))
			}
			if !after {
				if _, err := e2.Import(ctx, "s", api.ImportRequest{Source: api.DeployRequest{Files: map[string]string{"main.tf": tf}},
					Address: "fake_thing.r", ID: "obj-1"}); err != nil {
					t.Errorf("import after the interrupted one: %v", err)
				}
			}
		})
	}
}
