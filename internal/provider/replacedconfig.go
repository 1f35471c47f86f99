package provider

// ConfigReplacer is a provider whose own configuration can be replaced within a run: a Pulumi
// provider resource whose DiffConfig answered replace. Every resource it serves is then
// replaced, and the objects made under the earlier configuration must be deleted through a
// provider configured with that earlier configuration, as Pulumi deletes them through the
// old provider (an old region's objects are not found in the new region).
type ConfigReplacer interface {
	// PriorConfig returns the configuration the instance's existing objects were made with,
	// and true, once its configuration was replaced in this run; false otherwise.
	PriorConfig() (ConfigureRequest, bool)
}
