package cli

import (
	"context"
	"strings"
	"testing"
)

func TestCompletionScripts(t *testing.T) {
	for shell, marker := range map[string]string{"bash": "complete -o default -F __start_cairn cairn", "zsh": "#compdef cairn",
		"fish": "complete -c cairn", "powershell": "Register-ArgumentCompleter"} {
		got := runEnv(t, nil, "completion", shell)
		if got.Code != 0 || !strings.Contains(got.Stdout, marker) {
			t.Errorf("completion %s: exit %d, stderr %s; stdout lacks %q", shell, got.Code, got.Stderr, marker)
		}
	}
	if got := runEnv(t, nil, "completion", "tcsh"); got.Code != 2 {
		t.Errorf("completion tcsh: exit %d, want 2 (usage)", got.Code)
	}
}

// TestCompleteStack: --stack completes the names of the server's stacks; with no server, none
// (cairn is not started in-process for a key press).
func TestCompleteStack(t *testing.T) {
	got := run(t, context.Background(), &fakeServer{}, "", "__complete", "describe", "--stack", "w")
	if got.Code != 0 || !strings.HasPrefix(got.Stdout, "web\n:4\n") {
		t.Errorf("__complete describe --stack w: exit %d\n%s%s", got.Code, got.Stdout, got.Stderr)
	}
	got = run(t, context.Background(), &fakeServer{}, "", "__complete", "events", "--stack", "x")
	if got.Code != 0 || !strings.HasPrefix(got.Stdout, ":4\n") {
		t.Errorf("__complete events --stack x: exit %d\n%s", got.Code, got.Stdout)
	}
	local := runEnv(t, map[string]string{"CAIRN_DIR": t.TempDir()}, "__complete", "describe", "--stack", "")
	if local.Code != 0 || !strings.HasPrefix(local.Stdout, ":4\n") {
		t.Errorf("__complete without a server: exit %d\n%s", local.Code, local.Stdout)
	}
}
