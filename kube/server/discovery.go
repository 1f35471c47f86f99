package server

import (
	"sort"
	"sync"

	apiextensionshelpers "k8s.io/apiextensions-apiserver/pkg/apihelpers"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/apiserver"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/tools/cache"
)

// watchLegacyGroups keeps the CRD groups in the legacy /apis list (APIGroupList). In a cluster
// the aggregator adds them; standalone, the list would hold apiextensions.k8s.io alone, and
// clients that use legacy discovery could not resolve any custom type. The aggregated form
// (/apis as APIGroupDiscoveryList) is kept by the library's own discovery controller.
func watchLegacyGroups(crds *apiserver.CustomResourceDefinitions) {
	informer := crds.Informers.Apiextensions().V1().CustomResourceDefinitions()
	manager := crds.GenericAPIServer.DiscoveryGroupManager
	var mu sync.Mutex
	listed := map[string]bool{}
	sync := func() {
		mu.Lock()
		defer mu.Unlock()
		all, err := informer.Lister().List(labels.Everything())
		if err != nil {
			return
		}
		groups := legacyGroups(all)
		for name := range listed {
			if _, ok := groups[name]; !ok {
				manager.RemoveGroup(name)
				delete(listed, name)
			}
		}
		for name, g := range groups {
			manager.AddGroup(g)
			listed[name] = true
		}
	}
	handler := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { sync() },
		UpdateFunc: func(any, any) { sync() },
		DeleteFunc: func(any) { sync() },
	}
	_, _ = informer.Informer().AddEventHandler(handler)
}

// legacyGroups is the APIGroup of every group with an established CRD: its served versions,
// highest priority first, the first preferred.
func legacyGroups(all []*apiextensionsv1.CustomResourceDefinition) map[string]metav1.APIGroup {
	versions := map[string]map[string]bool{}
	for _, crd := range all {
		if !apiextensionshelpers.IsCRDConditionTrue(crd, apiextensionsv1.Established) {
			continue
		}
		for _, v := range crd.Spec.Versions {
			if !v.Served {
				continue
			}
			if versions[crd.Spec.Group] == nil {
				versions[crd.Spec.Group] = map[string]bool{}
			}
			versions[crd.Spec.Group][v.Name] = true
		}
	}
	out := map[string]metav1.APIGroup{}
	for group, vs := range versions {
		var names []string
		for v := range vs {
			names = append(names, v)
		}
		sort.Slice(names, func(i, j int) bool { return version.CompareKubeAwareVersionStrings(names[i], names[j]) > 0 })
		g := metav1.APIGroup{Name: group}
		for _, v := range names {
			g.Versions = append(g.Versions, metav1.GroupVersionForDiscovery{GroupVersion: group + "/" + v, Version: v})
		}
		g.PreferredVersion = g.Versions[0]
		out[group] = g
	}
	return out
}
