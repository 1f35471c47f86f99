package function

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/cairn-dev/cairn/internal/atomicfile"
)

// bootstrapJS is cairn's Node.js runtime: it speaks the Runtime API, loads the handler's
// module and calls it with the event and a Lambda context.
//
//go:embed bootstrap.js
var bootstrapJS []byte

// bootstrapPy is cairn's Python runtime, the same for Python 3.8 and later.
//
//go:embed bootstrap.py
var bootstrapPy []byte

// command is the program and arguments that run d.
func (m *Manager) command(d Definition) (string, []string, error) {
	switch d.Kind {
	case KindProvided:
		p := filepath.Join(d.CodeDir, "bootstrap")
		st, err := os.Stat(p)
		if err != nil || !st.Mode().IsRegular() || st.Mode().Perm()&0o111 == 0 {
			return "", nil, errors.New("the code has no executable file named bootstrap at its top level")
		}
		return p, nil, nil
	case KindNodejs:
		node, err := m.node()
		if err != nil {
			return "", nil, err
		}
		js, err := m.runtimeFile("nodejs-bootstrap", ".js", bootstrapJS)
		if err != nil {
			return "", nil, err
		}
		// V8's old generation is most of a handler's heap; node's own overhead comes on top.
		return node, []string{"--max-old-space-size=" + strconv.Itoa(d.MemoryMB), js}, nil
	case KindPython:
		python, err := m.python()
		if err != nil {
			return "", nil, err
		}
		py, err := m.runtimeFile("python-bootstrap", ".py", bootstrapPy)
		if err != nil {
			return "", nil, err
		}
		// -u: every line of output reaches the logs as it is printed, as on Lambda.
		return python, []string{"-u", py}, nil
	}
	if d.Kind == KindTerraformProvider {
		return "", nil, errors.New("a terraform-provider function serves a private provider's calls; it is not invoked with an event")
	}
	return "", nil, fmt.Errorf("a %s function runs no process", d.Kind)
}

// ProviderExecutable is the terraform-provider-* executable at the top of a terraform-provider
// function's code.
func ProviderExecutable(dir string) (string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return "", err
	}
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), "terraform-provider-") {
			continue
		}
		p := filepath.Join(dir, e.Name())
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode().Perm()&0o111 != 0 {
			return p, nil
		}
	}
	return "", errors.New("a terraform-provider function's code needs an executable named terraform-provider-* at its top level")
}

func (m *Manager) node() (string, error) {
	name := m.cfg.Node
	if name == "" {
		name = "node"
	}
	p, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("the nodejs runtime needs node (20 or later) on PATH: %w", err)
	}
	return p, nil
}

func (m *Manager) python() (string, error) {
	name := m.cfg.Python
	if name == "" {
		name = "python3"
	}
	p, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("the python runtime needs python3 (3.8 or later) on PATH: %w", err)
	}
	return p, nil
}

// runtimeFile writes a runtime's bootstrap into Dir/runtime once per content (the name holds
// a digest of it) and returns its path.
func (m *Manager) runtimeFile(name, ext string, content []byte) (string, error) {
	sum := sha256.Sum256(content)
	p := filepath.Join(m.cfg.Dir, "runtime", name+"-"+hex.EncodeToString(sum[:6])+ext)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.written[p] {
		return p, nil
	}
	if _, err := os.Stat(p); err != nil {
		if err := atomicfile.Write(p, content, 0o600); err != nil {
			return "", fmt.Errorf("cannot write the %s: %w", name, err)
		}
	}
	m.written[p] = true
	return p, nil
}

// checkEntrypoint refuses code that cannot run: no executable bootstrap (provided), no
// handler module (nodejs).
func checkEntrypoint(d Definition) error {
	switch d.Kind {
	case KindProvided:
		st, err := os.Stat(filepath.Join(d.CodeDir, "bootstrap"))
		if err != nil || !st.Mode().IsRegular() {
			return invalidf("a provided function's code needs a file named bootstrap at its top level")
		}
		if st.Mode().Perm()&0o111 == 0 {
			return invalidf("the bootstrap file is not executable (chmod +x bootstrap)")
		}
	case KindTerraformProvider:
		if _, err := ProviderExecutable(d.CodeDir); err != nil {
			return invalidf("%s", err)
		}
	case KindNodejs:
		mod := handlerModule(d.Handler)
		for _, ext := range []string{".js", ".mjs", ".cjs", "/index.js", "/index.mjs"} {
			if st, err := os.Stat(filepath.Join(d.CodeDir, filepath.FromSlash(mod+ext))); err == nil && st.Mode().IsRegular() {
				return nil
			}
		}
		return invalidf("handler %q needs the module %s.js (or .mjs, .cjs) in the code directory", d.Handler, mod)
	case KindPython:
		mod := d.Handler[:strings.LastIndex(d.Handler, ".")] // withDefaults checked there is one
		file := filepath.FromSlash(strings.ReplaceAll(mod, ".", "/"))
		for _, p := range []string{file + ".py", filepath.Join(file, "__init__.py")} {
			if st, err := os.Stat(filepath.Join(d.CodeDir, p)); err == nil && st.Mode().IsRegular() {
				return nil
			}
		}
		return invalidf("handler %q needs the module %s.py in the code directory", d.Handler, file)
	}
	return nil
}

// handlerModule is the module part of a nodejs handler: "src/index.handler" -> "src/index".
func handlerModule(h string) string {
	dir, base := path.Split(h)
	mod, _, _ := strings.Cut(base, ".")
	return dir + mod
}

// environ is the environment of a process of d: Lambda's variables, PATH, and Config.Env.
func (m *Manager) environ(d Definition, runtimeAPI, stream string) []string {
	pathEnv := os.Getenv("PATH")
	if pathEnv == "" {
		pathEnv = "/usr/local/bin:/usr/bin:/bin"
	}
	execEnv := "AWS_Lambda_provided.al2023"
	switch d.Kind {
	case KindNodejs:
		execEnv = "AWS_Lambda_nodejs20.x"
	case KindPython:
		execEnv = "AWS_Lambda_python3"
	}
	env := []string{
		"PATH=" + pathEnv,
		"AWS_LAMBDA_RUNTIME_API=" + runtimeAPI,
		"_HANDLER=" + d.Handler,
		"AWS_LAMBDA_FUNCTION_NAME=" + d.Name,
		"AWS_LAMBDA_FUNCTION_VERSION=$LATEST",
		"AWS_LAMBDA_FUNCTION_MEMORY_SIZE=" + strconv.Itoa(d.MemoryMB),
		"AWS_LAMBDA_FUNCTION_TIMEOUT=" + strconv.Itoa(int(d.Timeout.Seconds())),
		"AWS_LAMBDA_LOG_GROUP_NAME=/aws/lambda/" + d.Name,
		"AWS_LAMBDA_LOG_STREAM_NAME=" + stream,
		"AWS_LAMBDA_INITIALIZATION_TYPE=on-demand",
		"AWS_EXECUTION_ENV=" + execEnv,
		"AWS_REGION=" + m.cfg.Region,
		"AWS_DEFAULT_REGION=" + m.cfg.Region,
		"LAMBDA_TASK_ROOT=" + d.CodeDir,
		"LAMBDA_RUNTIME_DIR=" + filepath.Join(m.cfg.Dir, "runtime"),
		"TZ=:UTC",
		"LANG=en_US.UTF-8",
	}
	if d.Kind == KindPython {
		env = append(env, "PYTHONDONTWRITEBYTECODE=1") // the code directory stays as it was unpacked
	}
	// The function's own variables cannot name the ones above (checkEnv refuses them).
	for _, k := range slices.Sorted(maps.Keys(d.Env)) {
		env = append(env, k+"="+d.Env[k])
	}
	return append(env, m.cfg.Env...)
}
