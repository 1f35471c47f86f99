package statetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/cairn-dev/cairn/internal/state"
)

// RunRegistry runs the conformance suite of state.Registry. open returns a new, empty
// registry for one subtest and closes it when that subtest ends.
func RunRegistry(t *testing.T, open func(t *testing.T) state.Registry) {
	suite := []struct {
		name string
		fn   func(*testing.T, state.Registry)
	}{
		{"Providers", testProviders},
		{"ProviderTenancy", testProviderTenancy},
		{"ProviderQuota", testProviderQuota},
		{"ProviderPages", testProviderPages},
		{"DeleteCascades", testDeleteCascades},
		{"Versions", testVersions},
		{"VersionTenancy", testVersionTenancy},
		{"VersionQuota", testVersionQuota},
		{"VersionPages", testVersionPages},
		{"CreateConcurrently", testCreateProviderConcurrently},
	}
	for _, tc := range suite {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, open(t)) })
	}
}

// ignoreSeq compares rows without the store-assigned Seq.
var ignoreSeq = cmp.Options{opts,
	cmpopts.IgnoreFields(state.PrivateProvider{}, "Seq"), cmpopts.IgnoreFields(state.PrivateProviderVersion{}, "Seq")}

func privateProvider(tenant, name string, at time.Time) state.PrivateProvider {
	return state.PrivateProvider{Tenant: tenant, ID: tenant + "-" + name + "-id", Name: name, Description: "the " + name,
		AgencyURN: "iam::acct:agency:" + name, CreatedAt: at, UpdatedAt: at}
}

func privateVersion(p state.PrivateProvider, version string, at time.Time) state.PrivateProviderVersion {
	return state.PrivateProviderVersion{Tenant: p.Tenant, ProviderID: p.ID, Version: version, Description: "v" + version,
		FunctionURN: "urn:fss:r:proj:function:default:" + p.Name + ":latest", CreatedAt: at}
}

func mustCreate(t *testing.T, r state.Registry, p state.PrivateProvider, first *state.PrivateProviderVersion) state.PrivateProvider {
	t.Helper()
	got, err := r.CreatePrivateProvider(context.Background(), p, first, 0)
	must(t, "CreatePrivateProvider", err)
	return got
}

func testProviders(t *testing.T, r state.Registry) {
	ctx := context.Background()
	p := privateProvider("acme", "widgets", t0)
	got := mustCreate(t, r, p, nil)
	if got.Seq == 0 {
		t.Errorf("CreatePrivateProvider: Seq not assigned")
	}
	if _, err := r.CreatePrivateProvider(ctx, privateProvider("acme", "widgets", t0), nil, 0); !errors.Is(err, state.ErrExists) {
		t.Errorf("CreatePrivateProvider of a taken name: %v, want ErrExists", err)
	}
	stored, err := r.GetPrivateProvider(ctx, "acme", "widgets")
	must(t, "GetPrivateProvider", err)
	if diff := cmp.Diff(p, stored, ignoreSeq); diff != "" {
		t.Errorf("GetPrivateProvider: -want +got\n%s", diff)
	}
	wantUTC(t, "GetPrivateProvider", stored.CreatedAt, stored.UpdatedAt)
	if stored.Seq != got.Seq {
		t.Errorf("GetPrivateProvider: Seq %d, CreatePrivateProvider said %d", stored.Seq, got.Seq)
	}
	_, err = r.GetPrivateProvider(ctx, "acme", "nope")
	wantNotFound(t, "GetPrivateProvider(nope)", err)

	later := t0.Add(time.Hour)
	must(t, "UpdatePrivateProvider", r.UpdatePrivateProvider(ctx, "acme", p.ID, "", later))
	stored, err = r.GetPrivateProvider(ctx, "acme", "widgets")
	must(t, "GetPrivateProvider", err)
	want := p
	want.Description, want.UpdatedAt = "", later
	if diff := cmp.Diff(want, stored, ignoreSeq); diff != "" {
		t.Errorf("GetPrivateProvider after update: -want +got\n%s", diff)
	}
	wantNotFound(t, "UpdatePrivateProvider(unknown id)", r.UpdatePrivateProvider(ctx, "acme", "nope", "x", later))

	must(t, "DeletePrivateProvider", r.DeletePrivateProvider(ctx, "acme", p.ID))
	wantNotFound(t, "DeletePrivateProvider again", r.DeletePrivateProvider(ctx, "acme", p.ID))
	_, err = r.GetPrivateProvider(ctx, "acme", "widgets")
	wantNotFound(t, "GetPrivateProvider after delete", err)
	// A name is unique at any one time only: it can be taken again, with a new id.
	again := privateProvider("acme", "widgets", later)
	again.ID = "new-id"
	mustCreate(t, r, again, nil)
}

func testProviderTenancy(t *testing.T, r state.Registry) {
	ctx := context.Background()
	a := mustCreate(t, r, privateProvider("a", "shared", t0), nil)
	b := mustCreate(t, r, privateProvider("b", "shared", t0), nil) // same name, other tenant: fine
	if _, err := r.GetPrivateProvider(ctx, "c", "shared"); !errors.Is(err, state.ErrNotFound) {
		t.Errorf("GetPrivateProvider of tenant c: %v, want ErrNotFound", err)
	}
	wantNotFound(t, "UpdatePrivateProvider of another tenant's id", r.UpdatePrivateProvider(ctx, "b", a.ID, "x", t0))
	wantNotFound(t, "DeletePrivateProvider of another tenant's id", r.DeletePrivateProvider(ctx, "b", a.ID))
	got, err := r.ListPrivateProviders(ctx, "b", state.Page{})
	must(t, "ListPrivateProviders", err)
	if diff := cmp.Diff([]state.PrivateProvider{b}, got, opts); diff != "" {
		t.Errorf("ListPrivateProviders(b): -want +got\n%s", diff)
	}
	got, err = r.ListPrivateProviders(ctx, "c", state.Page{})
	must(t, "ListPrivateProviders", err)
	if len(got) != 0 {
		t.Errorf("ListPrivateProviders(c) = %v, want none", got)
	}
}

func testProviderQuota(t *testing.T, r state.Registry) {
	ctx := context.Background()
	for i := range 2 {
		_, err := r.CreatePrivateProvider(ctx, privateProvider("a", fmt.Sprint("p", i), t0), nil, 2)
		must(t, "CreatePrivateProvider", err)
	}
	if _, err := r.CreatePrivateProvider(ctx, privateProvider("a", "p2", t0), nil, 2); !errors.Is(err, state.ErrQuota) {
		t.Errorf("CreatePrivateProvider past the quota: %v, want ErrQuota", err)
	}
	if _, err := r.CreatePrivateProvider(ctx, privateProvider("b", "p2", t0), nil, 2); err != nil {
		t.Errorf("CreatePrivateProvider in another tenant: %v, want it under its own quota", err)
	}
	if _, err := r.CreatePrivateProvider(ctx, privateProvider("a", "p3", t0), nil, 0); err != nil {
		t.Errorf("CreatePrivateProvider with no quota: %v", err)
	}
}

// pageCase is a Page and the names (or versions) it must return, in order.
type pageCase struct {
	page state.Page
	want []string
}

// pageCases covers order, ties on CreatedAt (broken by Seq), cursors and limits for rows
// created as a, b, c at t0, t0 (the same millisecond) and t0+1s.
func pageCases(seqOf func(string) int64) map[string]pageCase {
	return map[string]pageCase{
		"Asc":          {state.Page{}, []string{"a", "b", "c"}},
		"Desc":         {state.Page{Desc: true}, []string{"c", "b", "a"}},
		"Limit":        {state.Page{Desc: true, Limit: 2}, []string{"c", "b"}},
		"AfterTieAsc":  {state.Page{After: &state.Cursor{CreatedAt: t0, Seq: seqOf("a")}}, []string{"b", "c"}},
		"AfterTieDesc": {state.Page{Desc: true, After: &state.Cursor{CreatedAt: t0, Seq: seqOf("b")}}, []string{"a"}},
		"AfterLast":    {state.Page{After: &state.Cursor{CreatedAt: t0.Add(time.Second), Seq: seqOf("c")}}, nil},
		"AfterLimit":   {state.Page{Desc: true, Limit: 1, After: &state.Cursor{CreatedAt: t0.Add(time.Second), Seq: seqOf("c")}}, []string{"b"}},
	}
}

func testProviderPages(t *testing.T, r state.Registry) {
	ctx := context.Background()
	seq := map[string]int64{}
	for _, n := range []struct {
		name string
		at   time.Time
	}{{"a", t0}, {"b", t0}, {"c", t0.Add(time.Second)}} {
		seq[n.name] = mustCreate(t, r, privateProvider("t", n.name, n.at), nil).Seq
	}
	mustCreate(t, r, privateProvider("other", "z", t0), nil)
	for name, tc := range pageCases(func(n string) int64 { return seq[n] }) {
		t.Run(name, func(t *testing.T) {
			ps, err := r.ListPrivateProviders(ctx, "t", tc.page)
			must(t, "ListPrivateProviders", err)
			var got []string
			for _, p := range ps {
				got = append(got, p.Name)
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("ListPrivateProviders(%+v): -want +got\n%s", tc.page, diff)
			}
		})
	}
}

func testDeleteCascades(t *testing.T, r state.Registry) {
	ctx := context.Background()
	p := privateProvider("t", "p", t0)
	first := privateVersion(p, "1.0.0", t0)
	mustCreate(t, r, p, &first)
	got, err := r.GetPrivateProviderVersion(ctx, "t", p.ID, "1.0.0")
	must(t, "GetPrivateProviderVersion", err)
	if diff := cmp.Diff(first, got, ignoreSeq); diff != "" {
		t.Errorf("the version created with its provider: -want +got\n%s", diff)
	}
	must(t, "CreatePrivateProviderVersion", r.CreatePrivateProviderVersion(ctx, privateVersion(p, "1.1.0", t0), 0))
	must(t, "DeletePrivateProvider", r.DeletePrivateProvider(ctx, "t", p.ID))
	vs, err := r.ListPrivateProviderVersions(ctx, "t", p.ID, state.Page{})
	must(t, "ListPrivateProviderVersions", err)
	if len(vs) != 0 {
		t.Errorf("versions after DeletePrivateProvider: %v, want none", vs)
	}
	// The same name and id again has no versions from before.
	mustCreate(t, r, p, nil)
	_, err = r.GetPrivateProviderVersion(ctx, "t", p.ID, "1.0.0")
	wantNotFound(t, "GetPrivateProviderVersion of a re-created provider", err)
}

func testVersions(t *testing.T, r state.Registry) {
	ctx := context.Background()
	p := mustCreate(t, r, privateProvider("t", "p", t0), nil)
	v := privateVersion(p, "1.0.0", t0)
	must(t, "CreatePrivateProviderVersion", r.CreatePrivateProviderVersion(ctx, v, 0))
	if err := r.CreatePrivateProviderVersion(ctx, v, 0); !errors.Is(err, state.ErrExists) {
		t.Errorf("CreatePrivateProviderVersion twice: %v, want ErrExists", err)
	}
	unknown := v
	unknown.ProviderID = "nope"
	wantNotFound(t, "CreatePrivateProviderVersion of an unknown provider", r.CreatePrivateProviderVersion(ctx, unknown, 0))
	got, err := r.GetPrivateProviderVersion(ctx, "t", p.ID, "1.0.0")
	must(t, "GetPrivateProviderVersion", err)
	if diff := cmp.Diff(v, got, ignoreSeq); diff != "" {
		t.Errorf("GetPrivateProviderVersion: -want +got\n%s", diff)
	}
	wantUTC(t, "GetPrivateProviderVersion", got.CreatedAt)
	_, err = r.GetPrivateProviderVersion(ctx, "t", p.ID, "2.0.0")
	wantNotFound(t, "GetPrivateProviderVersion(2.0.0)", err)
	must(t, "DeletePrivateProviderVersion", r.DeletePrivateProviderVersion(ctx, "t", p.ID, "1.0.0"))
	wantNotFound(t, "DeletePrivateProviderVersion again", r.DeletePrivateProviderVersion(ctx, "t", p.ID, "1.0.0"))
	if _, err := r.GetPrivateProvider(ctx, "t", "p"); err != nil {
		t.Errorf("the provider after its last version was deleted: %v, want it kept", err)
	}
}

func testVersionTenancy(t *testing.T, r state.Registry) {
	ctx := context.Background()
	p := mustCreate(t, r, privateProvider("a", "p", t0), nil)
	v := privateVersion(p, "1.0.0", t0)
	must(t, "CreatePrivateProviderVersion", r.CreatePrivateProviderVersion(ctx, v, 0))
	theirs := v
	theirs.Tenant, theirs.Version = "b", "2.0.0"
	wantNotFound(t, "CreatePrivateProviderVersion under another tenant's provider", r.CreatePrivateProviderVersion(ctx, theirs, 0))
	_, err := r.GetPrivateProviderVersion(ctx, "b", p.ID, "1.0.0")
	wantNotFound(t, "GetPrivateProviderVersion of another tenant", err)
	wantNotFound(t, "DeletePrivateProviderVersion of another tenant", r.DeletePrivateProviderVersion(ctx, "b", p.ID, "1.0.0"))
	vs, err := r.ListPrivateProviderVersions(ctx, "b", p.ID, state.Page{})
	must(t, "ListPrivateProviderVersions", err)
	if len(vs) != 0 {
		t.Errorf("ListPrivateProviderVersions of another tenant = %v, want none", vs)
	}
}

func testVersionQuota(t *testing.T, r state.Registry) {
	ctx := context.Background()
	p := mustCreate(t, r, privateProvider("t", "p", t0), nil)
	must(t, "CreatePrivateProviderVersion", r.CreatePrivateProviderVersion(ctx, privateVersion(p, "1.0.0", t0), 1))
	if err := r.CreatePrivateProviderVersion(ctx, privateVersion(p, "1.0.0", t0), 1); !errors.Is(err, state.ErrExists) {
		t.Errorf("CreatePrivateProviderVersion of an existing version at the quota: %v, want ErrExists", err)
	}
	if err := r.CreatePrivateProviderVersion(ctx, privateVersion(p, "2.0.0", t0), 1); !errors.Is(err, state.ErrQuota) {
		t.Errorf("CreatePrivateProviderVersion past the quota: %v, want ErrQuota", err)
	}
}

func testVersionPages(t *testing.T, r state.Registry) {
	ctx := context.Background()
	p := mustCreate(t, r, privateProvider("t", "p", t0), nil)
	other := mustCreate(t, r, privateProvider("t", "q", t0), nil)
	must(t, "CreatePrivateProviderVersion", r.CreatePrivateProviderVersion(ctx, privateVersion(other, "a", t0), 0))
	for _, n := range []struct {
		version string
		at      time.Time
	}{{"a", t0}, {"b", t0}, {"c", t0.Add(time.Second)}} {
		must(t, "CreatePrivateProviderVersion", r.CreatePrivateProviderVersion(ctx, privateVersion(p, n.version, n.at), 0))
	}
	all, err := r.ListPrivateProviderVersions(ctx, "t", p.ID, state.Page{})
	must(t, "ListPrivateProviderVersions", err)
	seq := map[string]int64{}
	for _, v := range all {
		seq[v.Version] = v.Seq
	}
	for name, tc := range pageCases(func(n string) int64 { return seq[n] }) {
		t.Run(name, func(t *testing.T) {
			vs, err := r.ListPrivateProviderVersions(ctx, "t", p.ID, tc.page)
			must(t, "ListPrivateProviderVersions", err)
			var got []string
			for _, v := range vs {
				got = append(got, v.Version)
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("ListPrivateProviderVersions(%+v): -want +got\n%s", tc.page, diff)
			}
		})
	}
}

// testCreateProviderConcurrently: of many creates of one name, exactly one wins; a quota
// holds under concurrency.
func testCreateProviderConcurrently(t *testing.T, r state.Registry) {
	ctx := context.Background()
	const n = 8
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			p := privateProvider("t", "same", t0)
			p.ID = fmt.Sprint("id-", i)
			_, errs[i] = r.CreatePrivateProvider(ctx, p, nil, 0)
		})
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, state.ErrExists):
			t.Errorf("CreatePrivateProvider: %v, want nil or ErrExists", err)
		}
	}
	if won != 1 {
		t.Errorf("%d concurrent creates of one name succeeded, want 1", won)
	}
	for i := range n {
		wg.Go(func() {
			_, errs[i] = r.CreatePrivateProvider(ctx, privateProvider("q", fmt.Sprint("p", i), t0), nil, 3)
		})
	}
	wg.Wait()
	ps, err := r.ListPrivateProviders(ctx, "q", state.Page{})
	must(t, "ListPrivateProviders", err)
	if len(ps) != 3 {
		t.Errorf("%d providers after concurrent creates under a quota of 3, want 3", len(ps))
	}
}
