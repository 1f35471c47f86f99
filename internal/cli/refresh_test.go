package cli

import (
	"strings"
	"testing"
)

// TestRefreshCloudFormationCLI: refreshing a CloudFormation stack reads what can be read and
// lists its custom resources as not checked, as CloudFormation's drift detection does.
func TestRefreshCloudFormationCLI(t *testing.T) {
	c := newPlanCLI(t)
	path := c.template("one")
	if code, out := c.run(false, "", "deploy", "-f", path, "--stack", "s", "-p", "Url="+c.url); code != 0 {
		t.Fatalf("deploy: exit %d\n%s", code, out)
	}
	code, out := c.run(false, "", "refresh", "--stack", "s")
	if code != 0 || !strings.Contains(out, "Not checked: Hello (custom resources cannot be read back") ||
		!strings.Contains(out, "No changes.") {
		t.Errorf("refresh: exit %d\n%s", code, out)
	}
	code, out = c.run(false, "", "refresh", "--stack", "s", "-f", path)
	if code != 0 || !strings.Contains(out, "Not checked: Hello") {
		t.Errorf("refresh -f FILE: exit %d\n%s", code, out)
	}
	code, out = c.run(false, "", "preview", "--stack", "s", "-f", path, "-p", "Url="+c.url, "--refresh")
	if code != 0 || !strings.Contains(out, "Not checked for drift: Hello") {
		t.Errorf("preview --refresh: exit %d\n%s", code, out)
	}
}
