package pulumiurn

import "testing"

func TestURNs(t *testing.T) {
	got := New("dev", "proj", Chain("simple:index:Resource", "my:Component"), "a::b")
	if want := "urn:pulumi:dev::proj::my:Component$simple:index:Resource::a::b"; got != want {
		t.Errorf("New = %s, want %s", got, want)
	}
	if n, err := Name(got); err != nil || n != "a::b" {
		t.Errorf("Name = %q, %v", n, err)
	}
	if _, err := Name("urn:pulumi:dev::proj::t"); err == nil {
		t.Error("a URN without a name was read")
	}
}

func TestProject(t *testing.T) {
	if got := Project(New("dev", "web", "a:b:C", "x::y")); got != "web" {
		t.Fatalf("Project = %q, want web", got)
	}
	if got := Project("not-a-urn"); got != "" {
		t.Fatalf("Project of junk = %q", got)
	}
}
