// Package widgetcontroller is a controller-runtime controller of the tests' Widget type
// (example.com/v1): what a user's operator does. It puts a finalizer on each widget, reports
// status.observedGeneration, status.endpoint and a Ready condition, reports Stalled with a
// message for a widget of size 13 (a failure kstatus recognizes), and on deletion removes its
// finalizer.
package widgetcontroller

import (
	"context"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// GVK is the Widget type.
var GVK = schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}

// Finalizer is what the controller puts on every widget.
const Finalizer = "example.com/cleanup"

// Run reconciles widgets until ctx is done; namespaces limits the watch (a tenant may not
// watch across namespaces), nil watches all. Delay is how long each widget takes to become
// ready after it is first seen.
func Run(ctx context.Context, cfg *rest.Config, namespaces []string, delay time.Duration) error {
	ctrl.SetLogger(logr.Discard())
	opts := ctrl.Options{Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0"}
	if len(namespaces) > 0 {
		opts.Cache.DefaultNamespaces = map[string]cache.Config{}
		for _, ns := range namespaces {
			opts.Cache.DefaultNamespaces[ns] = cache.Config{}
		}
	}
	mgr, err := ctrl.NewManager(cfg, opts)
	if err != nil {
		return err
	}
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(GVK)
	r := &reconciler{c: mgr.GetClient(), delay: delay}
	// Several managers may run in one process one after another (the tests): controller-runtime
	// otherwise refuses a name it has seen.
	skip := true
	if err := ctrl.NewControllerManagedBy(mgr).For(obj).Named("widgets").
		WithOptions(controller.Options{SkipNameValidation: &skip}).Complete(r); err != nil {
		return err
	}
	return mgr.Start(ctx)
}

type reconciler struct {
	c     client.Client
	delay time.Duration
}

func (r *reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	w := &unstructured.Unstructured{}
	w.SetGroupVersionKind(GVK)
	if err := r.c.Get(ctx, req.NamespacedName, w); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !w.GetDeletionTimestamp().IsZero() {
		if controllerutil.RemoveFinalizer(w, Finalizer) {
			return ctrl.Result{}, client.IgnoreNotFound(r.c.Update(ctx, w))
		}
		return ctrl.Result{}, nil
	}
	if controllerutil.AddFinalizer(w, Finalizer) {
		if err := r.c.Update(ctx, w); err != nil {
			return ctrl.Result{}, err
		}
	}
	if age := time.Since(w.GetCreationTimestamp().Time); age < r.delay {
		return ctrl.Result{RequeueAfter: r.delay - age}, nil
	}
	size, _, _ := unstructured.NestedInt64(w.Object, "spec", "size")
	var conds []metav1.Condition
	gen := w.GetGeneration()
	if size == 13 {
		conds = []metav1.Condition{
			{Type: "Ready", Status: metav1.ConditionFalse, Reason: "Unlucky", Message: "size 13 is unlucky", ObservedGeneration: gen},
			{Type: "Stalled", Status: metav1.ConditionTrue, Reason: "Unlucky", Message: "size 13 is unlucky", ObservedGeneration: gen},
		}
	} else {
		conds = []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Reconciled", Message: "the widget is ready", ObservedGeneration: gen}}
	}
	status := map[string]any{
		"observedGeneration": gen,
		"endpoint":           fmt.Sprintf("https://%s.%s.widgets.example", w.GetName(), w.GetNamespace()),
	}
	var list []any
	for _, c := range conds {
		list = append(list, map[string]any{"type": c.Type, "status": string(c.Status), "reason": c.Reason,
			"message": c.Message, "observedGeneration": c.ObservedGeneration,
			"lastTransitionTime": time.Now().UTC().Format(time.RFC3339)})
	}
	status["conditions"] = list
	old, _, _ := unstructured.NestedMap(w.Object, "status")
	if sameStatus(old, status) {
		return ctrl.Result{}, nil
	}
	if err := unstructured.SetNestedField(w.Object, status, "status"); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, r.c.Status().Update(ctx, w)
}

// sameStatus ignores transition times, so that a reconcile that changes nothing writes nothing.
func sameStatus(old, new map[string]any) bool {
	if old == nil || fmt.Sprint(old["observedGeneration"]) != fmt.Sprint(new["observedGeneration"]) || old["endpoint"] != new["endpoint"] {
		return false
	}
	oc, _ := old["conditions"].([]any)
	nc, _ := new["conditions"].([]any)
	if len(oc) != len(nc) {
		return false
	}
	for i := range oc {
		o, _ := oc[i].(map[string]any)
		n, _ := nc[i].(map[string]any)
		if o["type"] != n["type"] || o["status"] != n["status"] || o["message"] != n["message"] {
			return false
		}
	}
	return true
}
