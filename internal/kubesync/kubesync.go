// Package kubesync keeps the objects of the CRDs `cairn kube enable` made deployed: one stack
// per namespace (kube-NAMESPACE, of the server's tenant), a Terraform-language configuration
// of every such object in the namespace, deployed through cairn's engine (plan, journal,
// events, secrets) whenever an object changes. It writes each object's status
// (conditions Ready and Synced with reasons, the resource's computed attributes in
// status.atProvider), holds a finalizer so that `kubectl delete` destroys the resource first,
// and lists objects by polling (one list per enabled type per second).
package kubesync

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/cairn-dev/cairn/internal/kubetypes"
)

// Finalizer is what cairn holds on every object it deploys.
const Finalizer = "cairn.dev/stack"

// Stacks deploys and deletes the namespaces' stacks.
type Stacks interface {
	// Deploy deploys stack from files (a Terraform-language configuration) and returns the
	// attributes of each resource by address (secrets left out), or the reason it failed.
	Deploy(ctx context.Context, stack string, files map[string]string) (map[string]map[string]any, error)
	// Delete deletes stack; a stack that does not exist is no error.
	Delete(ctx context.Context, stack string) error
}

// Reconciler is the loop.
type Reconciler struct {
	Kube     *Client
	Stacks   Stacks
	Log      *slog.Logger
	Interval time.Duration // between lists; 0 means 1 s

	mu   sync.Mutex
	done map[string]string // namespace -> fingerprint last deployed
}

// object is one object of an enabled type.
type object struct {
	typ        kubetypes.Type
	path       string // its API path
	name       string
	generation int64
	deleting   bool
	finalizers []string
	spec       map[string]any
}

// Run reconciles until ctx is done.
func (r *Reconciler) Run(ctx context.Context) {
	interval := r.Interval
	if interval == 0 {
		interval = time.Second
	}
	r.done = map[string]string{}
	retryAt := map[string]time.Time{}
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(interval):
		}
		byNS, err := r.list(ctx)
		if err != nil {
			if ctx.Err() == nil {
				r.Log.Warn("kube reconciler: cannot list objects", "err", err)
			}
			continue
		}
		for ns, objs := range byNS {
			fp := fingerprint(objs)
			if r.done[ns] == fp || time.Now().Before(retryAt[ns]) {
				continue
			}
			if err := r.namespace(ctx, ns, objs); err != nil {
				r.Log.Warn("kube reconciler: namespace not in sync", "namespace", ns, "err", err)
				retryAt[ns] = time.Now().Add(10 * time.Second)
				continue
			}
			r.done[ns] = fp
			delete(retryAt, ns)
		}
	}
}

func fingerprint(objs []object) string {
	var parts []string
	for _, o := range objs {
		parts = append(parts, fmt.Sprintf("%s/%s/%d/%t/%v", o.typ.CRDName(), o.name, o.generation, o.deleting, slices.Contains(o.finalizers, Finalizer)))
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

// list reads every object of every enabled type, by namespace.
func (r *Reconciler) list(ctx context.Context) (map[string][]object, error) {
	var crds struct {
		Items []struct {
			Metadata struct {
				Annotations map[string]string `json:"annotations"`
			} `json:"metadata"`
			Spec struct {
				Group string `json:"group"`
				Names struct {
					Plural string `json:"plural"`
					Kind   string `json:"kind"`
				} `json:"names"`
			} `json:"spec"`
		} `json:"items"`
	}
	q := url.Values{"labelSelector": {kubetypes.LabelEnabled + "=true"}}
	if err := r.Kube.Do(ctx, "GET", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions?"+q.Encode(), "", nil, &crds); err != nil {
		return nil, err
	}
	out := map[string][]object{}
	for _, c := range crds.Items {
		t, err := kubetypes.ParseType(c.Metadata.Annotations, c.Spec.Group, c.Spec.Names.Kind, c.Spec.Names.Plural)
		if err != nil {
			continue
		}
		var list struct {
			Items []struct {
				Metadata struct {
					Name              string   `json:"name"`
					Namespace         string   `json:"namespace"`
					Generation        int64    `json:"generation"`
					DeletionTimestamp *string  `json:"deletionTimestamp"`
					Finalizers        []string `json:"finalizers"`
				} `json:"metadata"`
				Spec map[string]any `json:"spec"`
			} `json:"items"`
		}
		if err := r.Kube.Do(ctx, "GET", "/apis/"+t.Group+"/"+kubetypes.Version+"/"+t.Plural, "", nil, &list); err != nil {
			if IsNotFound(err) || isBusy(err) {
				continue // just made: not served yet
			}
			return nil, err
		}
		for _, it := range list.Items {
			m := it.Metadata
			out[m.Namespace] = append(out[m.Namespace], object{typ: t, name: m.Name, generation: m.Generation,
				deleting: m.DeletionTimestamp != nil, finalizers: m.Finalizers, spec: it.Spec,
				path: "/apis/" + t.Group + "/" + kubetypes.Version + "/namespaces/" + m.Namespace + "/" + t.Plural + "/" + m.Name})
		}
	}
	for ns := range r.done { // a namespace whose last object went: its stack goes too
		if _, ok := out[ns]; !ok {
			out[ns] = nil
		}
	}
	return out, nil
}

// isBusy reports a 429: the API server's storage of a new type is still starting.
func isBusy(err error) bool {
	se, ok := err.(*StatusError)
	return ok && se.Code == 429
}

// StackOf is the stack that holds a namespace's objects.
func StackOf(ns string) string { return "kube-" + ns }

// namespace deploys the stack of ns to hold exactly its live objects, then writes their
// status and releases the deleted ones.
func (r *Reconciler) namespace(ctx context.Context, ns string, objs []object) error {
	var live, gone []object
	for _, o := range objs {
		if o.deleting {
			if slices.Contains(o.finalizers, Finalizer) {
				gone = append(gone, o)
			}
			continue
		}
		live = append(live, o)
		if !slices.Contains(o.finalizers, Finalizer) {
			if err := r.Kube.MergePatch(ctx, o.path, map[string]any{"metadata": map[string]any{"finalizers": append(o.finalizers, Finalizer)}}); err != nil {
				return fmt.Errorf("cannot hold %s: %w", o.path, err)
			}
		}
	}
	stack := StackOf(ns)
	var attrs map[string]map[string]any
	var err error
	if len(live) == 0 {
		err = r.Stacks.Delete(ctx, stack)
	} else {
		files, ferr := Configuration(live)
		if ferr != nil {
			return ferr
		}
		attrs, err = r.Stacks.Deploy(ctx, stack, files)
	}
	now := time.Now().UTC().Format(time.RFC3339)
	for _, o := range live {
		st := map[string]any{"stack": stack, "observedGeneration": o.generation}
		if err != nil {
			st["conditions"] = conditions(now, o.generation, "False", "ReconcileError", err.Error())
		} else {
			st["conditions"] = conditions(now, o.generation, "True", "ReconcileSuccess", "deployed by stack "+stack)
			if a, ok := attrs[Address(o)]; ok {
				st["atProvider"] = a
			}
		}
		if perr := r.Kube.MergePatch(ctx, o.path+"/status", map[string]any{"status": st}); perr != nil && !IsNotFound(perr) {
			r.Log.Warn("kube reconciler: cannot write status", "object", o.path, "err", perr)
		}
	}
	if err != nil {
		return err
	}
	for _, o := range gone {
		rest := slices.DeleteFunc(slices.Clone(o.finalizers), func(f string) bool { return f == Finalizer })
		if err := r.Kube.MergePatch(ctx, o.path, map[string]any{"metadata": map[string]any{"finalizers": rest}}); err != nil && !IsNotFound(err) {
			return fmt.Errorf("cannot release %s: %w", o.path, err)
		}
	}
	return nil
}

func conditions(now string, gen int64, status, reason, msg string) []any {
	ready := "Available"
	if status != "True" {
		ready = "Unavailable"
	}
	return []any{
		map[string]any{"type": "Ready", "status": status, "reason": ready, "message": msg, "lastTransitionTime": now, "observedGeneration": gen},
		map[string]any{"type": "Synced", "status": status, "reason": reason, "message": msg, "lastTransitionTime": now, "observedGeneration": gen},
	}
}

// Address is the Terraform address of an object's resource in its namespace's stack.
func Address(o object) string { return o.typ.Name + "." + resourceName(o.name) }

// resourceName is a Kubernetes name as a Terraform resource name: '-' as '_', '.' as "_dot_".
func resourceName(name string) string {
	return "o_" + strings.NewReplacer(".", "_dot_", "-", "_").Replace(name)
}

// Configuration is the Terraform-language configuration (main.tf.json) of objs.
func Configuration(objs []object) (map[string]string, error) {
	providers := map[string]any{}
	resources := map[string]map[string]any{}
	for _, o := range objs {
		providers[o.typ.Provider.Type] = map[string]any{"source": o.typ.Provider.String(), "version": "= " + o.typ.Version}
		if resources[o.typ.Name] == nil {
			resources[o.typ.Name] = map[string]any{}
		}
		spec, _ := literal(o.spec).(map[string]any)
		if spec == nil {
			spec = map[string]any{}
		}
		resources[o.typ.Name][resourceName(o.name)] = spec
	}
	cfg := map[string]any{"terraform": map[string]any{"required_providers": providers}, "resource": resources}
	b, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return nil, err
	}
	return map[string]string{"main.tf.json": string(b)}, nil
}

// literal is v with every string escaped so that the Terraform language's JSON syntax reads it
// as the text it is: an object's "${file(...)}" must stay text, not become an expression
// evaluated on the server.
func literal(v any) any {
	switch x := v.(type) {
	case string:
		return escapeTemplate(x)
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[escapeTemplate(k)] = literal(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = literal(e)
		}
		return out
	}
	return v
}

func escapeTemplate(s string) string {
	return strings.NewReplacer("${", "$${", "%{", "%%{").Replace(s)
}
