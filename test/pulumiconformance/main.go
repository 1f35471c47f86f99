// Command pulumiconformance runs Pulumi's YAML language-conformance programs through cairn and
// judges each run with the suite's own assertions, applied to the state cairn exports.
//
//	go run ./test/pulumiconformance -cairn BIN -check CHECK PROJECTS_DIR [TEST...]
//
// PROJECTS_DIR holds the programs (pulumi-yaml's cmd/pulumi-language-yaml/testdata/projects:
// one directory per test, 0/ 1/ … for tests of several runs); CHECK is the peer's `check`
// (../shared/peers/pulumi/conformance-providers/check), which applies
// pulumi-test-language/tests to a `pulumi stack export`-format state; PULUMI_HOME must hold
// the conformance providers. For each run it writes the run's config to Pulumi.test.yaml
// (secrets sealed with the passphrase, as `pulumi config set --secret` does), runs
// `cairn deploy`, then `cairn state pull` for the state, and counts the run's resource changes
// from `cairn events` the way `pulumi stack history` reports them, and turns the same events
// into the engine event log `pulumi up --event-log` writes (events.go), which assertions such
// as the order of replacement steps read. It prints one line a run and a summary; work files
// stay in -work.
package main

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/cairn-dev/cairn/internal/pulumistate"
)

const passphrase = "conformance"

func main() {
	cairn := flag.String("cairn", "cairn", "the cairn binary")
	check := flag.String("check", "check", "the conformance checker")
	work := flag.String("work", filepath.Join(os.TempDir(), "cairn-pulumi-conformance"), "work directory")
	flag.Parse()
	if flag.NArg() < 1 {
		fmt.Fprintln(os.Stderr, "usage: pulumiconformance [-cairn BIN] [-check BIN] [-work DIR] PROJECTS_DIR [TEST...]")
		os.Exit(2)
	}
	projects := flag.Arg(0)
	tests := flag.Args()[1:]
	if len(tests) == 0 {
		ents, err := os.ReadDir(projects)
		must(err)
		for _, e := range ents {
			if e.IsDir() {
				tests = append(tests, e.Name())
			}
		}
	}
	r := runner{cairn: *cairn, check: *check, work: *work, projects: projects}
	counts := map[string]int{}
	for _, t := range tests {
		for _, line := range r.test(t) {
			fmt.Println(line)
			counts[strings.Fields(line)[2]]++
		}
	}
	fmt.Printf("== %d PASS, %d FAIL, %d ERROR, %d SKIP, %d NOTEST\n", counts["PASS"], counts["FAIL"], counts["ERROR"], counts["SKIP"], counts["NOTEST"])
}

type runner struct {
	cairn, check, work, projects string
}

// test runs every run of test t and returns a line for each: "<test> <run> <VERDICT> (...)".
func (r runner) test(t string) []string {
	out, err := exec.Command(r.check, "runs", t).Output()
	if err != nil {
		return []string{t + " - NOTEST"}
	}
	runs, _ := strconv.Atoi(strings.TrimSpace(string(out)))
	w := filepath.Join(r.work, t)
	must(os.RemoveAll(w))
	prog := filepath.Join(w, "prog")
	must(os.MkdirAll(prog, 0o755))
	env := append(os.Environ(), "CAIRN_DIR="+filepath.Join(w, "state"), "PULUMI_CONFIG_PASSPHRASE="+passphrase, "NO_COLOR=1")
	var lines []string
	seen := map[string]bool{}   // resources (and providers) some run made
	urns := map[string]string{} // logical name → URN, from the states of the runs so far
	for i := range runs {
		src := filepath.Join(r.projects, t)
		if st, err := os.Stat(filepath.Join(src, strconv.Itoa(i))); err == nil && st.IsDir() {
			src = filepath.Join(src, strconv.Itoa(i))
		}
		ents, _ := os.ReadDir(prog)
		for _, e := range ents {
			must(os.RemoveAll(filepath.Join(prog, e.Name())))
		}
		must(os.CopyFS(prog, os.DirFS(src)))
		for j := range runs {
			_ = os.RemoveAll(filepath.Join(prog, strconv.Itoa(j)))
		}
		if err := r.config(t, i, prog); err != nil {
			lines = append(lines, fmt.Sprintf("%s %d ERROR (config: %v)", t, i, err))
			continue
		}
		deploy := exec.Command(r.cairn, "deploy", "-f", prog, "--stack", "test", "--yes", "-o", "json")
		deploy.Env = env
		logf := filepath.Join(w, fmt.Sprintf("deploy-%d.log", i))
		var dout bytes.Buffer
		deploy.Stdout = &dout
		f, err := os.Create(logf)
		must(err)
		deploy.Stderr = f
		rc := 0
		if err := deploy.Run(); err != nil {
			rc = 1
			if ee, ok := err.(*exec.ExitError); ok {
				rc = ee.ExitCode()
			}
		}
		_, _ = f.Write(dout.Bytes())
		f.Close()
		statef := filepath.Join(w, fmt.Sprintf("state-%d.json", i))
		pull := exec.Command(r.cairn, "state", "pull", "--stack", "test", "--out", statef)
		pull.Env = env
		if b, err := pull.CombinedOutput(); err != nil {
			if !bytes.Contains(b, []byte("does not exist")) {
				lines = append(lines, fmt.Sprintf("%s %d ERROR (deploy exit %d; state pull: %s)", t, i, rc, firstLine(b)))
				continue
			}
			// A deploy refused before the stack existed: pulumi's stack (made by `pulumi stack
			// init`) is then empty.
			must(os.WriteFile(statef, []byte(`{"version":3,"deployment":{"manifest":{"time":"0001-01-01T00:00:00Z","magic":"","version":""}}}`), 0o644))
		}
		evs, final, err := r.runEvents(env, dout.Bytes(), statef)
		if err != nil {
			lines = append(lines, fmt.Sprintf("%s %d ERROR (deploy exit %d; events: %v)", t, i, rc, err))
			continue
		}
		for _, res := range final {
			urns[res.name()] = res.URN
		}
		eventsf := filepath.Join(w, fmt.Sprintf("events-%d.jsonl", i))
		must(os.WriteFile(eventsf, eventLog(evs, "test", final, urns, seen), 0o644))
		changes, err := changesOf(evs, final, seen)
		if err != nil {
			lines = append(lines, fmt.Sprintf("%s %d ERROR (deploy exit %d; changes: %v)", t, i, rc, err))
			continue
		}
		changesf := filepath.Join(w, fmt.Sprintf("changes-%d.json", i))
		must(os.WriteFile(changesf, changes, 0o644))
		as := exec.Command(r.check, "assert", t, strconv.Itoa(i), statef, changesf, strconv.Itoa(rc), prog, eventsf)
		as.Env = env
		b, _ := as.CombinedOutput()
		must(os.WriteFile(filepath.Join(w, fmt.Sprintf("assert-%d.log", i)), b, 0o644))
		verdict := lastLine(b)
		switch {
		case verdict == "PASS" || verdict == "FAIL" || strings.HasPrefix(verdict, "SKIP"):
		default:
			verdict = "ERROR"
		}
		lines = append(lines, fmt.Sprintf("%s %d %s (deploy exit %d)", t, i, strings.Fields(verdict)[0], rc))
	}
	return lines
}

// config writes the run's config (check config) to Pulumi.test.yaml, secrets sealed with
// the passphrase under a fresh encryptionsalt, as `pulumi config set --secret` does. (The
// peer's conformance-run.sh sets them as given, in base64, so pulumi fails those tests there.)
func (r runner) config(t string, i int, prog string) error {
	out, err := exec.Command(r.check, "config", t, strconv.Itoa(i)).Output()
	if err != nil {
		return err
	}
	var b strings.Builder
	var crypter *pulumistate.Crypter
	salt := ""
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), "\t", 3)
		if len(parts) != 3 {
			continue
		}
		if b.Len() == 0 {
			b.WriteString("config:\n")
		}
		v := parts[2]
		if parts[1] == "true" {
			// The suite's secure values are the plaintext in base64: its own engine opens them
			// with a base64 crypter (pulumi-test-language/tests: `"this is a secret" in base64`).
			plain, err := base64.StdEncoding.DecodeString(v)
			if err != nil {
				return fmt.Errorf("%s: the suite's secure value is not base64: %w", parts[0], err)
			}
			v = string(plain)
			if crypter == nil {
				s, c, err := pulumistate.NewSalt(passphrase)
				if err != nil {
					return err
				}
				salt, crypter = s, c
			}
			sealed, err := crypter.Seal(v)
			if err != nil {
				return err
			}
			fmt.Fprintf(&b, "  %s:\n    secure: %s\n", strconv.Quote(parts[0]), strconv.Quote(sealed))
			continue
		}
		fmt.Fprintf(&b, "  %s: %s\n", strconv.Quote(parts[0]), strconv.Quote(v))
	}
	if b.Len() == 0 {
		return nil
	}
	if salt != "" {
		b.WriteString("encryptionsalt: " + strconv.Quote(salt) + "\n")
	}
	return os.WriteFile(filepath.Join(prog, "Pulumi.test.yaml"), []byte(b.String()), 0o644)
}

// runEvents reads the events of the run's operation (the deploy's, or the newest) from
// `cairn events`, and the resources of the state the run left.
func (r runner) runEvents(env []string, deployOut []byte, statef string) ([]cairnEvent, []stateResource, error) {
	var dep struct {
		Operation struct{ ID string } `json:"operation"`
	}
	_ = json.Unmarshal(deployOut, &dep)
	ev := exec.Command(r.cairn, "events", "--stack", "test", "-o", "json")
	ev.Env = env
	var events []cairnEvent
	if out, err := ev.Output(); err == nil { // no stack, no events
		if err := json.Unmarshal(out, &events); err != nil {
			return nil, nil, err
		}
	}
	op := dep.Operation.ID
	if op == "" && len(events) > 0 {
		op = events[len(events)-1].Operation
	}
	var run []cairnEvent
	for _, e := range events {
		if e.Operation == op {
			run = append(run, e)
		}
	}
	raw, err := os.ReadFile(statef)
	if err != nil {
		return nil, nil, err
	}
	var st struct {
		Deployment struct {
			Resources []stateResource `json:"resources"`
		} `json:"deployment"`
	}
	if err := json.Unmarshal(raw, &st); err != nil {
		return nil, nil, err
	}
	return run, st.Deployment.Resources, nil
}

// changesOf counts the run's steps as `pulumi stack history` reports them (resourceChanges):
// every resource of the state or of the run's events once, by what the run did to it; the
// stack and its providers are created by the first run that has them and the same after.
func changesOf(events []cairnEvent, final []stateResource, seen map[string]bool) ([]byte, error) {
	did := map[string]map[string]bool{} // logical id → statuses of the run
	for _, e := range events {
		if did[e.LogicalID] == nil {
			did[e.LogicalID] = map[string]bool{}
		}
		did[e.LogicalID][e.Status] = true
		if e.Status == "UPDATE_IN_PROGRESS" && e.Reason == createFirstReason {
			did[e.LogicalID]["REPLACED"] = true // a new copy made first: a replacement
		}
	}
	counts := map[string]int{}
	inState := map[string]bool{}
	for _, res := range final {
		name := res.name()
		key := res.Type + "::" + name
		inState[name] = true
		s := did[name]
		switch {
		case res.Type == "pulumi:pulumi:Stack" || strings.HasPrefix(res.Type, "pulumi:providers:") && s == nil:
			if seen[key] {
				counts["same"]++
			} else {
				counts["create"]++
			}
		case s["DELETE_COMPLETE"] && s["CREATE_COMPLETE"] || s["REPLACED"] && s["UPDATE_COMPLETE"]:
			counts["replace"]++
		case s["CREATE_COMPLETE"] || s["IMPORT_COMPLETE"]:
			counts["create"]++
		case s["UPDATE_COMPLETE"]:
			counts["update"]++
		default:
			counts["same"]++
		}
		seen[key] = true
	}
	for name, s := range did {
		if !inState[name] && s["DELETE_COMPLETE"] {
			counts["delete"]++
		}
	}
	return json.Marshal(counts)
}

func firstLine(b []byte) string {
	s := strings.TrimSpace(string(b))
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

func lastLine(b []byte) string {
	s := strings.TrimSpace(string(b))
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return strings.TrimSpace(s)
}

func must(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
