package provider

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
)

// resourceFor is the client of obj's kind, namespaced when the kind is. When the kind is
// unknown it forgets what it discovered and asks again once (the kind's CRD may have been
// made since, by this very stack); with wait it keeps asking for up to 30 s, the time a new
// CRD takes to be served.
func (c *clients) resourceFor(ctx context.Context, obj *unstructured.Unstructured, wait bool) (dynamic.ResourceInterface, error) {
	gvk := obj.GroupVersionKind()
	deadline := time.Now().Add(30 * time.Second)
	for {
		mapping, err := c.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil && meta.IsNoMatchError(err) {
			c.mapper.Reset()
			mapping, err = c.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		}
		if err == nil {
			if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
				ns := obj.GetNamespace()
				if ns == "" {
					return nil, fmt.Errorf("%s is namespaced: give metadata.namespace", gvk.Kind)
				}
				return c.dyn.Resource(mapping.Resource).Namespace(ns), nil
			}
			return c.dyn.Resource(mapping.Resource), nil
		}
		if !wait || !meta.IsNoMatchError(err) || time.Now().After(deadline) {
			return nil, fmt.Errorf("%s: %w", c.name, err)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

func isNoMatch(err error) bool {
	return meta.IsNoMatchError(errors.Unwrap(err)) || meta.IsNoMatchError(err)
}

// waitReady polls the object until kstatus calls it Current. kstatus calls an object with no
// status conventions Current at once; a custom object whose controller has not written any
// status yet is waited for too, since its controller has not seen it.
func waitReady(ctx context.Context, ri dynamic.ResourceInterface, live *unstructured.Unstructured, timeout time.Duration) (*unstructured.Unstructured, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	last := "no status yet"
	for {
		res, err := status.Compute(live)
		if err != nil {
			return live, err
		}
		failed := failedCondition(live)
		switch {
		case failed != "":
			return live, errors.New(failed)
		case res.Status == status.FailedStatus:
			return live, fmt.Errorf("%s", res.Message)
		case res.Status == status.CurrentStatus && (hasStatus(live) || builtIn(live)):
			return live, nil
		}
		if res.Message != "" {
			last = res.Message
		}
		select {
		case <-ctx.Done():
			return live, fmt.Errorf("not ready after %s: %s (status %s)", timeout, last, res.Status)
		case <-time.After(250 * time.Millisecond):
		}
		next, err := ri.Get(ctx, live.GetName(), metav1.GetOptions{})
		if err != nil {
			if ctx.Err() != nil {
				return live, fmt.Errorf("not ready after %s: %s", timeout, last)
			}
			return live, errors.New(apiMessage(err))
		}
		live = next
	}
}

// failedCondition is the message of a Failed condition that is True, which fails the step
// as kstatus's Stalled does.
func failedCondition(obj *unstructured.Unstructured) string {
	conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == "Failed" && m["status"] == "True" {
			msg, _ := m["message"].(string)
			if msg == "" {
				msg, _ = m["reason"].(string)
			}
			return "Failed: " + msg
		}
	}
	return ""
}

func hasStatus(obj *unstructured.Unstructured) bool {
	st, ok := obj.Object["status"].(map[string]any)
	return ok && len(st) > 0
}

// builtIn reports kinds whose readiness kstatus knows without a status (core kinds) or that
// have no controller (CRDs carry their own conditions, which kstatus reads).
func builtIn(obj *unstructured.Unstructured) bool {
	g := obj.GroupVersionKind().Group
	return g == "" || !strings.Contains(g, ".") || g == "apiextensions.k8s.io"
}

// waitGone polls until the object is gone: its finalizers have run.
func waitGone(ctx context.Context, ri dynamic.ResourceInterface, name string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var fin []string
	for {
		live, err := ri.Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err == nil {
			fin = live.GetFinalizers()
		} else if ctx.Err() == nil {
			return errors.New(apiMessage(err))
		}
		if ctx.Err() != nil {
			return fmt.Errorf("still there after %s, waiting for its finalizers %v to be removed", timeout, fin)
		}
		select {
		case <-ctx.Done():
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// appliedFields is live cut to the fields of applied (what cairn manages), so that a refresh
// shows drift in those fields and nothing else.
func appliedFields(applied *unstructured.Unstructured, live *unstructured.Unstructured) map[string]any {
	out, _ := cut(applied.Object, live.Object).(map[string]any)
	if out == nil {
		out = map[string]any{}
	}
	return out
}

func cut(want, have any) any {
	if wl, ok := want.([]any); ok {
		// Element by element when the lengths match, so that server defaults inside list
		// items (a CRD default of items[].mode) are not read as drift.
		if hl, ok := have.([]any); ok && len(hl) == len(wl) {
			out := make([]any, len(hl))
			for i := range hl {
				out[i] = cut(wl[i], hl[i])
			}
			return out
		}
		return have
	}
	wm, ok := want.(map[string]any)
	if !ok {
		return have
	}
	hm, ok := have.(map[string]any)
	if !ok {
		return have
	}
	out := map[string]any{}
	for k, w := range wm {
		if h, ok := hm[k]; ok {
			out[k] = cut(w, h)
		}
	}
	return out
}

// describe names an object for messages: "Widget alpha/w1 (example.com/v1)".
func describe(obj *unstructured.Unstructured) string {
	name := obj.GetName()
	if ns := obj.GetNamespace(); ns != "" {
		name = ns + "/" + name
	}
	return fmt.Sprintf("%s %s (%s)", obj.GetKind(), name, obj.GetAPIVersion())
}

// objectID is the resource's id: apiVersion/kind/namespace/name, namespace empty for a
// cluster-scoped object.
func objectID(obj *unstructured.Unstructured) string {
	return strings.Join([]string{obj.GetAPIVersion(), obj.GetKind(), obj.GetNamespace(), obj.GetName()}, "/")
}

// apiMessage is the API server's own message (with every field error it lists), which says
// what to fix better than the client's wrapping does.
func apiMessage(err error) string {
	var se apierrors.APIStatus
	if errors.As(err, &se) {
		st := se.Status()
		msg := st.Message
		if st.Details != nil {
			for _, c := range st.Details.Causes {
				if c.Field != "" && !strings.Contains(msg, c.Field) {
					msg += fmt.Sprintf("; %s: %s", c.Field, c.Message)
				}
			}
		}
		return msg
	}
	return err.Error()
}
