package provider

// LazyConfigurer is a provider that can take its configuration without starting: it sends it
// just before the first call that needs the provider, and that call fails if the
// configuration does. The engine hands over a configuration this way only when it is the one
// the stack's resources were last applied with, so that a deploy with nothing to do starts
// nothing; a new or changed configuration is configured (and validated) at once.
type LazyConfigurer interface {
	ConfigureLazily(req ConfigureRequest)
}
