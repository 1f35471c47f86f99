package test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cairn-dev/cairn/kube/test/widgetcontroller"
)

// TestControllerRuntime runs a controller-runtime manager of a tenant's own, limited to its
// namespace, against cairn's kube API: its streaming-list informers must sync, it reconciles
// 50 widgets to Ready, and deletion waits for the finalizer it removes.
func TestControllerRuntime(t *testing.T) {
	requireKubectl(t)
	s := startServer(t)
	s.apply("admin", widgetCRD)
	s.waitEstablished("widgets.example.com")

	cfg := s.restConfig("alpha")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ran := make(chan error, 1)
	go func() { ran <- widgetcontroller.Run(ctx, cfg, []string{"alpha-ns"}, 0) }()

	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	const n = 50
	for i := range n {
		w := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"color": "red", "size": int64(i % 10)}}}
		w.SetGroupVersionKind(widgetcontroller.GVK)
		w.SetNamespace("alpha-ns")
		w.SetName(fmt.Sprintf("w%03d", i))
		if err := c.Create(ctx, w); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, 90*time.Second, func() error {
		select {
		case err := <-ran:
			t.Fatalf("the controller stopped: %v", err)
		default:
		}
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(widgetcontroller.GVK.GroupVersion().WithKind("WidgetList"))
		if err := c.List(ctx, list, client.InNamespace("alpha-ns")); err != nil {
			return err
		}
		ready := 0
		for _, w := range list.Items {
			conds, _, _ := unstructured.NestedSlice(w.Object, "status", "conditions")
			for _, cond := range conds {
				m := cond.(map[string]any)
				if m["type"] == "Ready" && m["status"] == "True" && len(w.GetFinalizers()) == 1 {
					ready++
				}
			}
		}
		if ready != n {
			return fmt.Errorf("%d of %d widgets ready", ready, n)
		}
		return nil
	})

	w := &unstructured.Unstructured{}
	w.SetGroupVersionKind(widgetcontroller.GVK)
	key := types.NamespacedName{Namespace: "alpha-ns", Name: "w000"}
	if err := c.Get(ctx, key, w); err != nil {
		t.Fatal(err)
	}
	if ep, _, _ := unstructured.NestedString(w.Object, "status", "endpoint"); ep != "https://w000.alpha-ns.widgets.example" {
		t.Fatalf("status.endpoint = %q", ep)
	}
	if err := c.Delete(ctx, w); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, func() error {
		err := c.Get(ctx, key, w)
		if client.IgnoreNotFound(err) != nil {
			return err
		}
		if err == nil {
			return fmt.Errorf("w000 still there, finalizers %v", w.GetFinalizers())
		}
		return nil
	})
}

// restConfig is the client configuration of user's kubeconfig.
func (s *cairnServer) restConfig(user string) *rest.Config {
	s.t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(s.dir, user+".kubeconfig"))
	if err != nil {
		s.t.Fatal(err)
	}
	cfg.QPS, cfg.Burst = 500, 1000
	return cfg
}
