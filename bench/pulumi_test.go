package bench

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/test/providerbin"
)

// BenchmarkPulumi deploys the same Pulumi YAML program of N resources of the conformance
// `simple` provider 2.0.0 (Pulumi's own language-conformance test provider, unmodified: its
// create returns at once, so what is measured is the engines) with `cairn deploy` and with
// the real `pulumi up`, one after the other in the same run, from the same plugin binaries:
//
//   - cairn: deploy (create), deploy again with nothing changed, delete; SQLite state with
//     its default journal (every step journaled before and after its provider call);
//   - pulumi: `pulumi up` as users run it (a checkpoint after every step), again with nothing
//     changed, `pulumi destroy`; then up and destroy on a fresh stack with
//     PULUMI_SKIP_CHECKPOINTS=true, its checkpoint-free floor (unsafe: a crash loses the run).
//
// Every pulumi command runs with --skip-preview (a plain `pulumi up --yes` previews first and
// is slower): the ratios are lower bounds of what users see; CAIRN_BENCH_PULUMI_PREVIEW=on
// lets pulumi preview first, as `pulumi up --yes` does. Run:
//
//	CAIRN_BENCH_SIZES=100 go test ./bench -run '^$' -bench Pulumi -benchtime 1x -count 3
//	go test ./bench -run '^$' -bench Pulumi -benchtime 1x -count 1 -timeout 2h   # N=1,000
//
// The peer is CAIRN_PULUMI_PEER (the pulumi binary, with pulumi-language-yaml beside it or on
// PATH) or `pulumi` on PATH (../shared/peers/pulumi/build-peer.sh builds both); without it the
// benchmark is skipped. CAIRN_BENCH_PULUMI=off runs cairn alone; CAIRN_BENCH_PULUMI_CAP (default
// 10m) bounds each pulumi command; CAIRN_BENCH_SIZES (default 1000) the sizes;
// CAIRN_BENCH_PARALLELISM (default 0: each tool's own default) both tools' parallelism;
// CAIRN_BENCH_CAIRN and CAIRN_BENCH_CPUPROFILE as for BenchmarkTerraform.
func BenchmarkPulumi(b *testing.B) {
	peer := ""
	if os.Getenv("CAIRN_BENCH_PULUMI") != "off" {
		peer = pulumiPeer(b)
	}
	cairn := buildCairn(b)
	plugins := providerbin.PulumiPlugins(b)
	limit := envDuration(b, "CAIRN_BENCH_PULUMI_CAP", 10*time.Minute)
	par := envInt(b, "CAIRN_BENCH_PARALLELISM", 0)
	sizes := []int{1000}
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
	for _, n := range sizes {
		b.Run(fmt.Sprintf("simple-%d", n), func(b *testing.B) {
			for range b.N {
				benchPulumiOnce(b, peer, cairn, plugins, n, par, limit)
			}
		})
	}
}

// pulumiPeer is the pulumi CLI to compare with, or a skip.
func pulumiPeer(b *testing.B) string {
	bin := os.Getenv("CAIRN_PULUMI_PEER")
	if bin == "" {
		p, err := exec.LookPath("pulumi")
		if err != nil {
			b.Skip("pulumi CLI not found: set CAIRN_PULUMI_PEER or put pulumi on PATH (../shared/peers/pulumi/build-peer.sh builds it), or CAIRN_BENCH_PULUMI=off")
		}
		bin = p
	}
	if _, err := os.Stat(bin); err != nil {
		b.Skipf("CAIRN_PULUMI_PEER: %v", err)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(bin), "pulumi-language-yaml")); err != nil {
		if _, err := exec.LookPath("pulumi-language-yaml"); err != nil {
			b.Skip("pulumi-language-yaml not found beside the pulumi CLI or on PATH: pulumi cannot run YAML programs")
		}
	}
	return bin
}

func benchPulumiOnce(b *testing.B, peer, cairn, plugins string, n, par int, limit time.Duration) {
	prog := pulumiProgram(n)
	home := b.TempDir()
	if err := os.Symlink(plugins, filepath.Join(home, "plugins")); err != nil {
		b.Fatal(err)
	}
	env := append(os.Environ(), "PULUMI_HOME="+home)

	// cairn: deploy, deploy with nothing changed, delete.
	cdir := programDir(b, prog)
	state := filepath.Join(b.TempDir(), "state")
	deploy := []string{"deploy", "-f", cdir, "--stack", "bench", "--dir", state}
	del := []string{"delete", "--stack", "bench", "--dir", state}
	if par > 0 {
		deploy = append(deploy, "--parallelism", strconv.Itoa(par))
		del = append(del, "--parallelism", strconv.Itoa(par))
	}
	c := measure(b, cdir, profiled(env, "pulumi-simple", n, "deploy"), 0, cairn, deploy...)
	if c.err != nil {
		b.Fatalf("cairn deploy: %v\n%s", c.err, c.tail)
	}
	noop := measure(b, cdir, profiled(env, "pulumi-simple", n, "noop"), 0, cairn, deploy...)
	if noop.err != nil {
		b.Fatalf("cairn re-deploy: %v\n%s", noop.err, noop.tail)
	}
	cairnState := dirSize(state)
	cdel := measure(b, cdir, profiled(env, "pulumi-simple", n, "delete"), 0, cairn, del...)
	if cdel.err != nil {
		b.Fatalf("cairn delete: %v\n%s", cdel.err, cdel.tail)
	}
	reportCairn(b, c, noop, cairnState, n)
	reportPhase(b, "cairn-noop", noop)
	reportPhase(b, "cairn-delete", cdel)
	phases := []phase{{"cairn deploy", c}, {"cairn deploy, unchanged", noop}, {"cairn delete", cdel}}
	if peer == "" {
		b.Logf("simple N=%d: state after create: cairn %d B/resource; pulumi not run", n, cairnState/int64(n))
		logPhases(b, phases)
		return
	}

	// pulumi as users run it, then its checkpoint-free floor on a fresh stack.
	backend := b.TempDir()
	penv := pulumiEnv(env, peer, backend)
	pdir := programDir(b, prog)
	pulumiStackInit(b, peer, pdir, penv, "bench")
	up := []string{"up", "--yes", "--non-interactive", "--stack", "bench"}
	destroy := []string{"destroy", "--yes", "--non-interactive", "--stack", "bench"}
	if os.Getenv("CAIRN_BENCH_PULUMI_PREVIEW") != "on" {
		up, destroy = append(up, "--skip-preview"), append(destroy, "--skip-preview")
	}
	if par > 0 {
		up = append(up, "--parallel", strconv.Itoa(par))
		destroy = append(destroy, "--parallel", strconv.Itoa(par))
	}
	p := measure(b, pdir, penv, limit, peer, up...)
	if p.err != nil && !p.capped {
		b.Fatalf("pulumi up: %v\n%s", p.err, p.tail)
	}
	var pnoop, pdel result
	pState, pBackend := pulumiStateSize(b, pdir, penv, peer), treeSize(backend)
	if !p.capped {
		if pnoop = measure(b, pdir, penv, limit, peer, up...); pnoop.err != nil && !pnoop.capped {
			b.Fatalf("pulumi re-up: %v\n%s", pnoop.err, pnoop.tail)
		}
		if pdel = measure(b, pdir, penv, limit, peer, destroy...); pdel.err != nil && !pdel.capped {
			b.Fatalf("pulumi destroy: %v\n%s", pdel.err, pdel.tail)
		}
	}
	fenv := append(pulumiEnv(env, peer, b.TempDir()), "PULUMI_SKIP_CHECKPOINTS=true")
	fdir := programDir(b, prog)
	pulumiStackInit(b, peer, fdir, fenv, "bench")
	floor := measure(b, fdir, fenv, limit, peer, up...)
	if floor.err != nil && !floor.capped {
		b.Fatalf("pulumi up (no checkpoints): %v\n%s", floor.err, floor.tail)
	}
	// The final snapshot is written even without checkpoints: destroy that stack the same way.
	var fdel result
	if !floor.capped {
		if fdel = measure(b, fdir, fenv, limit, peer, destroy...); fdel.err != nil && !fdel.capped {
			b.Fatalf("pulumi destroy (no checkpoints): %v\n%s", fdel.err, fdel.tail)
		}
	}

	reportPhase(b, "pulumi", p)
	reportPhase(b, "pulumi-noop", pnoop)
	reportPhase(b, "pulumi-delete", pdel)
	reportPhase(b, "pulumi-floor", floor)
	reportPhase(b, "pulumi-floor-delete", fdel)
	b.ReportMetric(p.wall.Seconds()/c.wall.Seconds(), "ratio")
	b.ReportMetric(floor.wall.Seconds()/c.wall.Seconds(), "floor-ratio")
	if pnoop.wall > 0 {
		b.ReportMetric(pnoop.wall.Seconds()/noop.wall.Seconds(), "noop-ratio")
	}
	if pdel.wall > 0 {
		b.ReportMetric(pdel.wall.Seconds()/cdel.wall.Seconds(), "delete-ratio")
	}
	if fdel.wall > 0 {
		b.ReportMetric(fdel.wall.Seconds()/cdel.wall.Seconds(), "floor-delete-ratio")
	}
	if pState > 0 {
		b.ReportMetric(float64(pState)/float64(n), "pulumi-state-B/res")
		b.ReportMetric(float64(pBackend)/float64(n), "pulumi-backend-B/res")
	}
	capNote := ""
	if p.capped || floor.capped {
		capNote = fmt.Sprintf(" (pulumi stopped at the %s cap: its figures and ratios are lower bounds)", limit)
	}
	// go test keeps the first 10 lines of a benchmark's log: the summary first.
	b.Logf("simple N=%d: pulumi/cairn wall: up %.1fx, up without checkpoints %.1fx, unchanged %.1fx, destroy %.1fx, destroy without checkpoints %.1fx%s; "+
		"state after create: cairn %d B/resource, pulumi %d B/resource (stack export), %d B/resource (backend directory)",
		n, p.wall.Seconds()/c.wall.Seconds(), floor.wall.Seconds()/c.wall.Seconds(),
		pnoop.wall.Seconds()/noop.wall.Seconds(), pdel.wall.Seconds()/cdel.wall.Seconds(), fdel.wall.Seconds()/cdel.wall.Seconds(), capNote,
		cairnState/int64(n), pState/int64(n), pBackend/int64(n))
	logPhases(b, append(phases, phase{"pulumi up", p}, phase{"pulumi up, unchanged", pnoop}, phase{"pulumi destroy", pdel},
		phase{"pulumi up, no checkpoints", floor}, phase{"pulumi destroy, no checkpoints", fdel}))
}

type phase struct {
	what string
	r    result
}

// reportPhase reports one command's wall time, CPU time (with the plugins it waited for) and
// peak memory of its process tree, as PREFIX-s, PREFIX-cpu-s and PREFIX-peak-MB; nothing for
// a command that did not run.
func reportPhase(b *testing.B, prefix string, r result) {
	if r.wall == 0 {
		return
	}
	b.ReportMetric(r.wall.Seconds(), prefix+"-s")
	b.ReportMetric(r.cpu.Seconds(), prefix+"-cpu-s")
	b.ReportMetric(mb(r.peak), prefix+"-peak-MB")
}

// logPhases logs one line per command, in one call (one log line would be cut at ten).
func logPhases(b *testing.B, phases []phase) {
	var sb strings.Builder
	for _, p := range phases {
		if p.r.wall == 0 {
			fmt.Fprintf(&sb, "\n%-32s not run", p.what)
			continue
		}
		fmt.Fprintf(&sb, "\n%-32s %7.2f s wall %7.2f s cpu %6.0f MB peak", p.what, p.r.wall.Seconds(), p.r.cpu.Seconds(), mb(p.r.peak))
	}
	b.Log(sb.String())
}

// pulumiProgram is n independent resources of the conformance simple provider, each pinned
// to 2.0.0 as the conformance programs do (the provider checks its version). The token is
// written in full (simple:index:Resource), which both engines accept.
func pulumiProgram(n int) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "name: bench-simple-%d\nruntime: yaml\nresources:\n", n)
	for i := range n {
		fmt.Fprintf(&sb, "  r%05d:\n    type: simple:index:Resource\n    properties:\n      value: true\n    options:\n      version: 2.0.0\n", i)
	}
	return sb.String()
}

func programDir(b *testing.B, prog string) string {
	dir := b.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "Pulumi.yaml"), []byte(prog), 0o644); err != nil {
		b.Fatal(err)
	}
	return dir
}

// pulumiEnv is the peer's offline environment (../shared/peers/pulumi/peer-env.sh) with a
// file backend in backend: no update check, no plugin download, plugins only from
// $PULUMI_HOME, and the language host found beside the CLI.
func pulumiEnv(env []string, peer, backend string) []string {
	out := make([]string, 0, len(env)+10)
	for _, kv := range env {
		if !strings.HasPrefix(kv, "PATH=") {
			out = append(out, kv)
		}
	}
	return append(out,
		"PATH="+filepath.Dir(peer)+string(os.PathListSeparator)+os.Getenv("PATH"),
		"PULUMI_BACKEND_URL=file://"+backend,
		"PULUMI_CONFIG_PASSPHRASE=bench",
		"PULUMI_SKIP_UPDATE_CHECK=true",
		"PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION=true",
		"PULUMI_IGNORE_AMBIENT_PLUGINS=true",
		"PULUMI_SKIP_CONFIRMATIONS=true",
		"PULUMI_DIY_BACKEND_NO_LEGACY_WARNING=true",
	)
}

func pulumiStackInit(b *testing.B, peer, dir string, env []string, stack string) {
	if out, err := command(dir, env, peer, "stack", "init", stack, "--non-interactive").CombinedOutput(); err != nil {
		b.Fatalf("pulumi stack init: %v\n%s", err, out)
	}
}

// pulumiStateSize is the size of the stack's state as `pulumi stack export` writes it: the
// checkpoint the file backend rewrites after every step (pulumi-backend-B/res is the whole
// backend directory after the create: the checkpoint, its backup and the update history).
func pulumiStateSize(b *testing.B, dir string, env []string, peer string) int64 {
	out, err := command(dir, env, peer, "stack", "export", "--stack", "bench").Output()
	if err != nil {
		b.Logf("pulumi stack export: %v", err)
		return 0
	}
	return int64(len(out))
}

// treeSize is the size of the files under dir, at any depth.
func treeSize(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}
