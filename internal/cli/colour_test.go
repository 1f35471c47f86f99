package cli

import "testing"

func TestColourDecision(t *testing.T) {
	tests := map[string]struct {
		reason   string
		terminal bool
		env      map[string]string
		noColor  bool
		output   string
		want     bool
	}{
		"Terminal":       {reason: "A terminal gets colours.", terminal: true, want: true},
		"NotTerminal":    {reason: "A pipe or file never gets colours.", want: false},
		"NoColorEnv":     {reason: "NO_COLOR with any value turns colours off.", terminal: true, env: map[string]string{"NO_COLOR": "0"}, want: false},
		"NoColorFlag":    {reason: "--no-color turns colours off.", terminal: true, noColor: true, want: false},
		"DumbTerminal":   {reason: "TERM=dumb turns colours off.", terminal: true, env: map[string]string{"TERM": "dumb"}, want: false},
		"OtherTerm":      {reason: "Any other TERM keeps them.", terminal: true, env: map[string]string{"TERM": "xterm-256color"}, want: true},
		"JSONOnTerminal": {reason: "-o json never colours.", terminal: true, output: "json", want: false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r := &runner{noColor: tc.noColor, output: tc.output, env: Env{
				Getenv:     func(k string) string { return tc.env[k] },
				IsTerminal: func(any) bool { return tc.terminal },
			}}
			if got := r.view().colour; got != tc.want {
				t.Errorf("%s\nview().colour = %v, want %v", tc.reason, got, tc.want)
			}
		})
	}
}
