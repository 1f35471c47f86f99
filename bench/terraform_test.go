package bench

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/test/providerbin"
)

// BenchmarkTerraform deploys the same Terraform-language configuration of N resources with
// `cairn deploy` and with `terraform apply`, one after the other in the same run, with the same
// provider binary from the same filesystem mirror and the same -parallelism, and reports both
// and their ratio, for four shapes: cairntest_fast (cairn's own framework provider, nearly free
// per resource), time_static (hashicorp/time), random_id (hashicorp/random 3.9.0, one block
// per resource) and random_id_count (one random_id block with count = N). Run:
//
//	go test ./bench -run '^$' -bench Terraform -benchtime 1x -count 3 -timeout 2h
//
// CAIRN_BENCH_TERRAFORM_CAP (a duration, default 10m) bounds each terraform command: terraform
// does not finish 5,000 resources in 8 minutes on a 2-core machine. A capped run is reported
// with the share of resources terraform had created, and its ratio is a lower bound.
// CAIRN_BENCH_TERRAFORM=off runs cairn alone (for sizes terraform cannot finish);
// CAIRN_BENCH_CAIRN=/path/to/cairn measures that binary instead of this checkout's.
// CAIRN_BENCH_PARALLELISM (default 10, terraform's default) sets both tools' parallelism;
// CAIRN_BENCH_SIZES (default "1000,5000") the sizes; CAIRN_BENCH_SHAPES (default all) the shapes;
// CAIRN_BENCH_CPUPROFILE=DIR writes a CPU profile of each cairn command (deploy, no-op) to DIR.
// Above 10,000 resources cairn runs with CAIRN_MAX_ELEMENTS=-1: the configuration's tokens
// exceed the default limit.
func BenchmarkTerraform(b *testing.B) {
	tf := providerbin.Terraform(b)
	cairn := buildCairn(b)
	mirror := providerbin.Mirror(b,
		providerbin.Package{Source: "registry.terraform.io/cairn-dev/cairntest", Version: "0.1.0", Binary: providerbin.Cairntest(b, 5)},
		providerbin.Package{Source: "registry.terraform.io/hashicorp/time", Version: providerbin.TimeVersion, Binary: providerbin.Time(b)},
		providerbin.RandomRelease.Package(b))
	rc := providerbin.CLIConfig(b, mirror)
	limit := envDuration(b, "CAIRN_BENCH_TERRAFORM_CAP", 10*time.Minute)
	par := envInt(b, "CAIRN_BENCH_PARALLELISM", 10)
	sizes := []int{1000, 5000}
	if s := os.Getenv("CAIRN_BENCH_SIZES"); s != "" {
		sizes = nil
		for _, f := range strings.Split(s, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil {
				b.Fatalf("CAIRN_BENCH_SIZES: %v", err)
			}
			sizes = append(sizes, n)
		}
	}
	shapes := []string{"cairntest_fast", "time_static", "random_id", "random_id_count"}
	if s := os.Getenv("CAIRN_BENCH_SHAPES"); s != "" {
		shapes = strings.Split(s, ",")
	}
	for _, shape := range shapes {
		for _, n := range sizes {
			b.Run(fmt.Sprintf("%s-%d", shape, n), func(b *testing.B) {
				for range b.N {
					benchTerraformOnce(b, tf, cairn, rc, shape, n, par, limit)
				}
			})
		}
	}
}

func benchTerraformOnce(b *testing.B, tf, cairn, rc, shape string, n, par int, limit time.Duration) {
	cfg := terraformConfig(shape, n)
	env := append(os.Environ(), "TF_CLI_CONFIG_FILE="+rc, "CHECKPOINT_DISABLE=1", "TF_IN_AUTOMATION=1")
	pstr := strconv.Itoa(par)

	// cairn: deploy, then deploy again with nothing changed.
	cdir := configDir(b, cfg)
	state := filepath.Join(b.TempDir(), "state")
	deploy := []string{"deploy", "--stack", "bench", "--dir", state, "--parallelism", pstr}
	cenv := env
	if n > 10000 {
		cenv = append(cenv[:len(cenv):len(cenv)], "CAIRN_MAX_ELEMENTS=-1")
	}
	c := measure(b, cdir, profiled(cenv, shape, n, "deploy"), 0, cairn, deploy...)
	if c.err != nil {
		b.Fatalf("cairn deploy: %v\n%s", c.err, c.tail)
	}
	noop := measure(b, cdir, profiled(cenv, shape, n, "noop"), 0, cairn, deploy...)
	if noop.err != nil {
		b.Fatalf("cairn re-deploy: %v\n%s", noop.err, noop.tail)
	}
	cairnState := dirSize(state)
	reportCairn(b, c, noop, cairnState, n)
	if os.Getenv("CAIRN_BENCH_TERRAFORM") == "off" {
		b.Logf("%s N=%d parallelism=%d: cairn %.2fs (cpu %.2fs, peak %.0f MB of which cairn %.0f MB, no-op %.2fs, state %d B/resource); terraform not run",
			shape, n, par, c.wall.Seconds(), c.cpu.Seconds(), mb(c.peak), mb(c.selfPeak), noop.wall.Seconds(), cairnState/int64(n))
		return
	}

	// terraform: init (not timed), apply, then apply again with nothing changed.
	tdir := configDir(b, cfg)
	if out, err := command(tdir, env, tf, "init", "-input=false", "-no-color").CombinedOutput(); err != nil {
		b.Fatalf("terraform init: %v\n%s", err, out)
	}
	apply := []string{"apply", "-auto-approve", "-input=false", "-no-color", "-parallelism=" + pstr}
	t := measure(b, tdir, env, limit, tf, apply...)
	done := tfResources(b, filepath.Join(tdir, "terraform.tfstate"))
	if t.err != nil && !t.capped {
		b.Fatalf("terraform apply: %v\n%s", t.err, t.tail)
	}
	var tnoop result
	if !t.capped {
		if tnoop = measure(b, tdir, env, limit, tf, apply...); tnoop.err != nil && !tnoop.capped {
			b.Fatalf("terraform re-apply: %v\n%s", tnoop.err, tnoop.tail)
		}
	}
	tfState := fileSize(filepath.Join(tdir, "terraform.tfstate"))

	ratio := t.wall.Seconds() / c.wall.Seconds()
	b.ReportMetric(t.wall.Seconds(), "terraform-s")
	b.ReportMetric(ratio, "ratio")
	b.ReportMetric(t.cpu.Seconds(), "terraform-cpu-s")
	b.ReportMetric(mb(t.peak), "terraform-peak-MB")
	if !t.capped {
		b.ReportMetric(tnoop.wall.Seconds(), "terraform-noop-s")
		b.ReportMetric(tnoop.wall.Seconds()/noop.wall.Seconds(), "noop-ratio")
	}
	if done > 0 {
		b.ReportMetric(float64(tfState)/float64(done), "terraform-state-B/res")
	}
	capNote := ""
	if t.capped {
		capNote = fmt.Sprintf(" (terraform stopped at the %s cap with %d/%d created: the ratio is a lower bound)", limit, done, n)
	}
	b.Logf("%s N=%d parallelism=%d: cairn %.2fs (cpu %.2fs, peak %.0f MB of which cairn %.0f MB, no-op %.2fs, state %d B/resource) | terraform %.2fs (cpu %.2fs, peak %.0f MB, no-op %s) | ratio %.1fx%s",
		shape, n, par, c.wall.Seconds(), c.cpu.Seconds(), mb(c.peak), mb(c.selfPeak), noop.wall.Seconds(), cairnState/int64(n),
		t.wall.Seconds(), t.cpu.Seconds(), mb(t.peak), tnoop.String(), ratio, capNote)
}

// reportCairn reports cairn's own figures: wall and CPU time, peak memory of the process tree
// (cairn and its provider plugins) and of cairn alone, the no-op re-deploy, state per resource.
func reportCairn(b *testing.B, c, noop result, state int64, n int) {
	b.ReportMetric(c.wall.Seconds(), "cairn-s")
	b.ReportMetric(c.cpu.Seconds(), "cairn-cpu-s")
	b.ReportMetric(mb(c.peak), "cairn-peak-MB")
	b.ReportMetric(mb(c.selfPeak), "cairn-self-peak-MB")
	b.ReportMetric(noop.wall.Seconds(), "cairn-noop-s")
	b.ReportMetric(float64(state)/float64(n), "cairn-state-B/res")
}

// profiled adds, when CAIRN_BENCH_CPUPROFILE names a directory, where the cairn command
// writes its CPU profile: DIR/SHAPE-N-WHAT-UNIXNANO.pprof (buildCairn then builds cairn with
// -tags cairnprofile; see cmd/cairn/profile_bench.go).
func profiled(env []string, shape string, n int, what string) []string {
	dir := os.Getenv("CAIRN_BENCH_CPUPROFILE")
	if dir == "" {
		return env
	}
	name := fmt.Sprintf("%s-%d-%s-%d.pprof", shape, n, what, time.Now().UnixNano())
	return append(env[:len(env):len(env)], "CAIRN_CPUPROFILE="+filepath.Join(dir, name))
}

func mb(bytes int64) float64 { return float64(bytes) / (1 << 20) }

// terraformConfig is n independent resources of one type from one provider.
func terraformConfig(shape string, n int) string {
	var sb strings.Builder
	switch shape {
	case "cairntest_fast":
		sb.WriteString("terraform {\n  required_providers {\n    cairntest = { source = \"cairn-dev/cairntest\", version = \"0.1.0\" }\n  }\n}\n")
		for i := range n {
			fmt.Fprintf(&sb, "resource \"cairntest_fast\" \"r%d\" {\n  value = \"v%d\"\n}\n", i, i)
		}
	case "time_static":
		fmt.Fprintf(&sb, "terraform {\n  required_providers {\n    time = { source = \"hashicorp/time\", version = %q }\n  }\n}\n", providerbin.TimeVersion)
		for i := range n {
			fmt.Fprintf(&sb, "resource \"time_static\" \"r%d\" {\n  triggers = { i = \"%d\" }\n}\n", i, i)
		}
	case "random_id", "random_id_count":
		fmt.Fprintf(&sb, "terraform {\n  required_providers {\n    random = { source = \"hashicorp/random\", version = %q }\n  }\n}\n", providerbin.RandomRelease.Version)
		if shape == "random_id_count" {
			fmt.Fprintf(&sb, "resource \"random_id\" \"r\" {\n  count       = %d\n  byte_length = 8\n}\n", n)
			break
		}
		for i := range n {
			fmt.Fprintf(&sb, "resource \"random_id\" \"r%d\" {\n  byte_length = 8\n  keepers = { i = \"%d\" }\n}\n", i, i)
		}
	}
	return sb.String()
}

// configDir writes cfg into a new directory, cut at resource boundaries into files of at most
// 1 MiB: the CLI sends no file over 4 MiB (a 100,000-resource main.tf is 5.5 MB).
func configDir(b *testing.B, cfg string) string {
	dir := b.TempDir()
	for i := 0; cfg != ""; i++ {
		part := cfg
		if len(part) > 1<<20 {
			if cut := strings.LastIndex(part[:1<<20], "\nresource "); cut > 0 {
				part = part[:cut+1]
			}
		}
		cfg = cfg[len(part):]
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("main%d.tf", i)), []byte(part), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return dir
}

func command(dir string, env []string, name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Env = dir, env
	return cmd
}

// result is one timed command: wall time, CPU time (user+system of the process and every
// descendant it waited for: the provider plugins), and the peak memory of the process tree.
type result struct {
	wall, cpu time.Duration
	peak      int64 // bytes: the largest sum of RSS over the tree, sampled every 50 ms
	selfPeak  int64 // bytes: the process's own peak RSS (VmHWM), its plugins left out
	capped    bool
	err       error
	tail      string
}

func (r result) String() string {
	if r.wall == 0 {
		return "not run"
	}
	return fmt.Sprintf("%.2fs", r.wall.Seconds())
}

func measure(b *testing.B, dir string, env []string, limit time.Duration, name string, args ...string) result {
	cmd := command(dir, env, name, args...)
	out := &tailBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	start := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	peak := make(chan [2]int64)
	stop := make(chan struct{})
	go func() {
		var max, self int64
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			if rss := treeRSS(cmd.Process.Pid); rss > max {
				max = rss
			}
			if hwm := peakRSS(cmd.Process.Pid); hwm > self {
				self = hwm
			}
			select {
			case <-stop:
				peak <- [2]int64{max, self}
				return
			case <-tick.C:
			}
		}
	}()
	var capped atomic.Bool
	if limit > 0 {
		timer := time.AfterFunc(limit, func() {
			capped.Store(true)
			_ = cmd.Process.Signal(os.Interrupt) // terraform stops gracefully and writes its state
			time.AfterFunc(2*time.Minute, func() { _ = cmd.Process.Kill() })
		})
		defer timer.Stop()
	}
	err := cmd.Wait()
	wall := time.Since(start)
	close(stop)
	peaks := <-peak
	r := result{wall: wall, peak: peaks[0], selfPeak: peaks[1], err: err, capped: capped.Load(), tail: out.String()}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		r.cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		if m := ru.Maxrss * 1024; m > r.peak {
			r.peak = m
		}
	}
	if r.capped {
		r.wall = limit
	}
	return r
}

// treeRSS sums the resident memory of pid and its descendants, from /proc.
func treeRSS(pid int) int64 {
	children := map[int][]int{}
	rss := map[int]int64{}
	ents, _ := os.ReadDir("/proc")
	page := int64(os.Getpagesize())
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ... field 24 is rss in pages; comm may hold spaces.
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) < 22 {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		pages, _ := strconv.ParseInt(f[21], 10, 64)
		children[ppid] = append(children[ppid], p)
		rss[p] = pages * page
	}
	var sum int64
	var walk func(int)
	walk = func(p int) {
		sum += rss[p]
		for _, c := range children[p] {
			walk(c)
		}
	}
	walk(pid)
	return sum
}

// peakRSS is a process's own peak resident memory (VmHWM), 0 once it has exited.
func peakRSS(pid int) int64 {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// tfResources counts the resource instances in a terraform state file.
func tfResources(b *testing.B, path string) int {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	var st struct {
		Resources []struct {
			Instances []json.RawMessage `json:"instances"`
		} `json:"resources"`
	}
	if err := json.Unmarshal(data, &st); err != nil {
		b.Fatalf("terraform state: %v", err)
	}
	n := 0
	for _, r := range st.Resources {
		n += len(r.Instances)
	}
	return n
}

func fileSize(path string) int64 {
	info, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return info.Size()
}

// buildCairn builds cairn from this checkout, or returns CAIRN_BENCH_CAIRN (a cairn binary
// built from another checkout: the same benchmark then measures before and after).
func buildCairn(b *testing.B) string {
	if bin := os.Getenv("CAIRN_BENCH_CAIRN"); bin != "" {
		return bin
	}
	bin := filepath.Join(b.TempDir(), "cairn")
	args := []string{"build", "-o", bin}
	if os.Getenv("CAIRN_BENCH_CPUPROFILE") != "" {
		args = append(args, "-tags", "cairnprofile")
	}
	cmd := exec.Command("go", append(args, "./cmd/cairn")...)
	cmd.Dir = providerbin.RepoRoot()
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func envDuration(b *testing.B, name string, def time.Duration) time.Duration {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		b.Fatalf("%s: %v", name, err)
	}
	return d
}

func envInt(b *testing.B, name string, def int) int {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		b.Fatalf("%s: %v", name, err)
	}
	return n
}

// tailBuffer keeps the last 4 KiB written to it: enough for an error, never a whole log.
type tailBuffer struct{ b []byte }

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if len(t.b) > 4096 {
		t.b = append(t.b[:0], t.b[len(t.b)-4096:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string { return string(t.b) }
