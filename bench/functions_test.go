package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/cfn"

	"github.com/cairn-dev/cairn/test/providerbin"
)

// BenchmarkPrivateProvider measures the RFS extra hop: the same stack of N cairntest_fast
// resources deployed with the provider as a plugin, and through `cairn provider serve` as a
// private provider's HTTP function — with a fresh provider process per call (what RFS
// recommends) and with --reuse (one configured process per session). Run:
//
//	go test ./bench -run '^$' -bench PrivateProvider -benchtime 1x -count 3
//
// CAIRN_BENCH_PRIVATE_N sets N (default 1000).
func BenchmarkPrivateProvider(b *testing.B) {
	n := envInt(b, "CAIRN_BENCH_PRIVATE_N", 1000)
	cairn := buildCairn(b)
	thing := providerbin.Cairntest(b, 5)
	mirror := providerbin.Mirror(b, providerbin.Package{Source: "registry.terraform.io/cairn-dev/cairntest", Version: "0.1.0", Binary: thing})
	env := append(os.Environ(), "TF_CLI_CONFIG_FILE="+providerbin.CLIConfig(b, mirror))
	for range b.N {
		plugin := deployFast(b, cairn, env, n, "cairn-dev/cairntest", nil)
		fresh := deployFast(b, cairn, env, n, "huawei.com/private-provider/cairntest", func(state string) { register(b, cairn, env, state, thing, false) })
		reuse := deployFast(b, cairn, env, n, "huawei.com/private-provider/cairntest", func(state string) { register(b, cairn, env, state, thing, true) })
		b.ReportMetric(plugin.Seconds(), "plugin-s")
		b.ReportMetric(fresh.Seconds(), "function-s")
		b.ReportMetric(reuse.Seconds(), "function-reuse-s")
		b.ReportMetric(fresh.Seconds()/plugin.Seconds(), "function/plugin")
		b.ReportMetric(reuse.Seconds()/plugin.Seconds(), "reuse/plugin")
		b.Logf("N=%d: plugin %.2fs | HTTP function, fresh process per call %.2fs (%.1fx) | with --reuse %.2fs (%.1fx)",
			n, plugin.Seconds(), fresh.Seconds(), fresh.Seconds()/plugin.Seconds(), reuse.Seconds(), reuse.Seconds()/plugin.Seconds())
	}
}

// deployFast deploys N cairntest_fast from source with a fresh state, after setup(state).
func deployFast(b *testing.B, cairn string, env []string, n int, source string, setup func(state string)) time.Duration {
	var sb strings.Builder
	fmt.Fprintf(&sb, "terraform {\n  required_providers {\n    cairntest = { source = %q, version = \"0.1.0\" }\n  }\n}\n", source)
	for i := range n {
		fmt.Fprintf(&sb, "resource \"cairntest_fast\" \"r%d\" {\n  value = \"v%d\"\n}\n", i, i)
	}
	dir := configDir(b, sb.String())
	state := filepath.Join(b.TempDir(), "state")
	if setup != nil {
		setup(state)
	}
	r := measure(b, dir, env, 0, cairn, "deploy", "--stack", "bench", "--dir", state, "--parallelism", "10")
	if r.err != nil {
		b.Fatalf("deploy from %s: %v\n%s", source, r.err, r.tail)
	}
	return r.wall
}

// register starts `cairn provider serve` for the provider binary and registers it in state
// as private provider cairntest 0.1.0.
func register(b *testing.B, cairn string, env []string, state, binary string, reuse bool) {
	args := []string{"provider", "serve", "--provider", binary, "--listen", "127.0.0.1:0"}
	if reuse {
		args = append(args, "--reuse")
	}
	url := startLine(b, cairn, env, "serving ", args...)
	_, url, _ = strings.Cut(url, " at ")
	url = strings.TrimSuffix(url, "/provider")
	run := func(args ...string) {
		cmd := exec.Command(cairn, append(args, "--dir", state)...)
		cmd.Env = env
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("cairn %v: %v\n%s", args, err, out)
		}
	}
	run("function", "create", "fastfn", "--url", url)
	run("provider", "create", "cairntest", "--version", "0.1.0", "--function-urn",
		"urn:fss:cn-north-4:0123456789abcdef0123456789abcdef:function:default:fastfn:latest")
}

// startLine starts a long-running command and returns the rest of its first stdout line
// starting with prefix; the process is killed when the benchmark ends.
func startLine(b *testing.B, name string, env []string, prefix string, args ...string) string {
	cmd := exec.Command(name, args...)
	cmd.Env = env
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), prefix); ok {
			go func() {
				for sc.Scan() {
				}
			}()
			return rest
		}
	}
	b.Fatalf("%s %v exited before printing %q", name, args, prefix)
	return ""
}

// BenchmarkLambdaFunction measures custom resources served by the same aws-lambda-go
// cfn.LambdaWrap handler two ways: as a `provided` function over the Lambda Runtime API
// (ServiceToken a Lambda ARN), and hosted behind an HTTP ServiceToken. Run:
//
//	go test ./bench -run '^$' -bench LambdaFunction -benchtime 1x -count 3
//
// CAIRN_BENCH_LAMBDA_N sets N (default 200).
func BenchmarkLambdaFunction(b *testing.B) {
	n := envInt(b, "CAIRN_BENCH_LAMBDA_N", 200)
	cairn := buildCairn(b)
	code := b.TempDir()
	build := exec.Command("go", "build", "-o", filepath.Join(code, "bootstrap"), "./test/e2e/testdata/lambdabootstrap")
	build.Dir = providerbin.RepoRoot()
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("build bootstrap: %v\n%s", err, out)
	}
	url := lambdaOverHTTP(b)
	for range b.N {
		state := filepath.Join(b.TempDir(), "state")
		fn := exec.Command(cairn, "function", "create", "greeter", "--code", code, "--runtime", "provided", "--concurrency", "8", "--dir", state)
		if out, err := fn.CombinedOutput(); err != nil {
			b.Fatalf("function create: %v\n%s", err, out)
		}
		viaLambda := deployCustom(b, cairn, state, n, "arn:aws:lambda:us-east-1:123456789012:function:greeter")
		viaHTTP := deployCustom(b, cairn, filepath.Join(b.TempDir(), "state"), n, url)
		b.ReportMetric(viaLambda.Seconds(), "lambda-s")
		b.ReportMetric(viaHTTP.Seconds(), "http-s")
		b.ReportMetric(viaLambda.Seconds()/viaHTTP.Seconds(), "lambda/http")
		b.Logf("N=%d custom resources: Lambda Runtime API function %.2fs | HTTP ServiceToken %.2fs | ratio %.2f",
			n, viaLambda.Seconds(), viaHTTP.Seconds(), viaLambda.Seconds()/viaHTTP.Seconds())
	}
}

func deployCustom(b *testing.B, cairn, state string, n int, token string) time.Duration {
	var sb strings.Builder
	sb.WriteString("Resources:\n")
	for i := range n {
		fmt.Fprintf(&sb, "  R%d:\n    Type: Custom::Greeter\n    Properties:\n      ServiceToken: %s\n      Name: r%d\n", i, token, i)
	}
	dir := b.TempDir()
	path := filepath.Join(dir, "stack.yaml")
	if err := os.WriteFile(path, []byte(sb.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	r := measure(b, dir, os.Environ(), 0, cairn, "deploy", "-f", path, "--stack", "bench", "--dir", state)
	if r.err != nil {
		b.Fatalf("deploy via %s: %v\n%s", token, r.err, r.tail)
	}
	return r.wall
}

// lambdaOverHTTP hosts the bootstrap's handler (the same cfn.LambdaWrap code) behind an HTTP
// ServiceToken in this process; the wrapped handler PUTs its own response, as on Lambda.
func lambdaOverHTTP(b *testing.B) string {
	wrapped := cfn.LambdaWrap(func(_ context.Context, ev cfn.Event) (string, map[string]any, error) {
		if ev.RequestType == cfn.RequestDelete {
			return ev.PhysicalResourceID, nil, nil
		}
		name := fmt.Sprint(ev.ResourceProperties["Name"])
		return name + "-v1", map[string]any{"Greeting": "hello " + name}, nil
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var ev cfn.Event
		if err := json.NewDecoder(r.Body).Decode(&ev); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		w.WriteHeader(http.StatusOK)
		go wrapped(context.Background(), ev)
	})}
	go srv.Serve(ln)
	b.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String()
}
