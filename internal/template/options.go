package template

import "time"

// Options are the resource options of Pulumi programs beyond the lifecycle flags every
// dialect shares (CreateBeforeDestroy, PreventDestroy, IgnoreChanges, DeletionPolicy). The
// engine honours each one; a dialect that has none leaves them zero.
type Options struct {
	// Parent is the logical name of the resource's parent in the same stack ("" for none):
	// the parent is created before it and deleted after it (it is in DependsOn too), and a
	// Pulumi state names the child under it.
	Parent string
	// ProviderOrdersReplace says the template did not choose the order of a replacement, so
	// the provider's Diff may ask for delete-first (DiffResponse.DeleteBeforeReplace) where
	// CreateBeforeDestroy is the default.
	ProviderOrdersReplace bool
	// Timeouts bound the provider's create, update, delete and read of the resource (zero:
	// the provider's own).
	Timeouts Timeouts
	// SecretOutputs are the top-level outputs stored and shown as secrets whatever the
	// provider says (Pulumi's additionalSecretOutputs).
	SecretOutputs []string
	// ReplaceOnChanges are property paths (Pulumi's syntax: `a.b`, `a[0]`, `a["k"]`, `*`)
	// whose change replaces the resource whatever the provider's Diff says.
	ReplaceOnChanges []string
	// DeletedWith names a resource whose deletion deletes this one too: when both are
	// deleted in one operation, this one's delete is not sent.
	DeletedWith string
	// ReplaceWith names resources whose replacement in an operation replaces this one too
	// (Pulumi's replaceWith). They are in DependsOn too, so they are decided first.
	ReplaceWith []string
	// IgnoreChangesText are the IgnoreChanges paths as the program wrote them, for a state
	// file that keeps them (a Pulumi deployment's ignoreChanges).
	IgnoreChangesText []string
	// HideDiffs are property paths whose changes a preview does not detail.
	HideDiffs []string
	// Aliases are the earlier logical names of the resource: state stored under one of them
	// is this resource's (as a moved block from it).
	Aliases []string
	// ImportID, when set, adopts the existing object of that id instead of creating one
	// (the import is also in Stack.Imports); the resource's inputs must match it.
	ImportID string
	// PropertyDeps are, by top-level input property, the resources its value uses (directly,
	// through variables or through invokes: a data resource's name), sorted; every property
	// the program sets has an entry (a Pulumi deployment's propertyDependencies).
	PropertyDeps map[string][]string
}

// Timeouts are a resource's custom operation timeouts.
type Timeouts struct {
	Create, Update, Delete, Read time.Duration
}
