package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// The event log follows what cairn did: both replacement orders, a removal, an update, a
// failed create and an untouched resource, each with Pulumi's step ops in cairn's order.
func TestEventLogFromCairnEvents(t *testing.T) {
	ev := func(name, status, reason string) cairnEvent {
		typ := "simple:index:Resource"
		if name == "test" {
			typ = "pulumi:pulumi:Stack"
		}
		return cairnEvent{LogicalID: name, Type: typ, Status: status, Reason: reason}
	}
	evs := []cairnEvent{
		ev("test", "UPDATE_IN_PROGRESS", "User Initiated"),
		ev("dbr", "DELETE_IN_PROGRESS", deleteFirstReason),
		ev("cbd", "UPDATE_IN_PROGRESS", ""),
		ev("upd", "UPDATE_IN_PROGRESS", ""),
		ev("cbd", "UPDATE_IN_PROGRESS", createFirstReason),
		ev("dbr", "DELETE_COMPLETE", ""),
		ev("cbd", "UPDATE_COMPLETE", ""),
		ev("upd", "UPDATE_COMPLETE", ""),
		ev("dbr", "CREATE_IN_PROGRESS", ""),
		ev("dbr", "CREATE_COMPLETE", ""),
		ev("bad", "CREATE_IN_PROGRESS", ""),
		ev("bad", "CREATE_FAILED", "boom"),
		ev("test", "UPDATE_COMPLETE_CLEANUP_IN_PROGRESS", ""),
		ev("cbd", "DELETE_IN_PROGRESS", ""),
		ev("cbd", "DELETE_COMPLETE", ""),
		ev("gone", "DELETE_IN_PROGRESS", ""),
		ev("gone", "DELETE_COMPLETE", ""),
		ev("test", "UPDATE_COMPLETE", ""),
	}
	urn := func(typ, name string) string { return "urn:pulumi:test::proj::" + typ + "::" + name }
	final := []stateResource{
		{urn("pulumi:pulumi:Stack", "proj-test"), "pulumi:pulumi:Stack"},
		{urn("pulumi:providers:simple", "default"), "pulumi:providers:simple"},
		{urn("simple:index:Resource", "dbr"), "simple:index:Resource"},
		{urn("simple:index:Resource", "cbd"), "simple:index:Resource"},
		{urn("simple:index:Resource", "upd"), "simple:index:Resource"},
		{urn("simple:index:Resource", "bad"), "simple:index:Resource"},
		{urn("simple:index:Resource", "idle"), "simple:index:Resource"},
	}
	urns := map[string]string{}
	for _, r := range final {
		urns[r.name()] = r.URN
	}
	known := map[string]bool{"pulumi:pulumi:Stack::pulumi:pulumi:Stack": true, "pulumi:providers:simple::default": true}
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(string(eventLog(evs, "test", final, urns, known))), "\n") {
		var e engineEvent
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatal(err)
		}
		kind, s := "pre", e.ResourcePreEvent
		if e.ResOutputsEvent != nil {
			kind, s = "out", e.ResOutputsEvent
		} else if e.ResOpFailedEvent != nil {
			kind, s = "failed", e.ResOpFailedEvent
		}
		name := s.Metadata.URN[strings.LastIndex(s.Metadata.URN, "::")+2:]
		got = append(got, kind+" "+s.Metadata.Op+" "+name)
		if name == "gone" && s.Metadata.URN != urn("simple:index:Resource", "gone") {
			t.Errorf("a resource no state holds: URN %q, want one built like the stack's", s.Metadata.URN)
		}
	}
	want := []string{
		"pre same proj-test",
		"pre delete-replaced dbr",
		"pre create-replacement cbd",
		"pre update upd",
		"out delete-replaced dbr",
		"pre replace dbr",
		"out replace dbr",
		"out create-replacement cbd",
		"pre replace cbd",
		"out replace cbd",
		"out update upd",
		"pre create-replacement dbr",
		"out create-replacement dbr",
		"pre create bad",
		"failed create bad",
		"pre delete-replaced cbd",
		"out delete-replaced cbd",
		"pre delete gone",
		"out delete gone",
		"pre same default",
		"out same default",
		"pre same idle",
		"out same idle",
		"out same proj-test",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("event log:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// A create-first replacement counts as one replace, as `pulumi stack history` counts it.
func TestChangesCountCreateFirstReplacement(t *testing.T) {
	evs := []cairnEvent{
		{LogicalID: "r", Status: "UPDATE_IN_PROGRESS"},
		{LogicalID: "r", Status: "UPDATE_IN_PROGRESS", Reason: createFirstReason},
		{LogicalID: "r", Status: "UPDATE_COMPLETE"},
		{LogicalID: "r", Status: "DELETE_IN_PROGRESS"},
		{LogicalID: "r", Status: "DELETE_COMPLETE"},
	}
	final := []stateResource{{"urn:pulumi:test::p::simple:index:Resource::r", "simple:index:Resource"}}
	b, err := changesOf(evs, final, map[string]bool{})
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != `{"replace":1}` {
		t.Errorf("changes = %s, want {\"replace\":1}", b)
	}
}
