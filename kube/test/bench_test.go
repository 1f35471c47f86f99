package test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	apiextensionshelpers "k8s.io/apiextensions-apiserver/pkg/apihelpers"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// These benchmarks measure cairn's kube API through client-go, as issue 15 asks: there is no
// other Kubernetes API server on these machines to run beside it, so they print absolute
// figures, against the goals. Each runs once (-benchtime 1x); see bench/README.md.

var widgets = schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}

func benchServer(b *testing.B) (*cairnServer, dynamic.Interface) {
	requireKubectl(b)
	s := startServer(b)
	s.apply("admin", widgetCRD)
	s.waitEstablished("widgets.example.com")
	dyn, err := dynamic.NewForConfig(s.restConfig("admin"))
	if err != nil {
		b.Fatal(err)
	}
	return s, dyn
}

// createWidgets creates n widgets in ns with workers at once and returns the time it took.
func createWidgets(b *testing.B, dyn dynamic.Interface, ns string, n, workers int) time.Duration {
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	next := make(chan int)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				w := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "Widget",
					"metadata": map[string]any{"name": fmt.Sprintf("w%05d", i), "namespace": ns},
					"spec":     map[string]any{"color": "red", "size": int64(i % 100), "tags": []any{"a", "b"}}}}
				if _, err := dyn.Resource(widgets).Namespace(ns).Create(context.Background(), w, metav1.CreateOptions{}); err != nil {
					select {
					case errs <- err:
					default:
					}
				}
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	select {
	case err := <-errs:
		b.Fatal(err)
	default:
	}
	return time.Since(start)
}

// BenchmarkKubeCreate1000 creates 1,000 objects through client-go, one at a time and with 8
// at once. Goal: 1,000 objects in at most 10 s.
func BenchmarkKubeCreate1000(b *testing.B) {
	_, dyn := benchServer(b)
	for range b.N {
		d1 := createWidgets(b, dyn, "seq", 1000, 1)
		d8 := createWidgets(b, dyn, "par", 1000, 8)
		b.ReportMetric(1000/d1.Seconds(), "objects/s-1-client")
		b.ReportMetric(1000/d8.Seconds(), "objects/s-8-clients")
		b.Logf("1,000 objects: %.2f s one at a time, %.2f s with 8 at once", d1.Seconds(), d8.Seconds())
	}
}

// BenchmarkKubeListWatch10000 lists and watches 10,000 objects: a list in pages of 500 (as
// kubectl get), a list of all at once, and a watch from the start that delivers all of them.
func BenchmarkKubeListWatch10000(b *testing.B) {
	s, dyn := benchServer(b)
	d := createWidgets(b, dyn, "many", 10000, 8)
	b.Logf("created 10,000 objects in %.1f s (%.0f/s)", d.Seconds(), 10000/d.Seconds())
	ri := dyn.Resource(widgets).Namespace("many")
	ctx := context.Background()
	for range b.N {
		start := time.Now()
		count, cont := 0, ""
		for {
			l, err := ri.List(ctx, metav1.ListOptions{Limit: 500, Continue: cont})
			if err != nil {
				b.Fatal(err)
			}
			count += len(l.Items)
			if cont = l.GetContinue(); cont == "" {
				break
			}
		}
		paged := time.Since(start)
		start = time.Now()
		l, err := ri.List(ctx, metav1.ListOptions{})
		if err != nil || len(l.Items) != 10000 || count != 10000 {
			b.Fatalf("list: %v, %d and %d items", err, len(l.Items), count)
		}
		whole := time.Since(start)
		start = time.Now()
		w, err := ri.Watch(ctx, metav1.ListOptions{})
		if err != nil {
			b.Fatal(err)
		}
		seen := 0
		for range w.ResultChan() {
			if seen++; seen == 10000 {
				break
			}
		}
		w.Stop()
		watched := time.Since(start)
		b.ReportMetric(paged.Seconds(), "s-list-pages-of-500")
		b.ReportMetric(whole.Seconds(), "s-list-whole")
		b.ReportMetric(watched.Seconds(), "s-watch-10000")
		b.Logf("10,000 objects: list in pages of 500 %.2f s, whole %.2f s, watch from the start %.2f s; cairn-kube RSS %d MB",
			paged.Seconds(), whole.Seconds(), watched.Seconds(), s.kubeRSS()>>20)
	}
}

// BenchmarkKubeCRDs makes 100 CRDs, then 900 more, and measures how long each batch takes to
// become Established, cairn-kube's RSS after each, and how long a client's discovery of
// 1,000 CRDs takes (kubectl api-resources with an empty cache). Goal: 1,000 CRDs under 1 GB,
// no discovery stall.
func BenchmarkKubeCRDs(b *testing.B) {
	s, _ := benchServer(b)
	idle := s.kubeRSS()
	client, err := apiextensionsclient.NewForConfig(s.restConfig("admin"))
	if err != nil {
		b.Fatal(err)
	}
	for range b.N {
		d100 := makeCRDs(b, client, 0, 100)
		rss100 := s.kubeRSS()
		d1000 := makeCRDs(b, client, 100, 1000)
		rss1000 := s.kubeRSS()
		start := time.Now()
		cmd := exec.Command("kubectl", "--kubeconfig", s.kubeconfig("admin", s.adminTok), "api-resources", "--cache-dir", b.TempDir())
		out, err := cmd.CombinedOutput()
		if err != nil {
			b.Fatalf("kubectl api-resources: %v\n%s", err, tail(string(out), 2000))
		}
		discovery := time.Since(start)
		if n := strings.Count(string(out), "bench.example.com"); n < 1000 {
			b.Fatalf("discovery lists %d of 1,000 CRDs", n)
		}
		b.ReportMetric(d100.Seconds(), "s-100-crds-established")
		b.ReportMetric(d1000.Seconds(), "s-900-more-established")
		b.ReportMetric(float64(rss1000>>20), "MB-rss-1000-crds")
		b.ReportMetric(float64(rss1000-rss100)/900/(1<<20), "MB-per-crd")
		b.ReportMetric(discovery.Seconds(), "s-kubectl-discovery")
		b.Logf("CRDs Established: 100 in %.1f s, 900 more in %.1f s; RSS idle %d MB, 100 CRDs %d MB, 1,000 CRDs %d MB (%.2f MB per CRD); kubectl api-resources %.2f s",
			d100.Seconds(), d1000.Seconds(), idle>>20, rss100>>20, rss1000>>20, float64(rss1000-rss100)/900/(1<<20), discovery.Seconds())
	}
}

// makeCRDs creates CRDs from..to-1 (kinds Bench0000...) and waits until all are Established.
func makeCRDs(b *testing.B, client apiextensionsclient.Interface, from, to int) time.Duration {
	ctx := context.Background()
	start := time.Now()
	for i := from; i < to; i++ {
		kind := fmt.Sprintf("Bench%04d", i)
		plural := strings.ToLower(kind) + "s"
		crd := &apiextensionsv1.CustomResourceDefinition{
			ObjectMeta: metav1.ObjectMeta{Name: plural + ".bench.example.com"},
			Spec: apiextensionsv1.CustomResourceDefinitionSpec{
				Group: "bench.example.com", Scope: apiextensionsv1.NamespaceScoped,
				Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: plural, Singular: strings.ToLower(kind), Kind: kind},
				Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
					Subresources: &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}},
					Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object",
						Properties: map[string]apiextensionsv1.JSONSchemaProps{
							"spec": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
								"size": {Type: "integer"}, "color": {Type: "string", Enum: []apiextensionsv1.JSON{{Raw: []byte(`"red"`)}, {Raw: []byte(`"blue"`)}}}}},
							"status": {Type: "object", XPreserveUnknownFields: ptr(true)}}}}}},
			},
		}
		if _, err := client.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, crd, metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	for {
		l, err := client.ApiextensionsV1().CustomResourceDefinitions().List(ctx, metav1.ListOptions{})
		if err != nil {
			b.Fatal(err)
		}
		established := 0
		for i := range l.Items {
			if strings.HasSuffix(l.Items[i].Name, ".bench.example.com") && apiextensionshelpers.IsCRDConditionTrue(&l.Items[i], apiextensionsv1.Established) {
				established++
			}
		}
		if established >= to {
			return time.Since(start)
		}
		if time.Since(start) > 10*time.Minute {
			b.Fatalf("%d of %d CRDs Established after 10 minutes", established, to)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func ptr[T any](v T) *T { return &v }

// kubeRSS is the resident memory of the cairn-kube that the server runs, in bytes.
func (s *cairnServer) kubeRSS() int64 {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		f := strings.Fields(string(stat))
		if len(f) < 4 || f[1] != "(cairn-kube)" || f[3] != strconv.Itoa(s.pid) {
			continue
		}
		status, _ := os.ReadFile("/proc/" + e.Name() + "/status")
		for _, line := range strings.Split(string(status), "\n") {
			if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
				kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
				return kb << 10
			}
		}
	}
	return 0
}
