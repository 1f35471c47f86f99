package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cairn-dev/cairn/api"
)

func TestEventPrinter(t *testing.T) {
	at := time.Date(2025, 1, 2, 15, 4, 5, 0, time.UTC)
	var b strings.Builder
	p := newEventPrinter(&b, false, time.UTC)
	for _, ev := range []api.Event{
		{LogicalID: "web", Type: "AWS::CloudFormation::Stack", Status: "CREATE_IN_PROGRESS", Reason: "User Initiated", Timestamp: at},
		{LogicalID: "Bucket", Type: "Custom::Bucket", Status: "CREATE_FAILED", Reason: "boom", Timestamp: at},
		{LogicalID: "Bucket", Type: "Custom::Bucket", Status: "CREATE_COMPLETE", Timestamp: at},
	} {
		p.print(ev)
	}
	want := "" +
		"15:04:05  web               AWS::CloudFormation::Stack  CREATE_IN_PROGRESS           User Initiated\n" +
		"15:04:05  Bucket            Custom::Bucket              CREATE_FAILED                boom\n" +
		"15:04:05  Bucket            Custom::Bucket              CREATE_COMPLETE\n"
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestEventPrinterColour(t *testing.T) {
	at := time.Date(2025, 1, 2, 15, 4, 5, 0, time.UTC)
	var b strings.Builder
	p := newEventPrinter(&b, true, time.UTC)
	p.print(api.Event{LogicalID: "Bucket", Type: "Custom::Bucket", Status: "CREATE_FAILED", Reason: "boom", Timestamp: at})
	p.print(api.Event{LogicalID: "Bucket", Type: "Custom::Bucket", Status: "DELETE_COMPLETE", Timestamp: at})
	want := "" +
		ansiBold + "TIME      LOGICAL ID        TYPE                        STATUS                       REASON" + ansiReset + "\n" +
		"15:04:05  Bucket            Custom::Bucket              " + ansiRed + "CREATE_FAILED" + ansiReset + "                boom\n" +
		"15:04:05  Bucket            Custom::Bucket              " + ansiGreen + "DELETE_COMPLETE" + ansiReset + "\n"
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("a terminal gets a header and coloured statuses, padded outside the escapes: -want +got:\n%s", diff)
	}
}

func TestColourStatus(t *testing.T) {
	for status, want := range map[string]string{
		"CREATE_COMPLETE":          ansiGreen + "CREATE_COMPLETE" + ansiReset,
		"UPDATE_ROLLBACK_COMPLETE": ansiRed + "UPDATE_ROLLBACK_COMPLETE" + ansiReset,
		"DELETE_FAILED":            ansiRed + "DELETE_FAILED" + ansiReset,
		"CREATE_IN_PROGRESS":       ansiYellow + "CREATE_IN_PROGRESS" + ansiReset,
		"DELETE_SKIPPED":           "DELETE_SKIPPED",
	} {
		if got := colourStatus(status, true); got != want {
			t.Errorf("colourStatus(%q) = %q, want %q", status, got, want)
		}
		if got := colourStatus(status, false); got != status {
			t.Errorf("colourStatus(%q, false) = %q", status, got)
		}
	}
}

func TestWritePreview(t *testing.T) {
	allKinds := api.PreviewResponse{Changes: []api.Change{
		{LogicalID: "Database", Type: "Custom::Db", Action: api.ActionAdd},
		{LogicalID: "Web", Type: "Custom::Web", Action: api.ActionModify, Replacement: api.ReplaceMaybe, Details: []api.PropertyChange{
			{Name: "Size", Before: float64(1), After: float64(2)},
			{Name: "Tags", Before: map[string]any{"a": "b"}, After: api.UnknownMarker},
			{Name: "Password", Before: "****", After: "****"},
			{Name: "Name", After: "x"},
		}},
		{LogicalID: "Same", Type: "Custom::Same", Action: api.ActionNoop},
		{LogicalID: "Old", Type: "Custom::Old", Action: api.ActionRemove},
	}}
	tests := map[string]struct {
		reason string
		in     api.PreviewResponse
		colour bool
		want   string
	}{
		"Empty": {reason: "A preview without changes says so.", in: api.PreviewResponse{}, want: "No changes.\n"},
		"OnlyNoops": {reason: "Changes with action None are not shown.",
			in: api.PreviewResponse{Changes: []api.Change{{LogicalID: "A", Type: "T", Action: api.ActionNoop}}}, want: "No changes.\n"},
		"AllKinds": {reason: "Each action gets its sign; columns align; markers are shown as given.", in: allKinds, want: "" +
			"+ Add     Database  Custom::Db\n" +
			"~ Modify  Web       Custom::Web  (replacement: Conditional)\n" +
			"      Size: 1 → 2\n" +
			"      Tags: {\"a\":\"b\"} → (known after apply)\n" +
			"      Password: **** → ****\n" +
			"      Name: (none) → \"x\"\n" +
			"- Remove  Old       Custom::Old\n" +
			"\n1 to add, 1 to modify, 1 to remove.\n"},
		"Colour": {reason: "On a terminal the sign and action are coloured.", colour: true,
			in: api.PreviewResponse{Changes: []api.Change{{LogicalID: "A", Type: "T", Action: api.ActionRemove}}}, want: "" +
				ansiRed + "- Remove" + ansiReset + "  A  T\n" +
				"\n0 to add, 0 to modify, 1 to remove.\n"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var b strings.Builder
			writePreview(&b, tc.in, tc.colour)
			if diff := cmp.Diff(tc.want, b.String()); diff != "" {
				t.Errorf("%s\nwritePreview: -want +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestFormatDiagnostic(t *testing.T) {
	tests := []struct {
		in   api.Diagnostic
		want string
	}{
		{api.Diagnostic{Severity: "error", Summary: "bad", File: "t.yaml", Line: 3, Column: 5, Path: "Resources.A"}, "t.yaml:3:5: Resources.A: bad"},
		{api.Diagnostic{Severity: "error", Summary: "bad", File: "t.yaml"}, "t.yaml: bad"},
		{api.Diagnostic{Severity: "error", Summary: "bad", Path: "Outputs.X"}, "Outputs.X: bad"},
		{api.Diagnostic{Severity: "warning", Summary: "odd", Detail: "why", Line: 2}, "warning: odd: why"},
	}
	for _, tt := range tests {
		if got := formatDiagnostic(tt.in); got != tt.want {
			t.Errorf("formatDiagnostic(%+v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestWriteValidate(t *testing.T) {
	var b strings.Builder
	writeValidate(&b, api.ValidateResponse{Valid: true, Parameters: []api.Parameter{
		{Name: "Env", Type: "String", Value: "prod", Description: "where"},
		{Name: "Password", Type: "String", NoEcho: true, Value: "****"},
	}})
	want := "" +
		"template is valid\n" +
		"Parameters:\n" +
		"  Env       String  = prod  where\n" +
		"  Password  String  = ****\n"
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	b.Reset()
	writeValidate(&b, api.ValidateResponse{Diagnostics: []api.Diagnostic{{Severity: "error", Summary: "no resources", File: "t.yaml", Line: 1, Column: 1}}})
	if diff := cmp.Diff("t.yaml:1:1: no resources\n", b.String()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestWriteOutputsAndStacks(t *testing.T) {
	var b strings.Builder
	writeOutputs(&b, "Outputs:", []api.Output{{Name: "Url", Value: "http://x"}, {Name: "List", Value: []any{"a", float64(1)}}, {Name: "Secret", Value: "****"}})
	writeStacks(&b, []api.Stack{{Name: "web", Status: "CREATE_COMPLETE", UpdatedAt: time.Date(2025, 1, 2, 15, 4, 5, 0, time.UTC), Description: "the web"}, {Name: "db", Status: "DELETE_FAILED"}}, time.UTC)
	want := "" +
		"Outputs:\n" +
		"  Url = http://x\n" +
		"  List = [\"a\",1]\n" +
		"  Secret = ****\n" +
		"NAME  STATUS           UPDATED              DESCRIPTION\n" +
		"web   CREATE_COMPLETE  2025-01-02 15:04:05  the web\n" +
		"db    DELETE_FAILED    -\n"
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestWriteStack(t *testing.T) {
	var b strings.Builder
	writeStack(&b, api.Stack{Name: "web", ID: "arn:x", Dialect: "cloudformation", Status: "UPDATE_FAILED", StatusReason: "boom",
		CreatedAt:  time.Date(2025, 1, 2, 15, 4, 5, 0, time.UTC),
		Parameters: []api.Parameter{{Name: "Env", Type: "String", Value: "prod"}},
		Resources: []api.Resource{{LogicalID: "Bucket", Type: "Custom::Bucket", Status: "UPDATE_FAILED", StatusReason: "denied", PhysicalID: "b-1"},
			{LogicalID: "Queue", Type: "Custom::Queue", Status: "CREATE_COMPLETE"}},
		Outputs: []api.Output{{Name: "Url", Value: "http://x"}}}, time.UTC, false)
	want := "" +
		"Name:    web\n" +
		"ID:      arn:x\n" +
		"Dialect: cloudformation\n" +
		"Status:  UPDATE_FAILED (boom)\n" +
		"Created: 2025-01-02 15:04:05\n" +
		"Updated: -\n" +
		"Parameters:\n" +
		"  Env  String  = prod\n" +
		"Resources:\n" +
		"  LOGICAL ID  TYPE            STATUS           PHYSICAL ID  REASON\n" +
		"  Bucket      Custom::Bucket  UPDATE_FAILED    b-1          denied\n" +
		"  Queue       Custom::Queue   CREATE_COMPLETE  -\n" +
		"Outputs:\n" +
		"  Url = http://x\n"
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestEventPrinterStableWidths(t *testing.T) {
	at := time.Date(2025, 1, 2, 15, 4, 5, 0, time.UTC)
	long := strings.Repeat("L", 45) // over the cap of 40
	var b strings.Builder
	p := newEventPrinter(&b, false, time.UTC)
	p.fit([][3]string{{"module.network.aws_subnet.a", "aws_subnet", "CREATE_COMPLETE"}}) // 27 wide
	for _, id := range []string{"a", long, "b"} {
		p.print(api.Event{LogicalID: id, Type: "aws_subnet", Status: "CREATE_COMPLETE", Reason: "r", Timestamp: at})
	}
	p.fit([][3]string{{strings.Repeat("x", 39), "t", "s"}}) // too late: the columns stay
	p.print(api.Event{LogicalID: "c", Type: "aws_subnet", Status: "CREATE_COMPLETE", Reason: "r", Timestamp: at})
	pad := func(s string, n int) string { return s + strings.Repeat(" ", n-len(s)) }
	row := func(id string) string {
		return "15:04:05  " + pad(id, 27) + "  " + pad("aws_subnet", 26) + "  " + pad("CREATE_COMPLETE", 27) + "  r\n"
	}
	want := row("a") + "15:04:05  " + long + "  " + pad("aws_subnet", 26) + "  " + pad("CREATE_COMPLETE", 27) + "  r\n" + row("b") + row("c")
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("columns are sized from the known resources before the first line and never move: -want +got:\n%s", diff)
	}
}

func TestViewEventsSizedFromAll(t *testing.T) {
	at := time.Date(2025, 1, 2, 15, 4, 5, 0, time.UTC)
	var b strings.Builder
	v := view{w: &b, loc: time.UTC}
	id := "aws_security_group.frontend" // 27, over the default 16
	if err := v.events([]api.Event{
		{LogicalID: "a", Type: "t", Status: "CREATE_COMPLETE", Reason: "r", Timestamp: at},
		{LogicalID: id, Type: "t", Status: "CREATE_COMPLETE", Reason: "r", Timestamp: at},
	}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 2 || strings.Index(lines[0], "  t ") != strings.Index(lines[1], "  t ") {
		t.Errorf("a list is sized from all its events, so the first line lines up with the longest:\n%s", b.String())
	}
}
