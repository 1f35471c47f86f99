// Package registry is the private-provider registry of Huawei RFS (shared/spec/
// rfs-private-providers.md): the rules of names, versions, descriptions and function URNs,
// the RFS error codes, paging markers, provider ids, the nine operations of
// /v1/private-providers as a Service over a state.Registry, and Resolve, the lookup the engine
// uses to turn a template's huawei.com/private-provider/NAME at an exact version into the
// version's function URN. Every operation is scoped to a tenant (internal/tenant).
//
// It imports api (wire types), state and the standard library; HTTP lives in internal/server.
package registry
