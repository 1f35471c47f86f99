package function

import (
	"maps"
	"regexp"
	"slices"
	"strings"
)

// Lambda's limits on a function's environment: names of letters, digits and underscores that
// start with a letter, and 4 KB for all names and values together.
var envName = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]*$`)

const maxEnvBytes = 4 << 10

// reservedEnv are the variables the runtime sets itself (Lambda reserves the same): a
// function's own may not replace them.
var reservedEnv = []string{"_HANDLER", "_X_AMZN_TRACE_ID", "AWS_DEFAULT_REGION", "AWS_REGION", "AWS_EXECUTION_ENV",
	"AWS_LAMBDA_RUNTIME_API", "LAMBDA_TASK_ROOT", "LAMBDA_RUNTIME_DIR", "PATH", "TZ", "LANG"}

// checkEnv refuses variables a function cannot have. Messages name variables, never values.
func checkEnv(env map[string]string) error {
	size := 0
	for _, k := range slices.Sorted(maps.Keys(env)) {
		switch {
		case !envName.MatchString(k):
			return invalidf("environment variable name %q is invalid: use letters, digits and '_', starting with a letter", k)
		case slices.Contains(reservedEnv, k) || strings.HasPrefix(k, "AWS_LAMBDA_"):
			return invalidf("environment variable %s is reserved: the runtime sets it", k)
		}
		size += len(k) + len(env[k])
	}
	if size > maxEnvBytes {
		return invalidf("the environment variables take %d bytes; the limit is %d", size, maxEnvBytes)
	}
	return nil
}

// KindOfRuntime maps a runtime as Lambda and the CLI name it to the kind that runs it:
// "nodejs20.x" and "nodejs" to nodejs, "python3.12" and "python" to python; other names
// (provided, provided.al2023, terraform-provider) stay as they are, "provided.*" being provided.
func KindOfRuntime(runtime string) Kind {
	switch {
	case runtime == "nodejs" || strings.HasPrefix(runtime, "nodejs") && strings.HasSuffix(runtime, ".x"):
		return KindNodejs
	case runtime == "python" || strings.HasPrefix(runtime, "python3."):
		return KindPython
	case strings.HasPrefix(runtime, "provided."):
		return KindProvided
	}
	return Kind(runtime)
}
