// Package team tests cairn as a team server: several replicas on one PostgreSQL database
// behind a load balancer, with replicas SIGKILLed and the database restarted under load.
package team

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cairn-dev/cairn/api"
	"github.com/cairn-dev/cairn/internal/client"
	"github.com/cairn-dev/cairn/internal/state/postgres/pgtest"
	"github.com/cairn-dev/cairn/test/cluster"
	"github.com/cairn-dev/cairn/test/providerbin"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// cfnStack is a stack of custom resources: a chain of three and a fan of the rest. Replace
// changes every physical id on an update (the handler answers new ones), so cairn deletes the
// old ones: replacements.
func cfnStack(n int, token, replace string) string {
	var b strings.Builder
	b.WriteString("Resources:\n")
	for i := range n {
		fmt.Fprintf(&b, "  R%d:\n    Type: Custom::Step\n    Properties:\n      ServiceToken: %s\n      Replace: %q\n", i, token, replace)
		if i > 0 && i < 3 {
			fmt.Fprintf(&b, "      After: !GetAtt R%d.Value\n", i-1)
		}
	}
	return b.String()
}

// tfStack is a Terraform-language stack of time provider resources; a new trigger replaces them.
func tfStack(n int, trigger string) string {
	return fmt.Sprintf(`terraform {
  required_providers {
    time = { source = "hashicorp/time", version = "%s" }
  }
}
resource "time_static" "t" {
  count    = %d
  triggers = { generation = %q }
}
output "first" { value = time_static.t[0].id }
`, providerbin.TimeVersion, n, trigger)
}

// faults stops a random replica every few seconds, three times in four with SIGKILL and
// otherwise with SIGTERM (a graceful drain), starts it again 1 to 6 seconds later, and restarts
// PostgreSQL once, until stop is closed. It records when each kill happened.
type faults struct {
	mu      sync.Mutex
	kills   []kill // SIGKILLs
	drains  int    // SIGTERMs: the replica drains, handing its operations over
	pgAt    time.Time
	stopped chan struct{}
}

func (f *faults) run(t *testing.T, c *cluster.Cluster, pg *pgtest.Server, every time.Duration, stop <-chan struct{}) {
	defer close(f.stopped)
	rng := rand.New(rand.NewPCG(1, 2))
	pgDone := false
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		case <-time.After(every):
		}
		if i == 2 && !pgDone { // once, the database itself
			pgDone = true
			f.mu.Lock()
			f.pgAt = time.Now()
			f.mu.Unlock()
			if err := pg.Restart(); err != nil {
				t.Errorf("restart PostgreSQL: %v", err)
			}
			continue
		}
		r := c.Replicas[rng.IntN(len(c.Replicas))]
		if i%4 == 3 {
			r.Stop() // SIGTERM: a rolling upgrade's graceful stop
			f.mu.Lock()
			f.drains++
			f.mu.Unlock()
		} else {
			pid := r.PID()
			r.Kill()
			f.mu.Lock()
			f.kills = append(f.kills, kill{time.Now(), pid})
			f.mu.Unlock()
		}
		// Down long enough that the others must take its operations over (they scan every
		// 5 s), or back soon enough to resume them itself.
		time.Sleep(time.Duration(1+rng.IntN(6)) * time.Second)
		if err := r.Start(); err != nil {
			t.Errorf("restart replica %d: %v", r.Index, err)
		}
	}
}

// TestReplicasSurviveKills: three replicas on one PostgreSQL deploy, update (with
// replacements) and delete stacks of custom resources and of a Terraform provider plugin
// while a replica is SIGKILLed every few seconds and PostgreSQL is restarted once. Every
// operation ends as it should, no resource is created twice or left behind, no handler's
// answer is lost, and another replica takes over a killed one's operations within seconds.
func TestReplicasSurviveKills(t *testing.T) {
	if testing.Short() {
		t.Skip("a fault test of a minute or two")
	}
	pg := pgtest.StartServer(t)
	db := pg.NewDatabase(t)
	rc := providerbin.CLIConfig(t, providerbin.Mirror(t,
		providerbin.Package{Source: "registry.terraform.io/hashicorp/time", Version: providerbin.TimeVersion, Binary: providerbin.Time(t)}))
	c := cluster.Start(t, cluster.Config{Replicas: 3, Database: db, Env: []string{"TF_CLI_CONFIG_FILE=" + rc}})
	h := cluster.NewHandler(t, time.Second)
	cl := client.New(c.URL, cluster.Token, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()

	// Leases, read straight from the database: who holds each running operation, to time
	// takeovers.
	owners := watchOwners(ctx, t, db)

	stop := make(chan struct{})
	f := &faults{stopped: make(chan struct{})}
	go f.run(t, c, pg, 2*time.Second, stop)

	const cfnStacks, tfStacks, perStack = 8, 3, 20
	type job struct{ stack, template string }
	phase := func(name string, jobs []job, del bool) (ops int, failed []string) {
		var wg sync.WaitGroup
		var mu sync.Mutex
		for _, j := range jobs {
			wg.Go(func() {
				id, err := cluster.Retried(ctx, cl, j.stack, func() (api.Operation, error) {
					if del {
						return cl.Delete(ctx, j.stack, api.DeleteRequest{})
					}
					return cl.Deploy(ctx, j.stack, deployRequest(j.template))
				})
				var op api.Operation
				if err == nil {
					op, err = cluster.Wait(ctx, cl, id)
				}
				mu.Lock()
				defer mu.Unlock()
				ops++
				if err != nil || op.Status != "succeeded" {
					failed = append(failed, fmt.Sprintf("%s %s: %v %s %s", name, j.stack, err, op.Status, op.StatusReason))
				}
			})
		}
		wg.Wait()
		return ops, failed
	}
	jobsOf := func(generation string) []job {
		var jobs []job
		for i := range cfnStacks {
			jobs = append(jobs, job{fmt.Sprintf("cfn-%d", i), cfnStack(perStack, h.URL, generation)})
		}
		for i := range tfStacks {
			jobs = append(jobs, job{fmt.Sprintf("tf-%d", i), tfStack(perStack, generation)})
		}
		return jobs
	}
	var ops int
	var unfinished []string
	for _, p := range []struct {
		name string
		jobs []job
		del  bool
	}{{"deploy", jobsOf("1"), false}, {"update", jobsOf("2"), false}, {"update", jobsOf("3"), false},
		{"delete", jobsOf("3"), true}} {
		n, failed := phase(p.name, p.jobs, p.del)
		ops += n
		unfinished = append(unfinished, failed...)
	}
	close(stop)
	<-f.stopped
	rep := h.Report()

	// What the replicas' state says: every stack gone, no operation left running.
	var leftover []string
	if stacks, err := cl.Stacks(ctx); err != nil {
		t.Errorf("list stacks: %v", err)
	} else {
		for _, st := range stacks {
			leftover = append(leftover, st.Name+" "+st.Status)
		}
	}
	delays := owners.takeovers(f.kills)
	t.Logf("operations run: %d; replica SIGKILLs: %d; SIGTERM drains: %d; PostgreSQL restarts: 1; handler requests: %d; replacements: %d",
		ops, len(f.kills), f.drains, rep.Requests, rep.Replacements)
	t.Logf("orphans: %d; duplicate creates: %d; lost responses: %d; operations left unfinished: %d; stacks left: %d",
		len(rep.Orphans), rep.DuplicateCreates, rep.LostResponses, len(unfinished), len(leftover))
	t.Logf("takeover delay (kill to another replica holding the operation): %s", summarize(delays))
	if len(unfinished) > 0 {
		t.Errorf("operations that did not succeed:\n%s", strings.Join(unfinished, "\n"))
	}
	if len(rep.Orphans) > 0 || rep.DuplicateCreates > 0 || rep.LostResponses > 0 || len(leftover) > 0 {
		t.Errorf("orphans %v, duplicate creates %d, lost responses %d, stacks left %v", rep.Orphans, rep.DuplicateCreates, rep.LostResponses, leftover)
	}
	if rep.Replacements != 2*cfnStacks*perStack {
		t.Errorf("replacements: %d, want every custom resource replaced twice (%d)", rep.Replacements, 2*cfnStacks*perStack)
	}
	if len(f.kills) == 0 {
		t.Error("no replica was killed: the test ran too fast to prove anything")
	}
}

// deployRequest sends a Terraform configuration as files, a CloudFormation template as one.
func deployRequest(src string) api.DeployRequest {
	if strings.HasPrefix(src, "terraform") {
		return api.DeployRequest{Files: map[string]string{"main.tf": src}}
	}
	return api.DeployRequest{Template: src, TemplateName: "stack.yaml"}
}

// kill is when a replica's process was SIGKILLed, and its pid (which its leases name).
type kill struct {
	at  time.Time
	pid int
}

// owners polls the operations table for who holds each running operation.
type owners struct {
	mu      sync.Mutex
	changes []ownerChange
}

type ownerChange struct {
	op, from, to string
	at           time.Time
}

func watchOwners(ctx context.Context, t *testing.T, db string) *owners {
	o := &owners{}
	go func() {
		held := map[string]string{}
		for ctx.Err() == nil {
			time.Sleep(100 * time.Millisecond)
			conn, err := pgx.Connect(ctx, db)
			if err != nil {
				continue // restarting
			}
			rows, err := conn.Query(ctx, `SELECT id, owner FROM operations WHERE status = 'running'`)
			if err == nil {
				now := time.Now()
				for rows.Next() {
					var id, owner string
					if rows.Scan(&id, &owner) == nil {
						if prev, ok := held[id]; ok && prev != owner {
							o.mu.Lock()
							o.changes = append(o.changes, ownerChange{id, prev, owner, now})
							o.mu.Unlock()
						}
						held[id] = owner
					}
				}
				rows.Close()
			}
			conn.Close(context.Background())
		}
	}()
	return o
}

// takeovers is, for each operation a killed replica held, the time from the kill to another
// engine holding it.
func (o *owners) takeovers(kills []kill) []time.Duration {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []time.Duration
	for _, ch := range o.changes {
		for _, k := range kills {
			if strings.Contains(ch.from, fmt.Sprintf(":%d:", k.pid)) && ch.at.After(k.at) {
				out = append(out, ch.at.Sub(k.at))
				break
			}
		}
	}
	return out
}

func summarize(ds []time.Duration) string {
	if len(ds) == 0 {
		return "none observed"
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return fmt.Sprintf("%d takeovers, median %v, max %v", len(ds), ds[len(ds)/2].Round(10*time.Millisecond), ds[len(ds)-1].Round(10*time.Millisecond))
}
