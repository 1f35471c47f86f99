// Package pulumistate reads and writes Pulumi's deployment format (version 3, what
// `pulumi stack export` writes and `pulumi stack import` reads) for Pulumi YAML stacks: the
// stack resource, the providers, every resource with its URN, inputs and outputs, and secrets
// sealed as Pulumi's passphrase secrets provider seals them. It is the
// template.StateFormat the Pulumi YAML front end gives its stacks.
package pulumistate
