package cli

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/cairn-dev/cairn/internal/budget"
)

// limitFlags are the budget flags of `cairn server` (internal/budget): each falls back to its
// CAIRN_ variable; 0 keeps the default, a negative value removes the limit.
type limitFlags struct {
	depth, aliasNodes, instances, resources, elements, bytes int64
	evalTime                                                 time.Duration
}

func addLimitFlags(cmd *cobra.Command) *limitFlags {
	l, d, f := &limitFlags{}, budget.Defaults, cmd.Flags()
	help := func(what, flag string, def any) string {
		return fmt.Sprintf("%s (env %s; 0: the default, %v; negative: no limit)", what, envName(flag[2:]), def)
	}
	f.Int64Var(&l.depth, "max-depth", 0, help("deepest nesting of a template value or expression", budget.Flag["depth"], d.Depth))
	f.Int64Var(&l.aliasNodes, "max-alias-nodes", 0, help("YAML nodes a template may reach through aliases", budget.Flag["alias-nodes"], d.AliasNodes))
	f.Int64Var(&l.instances, "max-instances", 0, help("instances of one count or for_each", budget.Flag["instances"], d.Instances))
	f.Int64Var(&l.resources, "max-resources", 0, help("resources of one stack, count and for_each expanded", budget.Flag["resources"], d.Resources))
	f.Int64Var(&l.elements, "max-elements", 0, help("collection elements one expression may build", budget.Flag["elements"], d.Elements))
	f.Int64Var(&l.bytes, "max-bytes", 0, help("string bytes one expression may build", budget.Flag["bytes"], d.Bytes))
	f.DurationVar(&l.evalTime, "max-eval-time", 0, help("wall time of one request's template parse and evaluation", budget.Flag["time"], d.Time))
	return l
}

// limits reads the flags, the CAIRN_ variable of each flag not given filling it in.
func (l *limitFlags) limits(cmd *cobra.Command, getenv func(string) string) (budget.Limits, error) {
	for _, flag := range budget.Flag {
		name := flag[2:]
		if v := getenv(envName(name)); v != "" && !cmd.Flags().Changed(name) {
			if err := cmd.Flags().Set(name, v); err != nil {
				return budget.Limits{}, usagef("%s=%q: %v", envName(name), v, err)
			}
		}
	}
	return budget.Limits{Depth: int(l.depth), AliasNodes: l.aliasNodes, Instances: l.instances, Resources: l.resources,
		Elements: l.elements, Bytes: l.bytes, Time: l.evalTime}, nil
}

// envLimits are the limits of an in-process cairn: the CAIRN_MAX_* variables `cairn server`
// reads, so that a stack too large for the defaults can be deployed without a server.
func envLimits(getenv func(string) string) (budget.Limits, error) {
	cmd := &cobra.Command{}
	return addLimitFlags(cmd).limits(cmd, getenv)
}
