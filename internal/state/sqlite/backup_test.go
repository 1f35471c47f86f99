package sqlite

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/state"
)

// TestBackupWhileWriting: a backup taken while another connection appends events is a
// database that opens with the same keys and holds a prefix of what was written, with no
// half-written row.
func TestBackupWhileWriting(t *testing.T) {
	dir := t.TempDir()
	s := open(t, filepath.Join(dir, "state.db"))
	ctx := context.Background()
	if err := s.PutStack(ctx, state.Stack{Name: "web", ID: "id", Status: "CREATE_COMPLETE", Parameters: []byte(`{"p":"secret"}`)}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := s.AppendEvent(ctx, state.Event{Stack: "web", LogicalID: "R", Status: "CREATE_COMPLETE", At: time.Now()}); err != nil {
				t.Error(err)
				return
			}
		}
	})
	time.Sleep(50 * time.Millisecond)
	dst := filepath.Join(dir, "backup", "state.db")
	err := Backup(ctx, filepath.Join(dir, "state.db"), dst)
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatalf("Backup: %v", err)
	}
	b := open(t, dst)
	st, err := b.GetStack(ctx, "web")
	if err != nil || string(st.Parameters) != `{"p":"secret"}` {
		t.Fatalf("the backup's stack: %+v, %v", st, err)
	}
	evs, err := b.ListEvents(ctx, "web", 0, 0)
	if err != nil || len(evs) == 0 {
		t.Fatalf("the backup's events: %d, %v", len(evs), err)
	}
	for i, e := range evs {
		if e.Seq != evs[0].Seq+int64(i) {
			t.Fatalf("the backup's events are not a prefix: seq %d at %d", e.Seq, i)
		}
	}
	if err := Backup(ctx, filepath.Join(dir, "state.db"), dst); err == nil {
		t.Error("Backup over an existing file: want an error")
	}
}
