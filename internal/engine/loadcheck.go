package engine

import (
	"strings"

	"github.com/zclconf/go-cty/cty"
)

// judgedAtRun says whether a Check failure of the load's validation (of a dialect whose run
// checks resources: DialectPolicy.ChecksInRun) is about a property not known yet (it comes from another resource or from an invoke read during the run): the run
// checks the resource again once it is known, and judges it then. Pulumi's engine never
// checks such a value before it is known, so a plugin may refuse an unknown where a known
// value would pass (a boolean input fed by an invoke's result).
func judgedAtRun(props cty.Value, property string) bool {
	key, _, _ := strings.Cut(property, ".")
	key, _, _ = strings.Cut(key, "[")
	props, _ = props.Unmark()
	if key == "" || props.IsNull() || !props.IsKnown() || !props.Type().IsObjectType() || !props.Type().HasAttribute(key) {
		return false
	}
	return !props.GetAttr(key).IsWhollyKnown()
}
