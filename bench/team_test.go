package bench

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cairn-dev/cairn/api"
	"github.com/cairn-dev/cairn/internal/client"
	"github.com/cairn-dev/cairn/internal/state/postgres/pgtest"
	"github.com/cairn-dev/cairn/test/cluster"
)

// Issue 16's load: 50 stacks of 200 custom resources, deployed at once (CAIRN_BENCH_TEAM_STACKS
// and CAIRN_BENCH_TEAM_RESOURCES change them, for a quick look).
var (
	teamStacks      = 50
	teamPerStack    = 200
	teamParallelism = 0 // each deploy's parallelism; 0: the server's default (64)
)

const teamChain = 10 // R0..R9 read each other's Value in a chain; the rest are independent

// teamResult is what one sub-benchmark measured.
type teamResult struct {
	wall           time.Duration // first deploy request to the last operation's end
	p50, p99, maxL time.Duration // per resource, CREATE_IN_PROGRESS to CREATE_COMPLETE
	rss            []int64       // peak RSS of each replica, bytes
	retries        int64         // deploys sent again (transport error, 5xx, stack busy)
	cpu            teamCPU       // CPU time spent during the deploys
}

func (r teamResult) perSecond() float64 { return float64(teamStacks*teamPerStack) / r.wall.Seconds() }

// cpuPerResource is the CPU time of the processes that do the work (cairn's, PostgreSQL's and
// this one's: load balancer, handler, client) per resource: unlike the wall time, it does
// not grow when other work shares the machine.
func (r teamResult) cpuPerResource() time.Duration {
	return (r.cpu.replicas() + r.cpu.pg + r.cpu.self) / time.Duration(teamStacks*teamPerStack)
}

func (r teamResult) rssSum() int64 {
	var s int64
	for _, v := range r.rss {
		s += v
	}
	return s
}

// BenchmarkTeamLoad runs cairn as a team server (issue 16): 50 stacks of 200 custom resources
// (a chain of 10 and 190 independent, `Custom::Load`, answered at once by a loopback handler
// through the load balancer) deployed at once, concurrently, through test/cluster's load
// balancer, on
//
//   - sqlite-1: one `cairn server` on SQLite;
//   - postgres-1: one replica on PostgreSQL (the cost of the database);
//   - postgres-3: three replicas on one PostgreSQL (the cost of coordination),
//
// each on a fresh cluster (and a fresh PostgreSQL server). Reported: resources/s (10,000 over
// the wall time from the first deploy request to the last operation's end), p50/p99/max of
// each resource's CREATE_IN_PROGRESS to CREATE_COMPLETE (from the stacks' events, read
// through the API afterwards) and each replica's peak RSS. Every process shares the same
// cores: the goals are no collapse, not speed: postgres-3 ≥ 0.5× sqlite-1's throughput and
// p99 < 3 s. The PostgreSQL runs skip without initdb/postgres on PATH (pgtest). Run:
//
//	go test ./bench -run '^$' -bench TeamLoad -benchtime 1x -timeout 60m
//
// Also reported, to explain the figures: the CPU time of cairn, of PostgreSQL, of this
// process and of the rest of the machine during the deploys (and the CPU per resource, which
// other work on a shared machine does not inflate as it does the wall time), each replica's
// /metrics, the PostgreSQL statistics per resource (transactions, scans, rows) and the
// replicas' warnings. The summary sub-benchmark logs the table and the ratios.
//
// CAIRN_BENCH_TEAM_PARALLELISM sets each deploy's parallelism (default: the server's, 64 per
// operation); CAIRN_BENCH_TEAM_STACKS and CAIRN_BENCH_TEAM_RESOURCES the load's size;
// CAIRN_BENCH_TEAM_PERF=DIR records each replica with `perf record -g` during the deploys;
// CAIRN_BENCH_TEAM_PG_QUERY is added to the database URL's query (pool_max_conns=5: each
// replica's pool; the default is 16); CAIRN_BENCH_TEAM_ENV (VAR=value ..., such as
// GOMAXPROCS=1) to every replica's environment.
func BenchmarkTeamLoad(b *testing.B) {
	teamStacks = envInt(b, "CAIRN_BENCH_TEAM_STACKS", 50)
	teamPerStack = envInt(b, "CAIRN_BENCH_TEAM_RESOURCES", 200)
	teamParallelism = envInt(b, "CAIRN_BENCH_TEAM_PARALLELISM", 0)
	cluster.Binary(b) // built once, outside the timings
	results := map[string]teamResult{}
	for _, c := range []struct {
		name     string
		replicas int
		postgres bool
	}{{"sqlite-1", 1, false}, {"postgres-1", 1, true}, {"postgres-3", 3, true}} {
		b.Run(c.name, func(b *testing.B) {
			for range b.N {
				b.StopTimer()
				var db string
				if c.postgres {
					db = pgtest.StartServer(b).NewDatabase(b)
					if q := os.Getenv("CAIRN_BENCH_TEAM_PG_QUERY"); q != "" {
						db += "&" + q // such as pool_max_conns=5
					}
				}
				r := teamLoadOnce(b, c.replicas, db)
				results[c.name] = r
				b.ReportMetric(r.perSecond(), "resources/s")
				b.ReportMetric(msOf(r.p50), "p50-ms")
				b.ReportMetric(msOf(r.p99), "p99-ms")
				b.ReportMetric(msOf(r.maxL), "max-ms")
				for i, v := range r.rss {
					b.ReportMetric(mb(v), fmt.Sprintf("r%d-peak-rss-MB", i))
				}
				b.ReportMetric(mb(r.rssSum()), "peak-rss-MB")
				b.ReportMetric(float64(r.retries), "retries")
				b.ReportMetric(r.cpu.replicas().Seconds(), "cpu-cairn-s")
				b.ReportMetric(r.cpu.pg.Seconds(), "cpu-postgres-s")
				b.ReportMetric(r.cpu.self.Seconds(), "cpu-bench-s")
				b.ReportMetric(msOf(r.cpuPerResource()), "cpu-ms/resource")
			}
		})
	}
	// The table and the ratios, in a sub-benchmark of their own: a parent benchmark's log is
	// printed only under -v.
	b.Run("summary", func(b *testing.B) {
		if len(results) == 0 {
			b.Skip("no run to summarise")
		}
		for range b.N {
			teamSummary(b, results)
		}
	})
}

// teamSummary logs the runs' table and reports the throughput ratios.
func teamSummary(b *testing.B, results map[string]teamResult) {
	var tab strings.Builder
	tab.WriteString("\n| run | wall | resources/s | p50 | p99 | max | peak RSS per process | sum | p99 < 3 s | CPU cairn / PostgreSQL / bench / other | CPU per resource |\n|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, name := range []string{"sqlite-1", "postgres-1", "postgres-3"} {
		r, ok := results[name]
		if !ok {
			continue
		}
		var per []string
		for _, v := range r.rss {
			per = append(per, fmt.Sprintf("%.0f MB", mb(v)))
		}
		fmt.Fprintf(&tab, "| %s | %.2f s | %.0f | %d ms | %d ms | %d ms | %s | %.0f MB | %v | %.1f / %.1f / %.1f / %.1f s | %.2f ms |\n", name, r.wall.Seconds(), r.perSecond(),
			r.p50.Milliseconds(), r.p99.Milliseconds(), r.maxL.Milliseconds(), strings.Join(per, ", "), mb(r.rssSum()), r.p99 < 3*time.Second,
			r.cpu.replicas().Seconds(), r.cpu.pg.Seconds(), r.cpu.self.Seconds(), (r.cpu.machine - r.cpu.replicas() - r.cpu.pg - r.cpu.self).Seconds(),
			msOf(r.cpuPerResource()))
	}
	b.Logf("%d stacks x %d custom resources at once:%s", teamStacks, teamPerStack, tab.String())
	for _, q := range []struct{ num, den, unit, what string }{
		{"postgres-3", "sqlite-1", "pg3/sqlite1", "goal >= 0.5"},
		{"postgres-1", "sqlite-1", "pg1/sqlite1", "the cost of the database"},
		{"postgres-3", "postgres-1", "pg3/pg1", "the cost of coordination"},
	} {
		n, ok1 := results[q.num]
		d, ok2 := results[q.den]
		if !ok1 || !ok2 {
			continue
		}
		v := n.perSecond() / d.perSecond()
		// What the ratio would be on cores of their own: the inverse ratio of CPU per resource.
		byCPU := float64(d.cpuPerResource()) / float64(n.cpuPerResource())
		b.ReportMetric(v, q.unit)
		b.ReportMetric(byCPU, q.unit+"-by-cpu")
		extra := ""
		if q.unit == "pg3/sqlite1" {
			extra = fmt.Sprintf(": met %v", v >= 0.5)
		}
		b.Logf("%s / %s throughput: %.2f (%s%s); by CPU per resource: %.2f", q.num, q.den, v, q.what, extra, byCPU)
	}
}

func msOf(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// teamLoadOnce starts a cluster (SQLite when db is ""), deploys the load and measures it.
func teamLoadOnce(b *testing.B, replicas int, db string) teamResult {
	c := cluster.Start(b, cluster.Config{Replicas: replicas, Database: db, Env: strings.Fields(os.Getenv("CAIRN_BENCH_TEAM_ENV"))})
	h := cluster.NewHandler(b, 0)
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 2 * teamStacks}}
	cl := client.New(c.URL, cluster.Token, hc)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	tmpl := teamTemplate(h.URL)

	var retries atomic.Int64
	ops := make([]api.Operation, teamStacks)
	errs := make([]error, teamStacks)
	var wg sync.WaitGroup
	ready := make(chan struct{})
	for i := range teamStacks {
		wg.Go(func() {
			stack := fmt.Sprintf("load-%02d", i)
			<-ready
			sends := 0
			id, err := cluster.Retried(ctx, cl, stack, func() (api.Operation, error) {
				sends++
				return cl.Deploy(ctx, stack, api.DeployRequest{Template: tmpl, TemplateName: "stack.yaml", Parallelism: teamParallelism})
			})
			retries.Add(int64(max(sends-1, 0)))
			if err == nil {
				ops[i], err = cluster.Wait(ctx, cl, id)
			}
			errs[i] = err
		})
	}
	pgPort := ""
	if u, err := url.Parse(db); err == nil && db != "" {
		pgPort = u.Port()
	}
	stopPerf := teamPerf(b, c)
	var pgBefore map[string]float64
	if db != "" {
		pgBefore = pgStats(ctx, db)
	}
	before := cpuNow(c, pgPort)
	b.StartTimer()
	start := time.Now()
	close(ready)
	wg.Wait()
	seen := time.Now()
	b.StopTimer()
	cpu := cpuNow(c, pgPort).since(before)
	stopPerf()

	var failed []string
	end := start
	for i, op := range ops {
		if errs[i] != nil || op.Status != "succeeded" {
			failed = append(failed, fmt.Sprintf("load-%02d: %v %s %s", i, errs[i], op.Status, op.StatusReason))
			continue
		}
		if op.EndedAt.After(end) {
			end = op.EndedAt
		}
	}
	if len(failed) > 0 {
		b.Fatalf("%d of %d deploys did not succeed:\n%s", len(failed), teamStacks, strings.Join(failed, "\n"))
	}
	if end.Equal(start) { // no end time in the answers: when the client saw the last one end
		end = seen
	}
	res := teamResult{wall: end.Sub(start), retries: retries.Load(), cpu: cpu}
	for _, r := range c.Replicas {
		res.rss = append(res.rss, r.PeakRSS())
	}

	if db != "" {
		// A busy backend reports its statistics at most once a second, an idle one after 10 s.
		time.Sleep(11 * time.Second)
		b.Logf("PostgreSQL, per resource: %s", pgPerResource(pgBefore, pgStats(ctx, db)))
	}

	lat, err := teamLatencies(ctx, cl)
	if err != nil {
		b.Fatal(err)
	}
	if len(lat) != teamStacks*teamPerStack {
		b.Fatalf("%d resources with both CREATE_IN_PROGRESS and CREATE_COMPLETE events, want %d", len(lat), teamStacks*teamPerStack)
	}
	slices.Sort(lat)
	res.p50, res.p99, res.maxL = quantile(lat, 0.50), quantile(lat, 0.99), lat[len(lat)-1]

	rep := h.Report()
	hl := h.Latencies()
	b.Logf("wall %.2fs (client saw the last end %.2fs after the first request); deploys sent again: %d; handler: %d requests, %d duplicate creates, %d lost responses; POST to response taken p50 %v p99 %v",
		res.wall.Seconds(), seen.Sub(start).Seconds(), res.retries, rep.Requests, rep.DuplicateCreates, rep.LostResponses,
		quantile(hl, 0.5).Round(time.Millisecond), quantile(hl, 0.99).Round(time.Millisecond))
	if rep.Requests < teamStacks*teamPerStack || rep.DuplicateCreates > 0 || rep.LostResponses > 0 {
		b.Errorf("handler: %d requests (want %d), %d duplicate creates, %d lost responses", rep.Requests, teamStacks*teamPerStack, rep.DuplicateCreates, rep.LostResponses)
	}
	b.Logf("CPU during the deploys (%.1f s of CPU on %d cores in %.1f s): cairn %s s, PostgreSQL %.1f s, this process (load balancer, handler, client) %.1f s, the rest of the machine %.1f s",
		cpu.machine.Seconds(), runtime.NumCPU(), seen.Sub(start).Seconds(), cpu.perReplica(), cpu.pg.Seconds(), cpu.self.Seconds(),
		(cpu.machine - cpu.replicas() - cpu.pg - cpu.self).Seconds())
	for _, r := range c.Replicas {
		b.Logf("replica %d: peak RSS %.0f MB; %s", r.Index, mb(r.PeakRSS()), replicaMetrics(ctx, r.Port))
		if lines := notable(r.Log()); lines != "" {
			b.Logf("replica %d log, warnings and errors:\n%s", r.Index, lines)
		}
	}
	return res
}

// teamTemplate is 200 Custom::Load resources whose ServiceToken is the handler: a chain of
// ten (each reads the previous one's Value) and 190 independent ones.
func teamTemplate(token string) string {
	var s strings.Builder
	s.WriteString("AWSTemplateFormatVersion: '2010-09-09'\nResources:\n")
	for i := range teamPerStack {
		fmt.Fprintf(&s, "  R%d:\n    Type: Custom::Load\n    Properties:\n      ServiceToken: %s\n      Index: %d\n", i, token, i)
		if i > 0 && i < teamChain {
			fmt.Fprintf(&s, "      Previous: !GetAtt R%d.Value\n", i-1)
		}
	}
	return s.String()
}

// teamLatencies reads every stack's events through the API and returns, for every
// Custom::Load resource, the time from its CREATE_IN_PROGRESS to its CREATE_COMPLETE.
func teamLatencies(ctx context.Context, cl *client.Client) ([]time.Duration, error) {
	var out []time.Duration
	for i := range teamStacks {
		stack := fmt.Sprintf("load-%02d", i)
		began := map[string]time.Time{}
		var after int64
		for {
			evs, err := cl.Events(ctx, stack, after, 0)
			if err != nil {
				return nil, fmt.Errorf("events of %s: %w", stack, err)
			}
			if len(evs) == 0 {
				break
			}
			for _, ev := range evs {
				after = max(after, ev.Seq)
				if ev.Type != "Custom::Load" {
					continue
				}
				switch ev.Status {
				case "CREATE_IN_PROGRESS":
					if _, ok := began[ev.LogicalID]; !ok {
						began[ev.LogicalID] = ev.Timestamp
					}
				case "CREATE_COMPLETE":
					if t, ok := began[ev.LogicalID]; ok {
						out = append(out, ev.Timestamp.Sub(t))
						delete(began, ev.LogicalID)
					}
				}
			}
		}
	}
	return out, nil
}

// quantile of sorted durations (nearest rank), 0 when there are none.
func quantile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted))+0.5) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// replicaMetrics summarises a replica's /metrics: its custom-resource calls (create), the
// response PUTs it took, the deploys and the long polls it answered: count and mean.
func replicaMetrics(ctx context.Context, port string) string {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://127.0.0.1:"+port+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer "+cluster.Token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "metrics: " + err.Error()
	}
	defer resp.Body.Close()
	type agg struct{ sum, count float64 }
	m := map[string]*agg{}
	want := []struct{ key, metric, label string }{
		{"provider create", "cairn_provider_call_duration_seconds", `kind="create"`},
		{"PUT response", "cairn_http_request_duration_seconds", `route="/v1/responses/"`},
		{"POST deploy", "cairn_http_request_duration_seconds", `route="POST /v1/stacks/{name}/deploy"`},
		{"GET operation", "cairn_http_request_duration_seconds", `route="GET /v1/operations/{id}"`},
		{"operation", "cairn_operation_duration_seconds", `kind="deploy"`},
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		for _, w := range want {
			for suffix, isSum := range map[string]bool{"_sum{": true, "_count{": false} {
				if !strings.HasPrefix(line, w.metric+suffix) || !strings.Contains(line, w.label) {
					continue
				}
				f := strings.Fields(line)
				v, err := strconv.ParseFloat(f[len(f)-1], 64)
				if err != nil {
					continue
				}
				a := m[w.key]
				if a == nil {
					a = &agg{}
					m[w.key] = a
				}
				if isSum {
					a.sum += v
				} else {
					a.count += v
				}
			}
		}
	}
	var parts []string
	for _, w := range want {
		if a := m[w.key]; a != nil && a.count > 0 {
			parts = append(parts, fmt.Sprintf("%s %.0f, mean %.0f ms", w.key, a.count, 1000*a.sum/a.count))
		}
	}
	return strings.Join(parts, "; ")
}

// notable is the log lines of a replica that say something went wrong, at most 20.
func notable(log string) string {
	var out []string
	n := 0
	for _, line := range strings.Split(log, "\n") {
		if strings.Contains(line, `"level":"WARN"`) || strings.Contains(line, `"level":"ERROR"`) || strings.Contains(line, "panic") {
			n++
			if len(out) < 20 {
				out = append(out, line)
			}
		}
	}
	if n > len(out) {
		out = append(out, fmt.Sprintf("... and %d more", n-len(out)))
	}
	return strings.Join(out, "\n")
}

// teamCPU is CPU time (user and system) over an interval: each replica's, PostgreSQL's (its
// postmaster and backends), this process's and the whole machine's.
type teamCPU struct {
	replica           []time.Duration
	pg, self, machine time.Duration
}

func (c teamCPU) replicas() time.Duration {
	var s time.Duration
	for _, d := range c.replica {
		s += d
	}
	return s
}

func (c teamCPU) perReplica() string {
	var parts []string
	for _, d := range c.replica {
		parts = append(parts, fmt.Sprintf("%.1f", d.Seconds()))
	}
	return strings.Join(parts, " + ")
}

func (c teamCPU) since(b teamCPU) teamCPU {
	d := teamCPU{pg: c.pg - b.pg, self: c.self - b.self, machine: c.machine - b.machine}
	for i := range c.replica {
		d.replica = append(d.replica, c.replica[i]-b.replica[i])
	}
	return d
}

// cpuNow reads the CPU time so far of the cluster's replicas, of the PostgreSQL server
// listening on pgPort ("" for none), of this process and of the machine (Linux /proc; zeros
// elsewhere).
func cpuNow(c *cluster.Cluster, pgPort string) teamCPU {
	var t teamCPU
	for _, r := range c.Replicas {
		t.replica = append(t.replica, procCPU(r.PID(), false))
	}
	t.self = procCPU(os.Getpid(), false)
	if pgPort != "" {
		t.pg = postgresCPU(pgPort)
	}
	if b, err := os.ReadFile("/proc/stat"); err == nil {
		line, _, _ := strings.Cut(string(b), "\n")
		f := strings.Fields(line) // cpu user nice system idle iowait irq softirq steal ...
		for i, v := range f[1:] {
			if i == 3 || i == 4 || i > 7 { // idle, iowait; guest time is in user already
				continue
			}
			n, _ := strconv.ParseInt(v, 10, 64)
			t.machine += ticks(n)
		}
	}
	return t
}

// ticks converts clock ticks (USER_HZ, 100 on Linux) to a duration.
func ticks(n int64) time.Duration { return time.Duration(n) * 10 * time.Millisecond }

// procStat is the fields of /proc/PID/stat after the command's name: [1] the parent's pid,
// [11] [12] user and system time, [13] [14] those of the children it waited for.
func procStat(pid int) []string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return nil
	}
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return nil
	}
	return strings.Fields(string(b[i+1:]))
}

// procCPU is a process's user and system time, with its waited-for children's when children.
func procCPU(pid int, children bool) time.Duration {
	f := procStat(pid)
	if pid == 0 || len(f) < 15 {
		return 0
	}
	fields := []int{11, 12}
	if children {
		fields = append(fields, 13, 14)
	}
	var sum int64
	for _, i := range fields {
		n, _ := strconv.ParseInt(f[i], 10, 64)
		sum += n
	}
	return ticks(sum)
}

// postgresCPU is the CPU time of the PostgreSQL server listening on port: its postmaster
// (with the backends that ended, which it waited for) and its live processes.
func postgresCPU(port string) time.Duration {
	entries, _ := os.ReadDir("/proc")
	post := 0
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil {
			continue
		}
		args := strings.Split(string(b), "\x00")
		if !strings.HasSuffix(args[0], "postgres") {
			continue
		}
		if i := slices.Index(args, "-p"); i >= 0 && i+1 < len(args) && args[i+1] == port {
			post = pid
			break
		}
	}
	if post == 0 {
		return 0
	}
	sum := procCPU(post, true)
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if f := procStat(pid); len(f) > 1 && f[1] == strconv.Itoa(post) {
			sum += procCPU(pid, false)
		}
	}
	return sum
}

// teamPerf, with CAIRN_BENCH_TEAM_PERF=DIR, records each replica with `perf record -g` during
// the deploys, into DIR/<benchmark>-r<N>.data (`perf report -i FILE`), and returns what stops
// it. Without it, nothing.
func teamPerf(b *testing.B, c *cluster.Cluster) func() {
	dir := os.Getenv("CAIRN_BENCH_TEAM_PERF")
	if dir == "" {
		return func() {}
	}
	var cmds []*exec.Cmd
	for _, r := range c.Replicas {
		out := filepath.Join(dir, fmt.Sprintf("%s-r%d.data", strings.ReplaceAll(b.Name(), "/", "_"), r.Index))
		cmd := exec.Command("perf", "record", "-F", "199", "-g", "-p", strconv.Itoa(r.PID()), "-o", out)
		if err := cmd.Start(); err != nil {
			b.Fatalf("perf: %v", err)
		}
		cmds = append(cmds, cmd)
	}
	time.Sleep(500 * time.Millisecond) // attached
	return func() {
		for _, cmd := range cmds {
			_ = cmd.Process.Signal(os.Interrupt)
			_ = cmd.Wait()
		}
	}
}

// pgStats reads the database's cumulative statistics: transactions and rows of the whole
// database (db.*) and scans and row writes of each table (TABLE.*). Nil when it cannot.
func pgStats(ctx context.Context, db string) map[string]float64 {
	if u, err := url.Parse(db); err == nil { // without the pool's parameters, which a connection refuses
		q := u.Query()
		for k := range q {
			if strings.HasPrefix(k, "pool_") {
				q.Del(k)
			}
		}
		u.RawQuery = q.Encode()
		db = u.String()
	}
	conn, err := pgx.Connect(ctx, db)
	if err != nil {
		return nil
	}
	defer conn.Close(context.Background())
	out := map[string]float64{}
	var commit, rollback, returned, fetched, inserted, updated, deleted int64
	if conn.QueryRow(ctx, `SELECT xact_commit, xact_rollback, tup_returned, tup_fetched, tup_inserted, tup_updated, tup_deleted
		FROM pg_stat_database WHERE datname = current_database()`).Scan(&commit, &rollback, &returned, &fetched, &inserted, &updated, &deleted) == nil {
		for k, v := range map[string]int64{"db.commits": commit, "db.rollbacks": rollback, "db.rows-returned": returned,
			"db.rows-fetched": fetched, "db.rows-inserted": inserted, "db.rows-updated": updated, "db.rows-deleted": deleted} {
			out[k] = float64(v)
		}
	}
	rows, err := conn.Query(ctx, `SELECT relname, COALESCE(seq_scan, 0), COALESCE(seq_tup_read, 0), COALESCE(idx_scan, 0),
		COALESCE(idx_tup_fetch, 0), n_tup_ins, n_tup_upd, n_tup_del FROM pg_stat_user_tables`)
	if err != nil {
		return out
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		var seq, seqRead, idx, idxRead, ins, upd, del int64
		if rows.Scan(&name, &seq, &seqRead, &idx, &idxRead, &ins, &upd, &del) == nil {
			for k, v := range map[string]int64{"seq-scans": seq, "seq-rows": seqRead, "index-scans": idx, "index-rows": idxRead,
				"inserts": ins, "updates": upd, "deletes": del} {
				out[name+"."+k] = float64(v)
			}
		}
	}
	return out
}

// pgPerResource is what grew between two pgStats, per resource deployed: the database's
// figures, then each table's that moved, largest first.
func pgPerResource(before, after map[string]float64) string {
	if after == nil {
		return "statistics unavailable"
	}
	n := float64(teamStacks * teamPerStack)
	type kv struct {
		k string
		v float64
	}
	var db, tables []kv
	for k, v := range after {
		d := (v - before[k]) / n
		if d < 0.05 {
			continue
		}
		if strings.HasPrefix(k, "db.") {
			db = append(db, kv{strings.TrimPrefix(k, "db."), d})
		} else {
			tables = append(tables, kv{k, d})
		}
	}
	slices.SortFunc(db, func(a, b kv) int { return strings.Compare(a.k, b.k) })
	slices.SortFunc(tables, func(a, b kv) int {
		if a.v != b.v {
			return map[bool]int{true: -1, false: 1}[a.v > b.v]
		}
		return strings.Compare(a.k, b.k)
	})
	var parts []string
	for _, e := range append(db, tables...) {
		parts = append(parts, fmt.Sprintf("%s %.2f", e.k, e.v))
	}
	return strings.Join(parts, ", ")
}
