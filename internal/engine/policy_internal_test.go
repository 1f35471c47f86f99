package engine

import "testing"

// TestPolicyOf: a stored stack finds its dialect's policy by the name it was stored under,
// and a stack stored without a dialect is CloudFormation's (it rolls back).
func TestPolicyOf(t *testing.T) {
	for _, p := range dialects {
		if got := policyOf(string(p.Dialect)); got.Dialect != p.Dialect || got.Name != p.Name {
			t.Errorf("policyOf(%q) = %q's policy", p.Dialect, got.Dialect)
		}
		if p.Paths == nil || p.StackID == nil || p.Name == "" || p.StackType == "" {
			t.Errorf("the policy of %q leaves a field unset: %+v", p.Dialect, p)
		}
	}
	if got := policyOf(""); got.Dialect != dialects[0].Dialect || !got.RollsBack {
		t.Errorf(`policyOf("") = %q's policy, want %q's`, got.Dialect, dialects[0].Dialect)
	}
}
