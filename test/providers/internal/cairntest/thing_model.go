package cairntest

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
)

// defaultProtocol is the default of a rule's protocol.
const defaultProtocol = "tcp"

// thingModel is cairntest_thing as the protocol 5 schema has it.
type thingModel struct {
	ID        types.String `tfsdk:"id"`
	Name      types.String `tfsdk:"name"`
	Size      types.Int64  `tfsdk:"size"`
	Tags      types.Map    `tfsdk:"tags"`
	Secret    types.String `tfsdk:"secret"`
	CreatedAt types.String `tfsdk:"created_at"`
	Revision  types.Int64  `tfsdk:"revision"`
	FailOn    types.String `tfsdk:"fail_on"`
	Rule      []ruleModel  `tfsdk:"rule"`
}

// thingModel6 adds the protocol 6 only nested attribute.
type thingModel6 struct {
	thingModel
	Settings types.Object `tfsdk:"settings"`
}

type ruleModel struct {
	Port     types.Int64  `tfsdk:"port"`
	Protocol types.String `tfsdk:"protocol"`
}

type settingsModel struct {
	Mode     types.String `tfsdk:"mode"`
	Replicas types.Int64  `tfsdk:"replicas"`
}

var (
	settingsAttrTypes = map[string]attr.Type{"mode": types.StringType, "replicas": types.Int64Type}
	ruleAttrTypes     = map[string]attr.Type{"port": types.Int64Type, "protocol": types.StringType}
)

type getter interface {
	Get(context.Context, any) diag.Diagnostics
}

type setter interface {
	Set(context.Context, any) diag.Diagnostics
}

// getThing reads a whole plan, state or configuration; settings is null under protocol 5.
func getThing(ctx context.Context, protocol int, g getter) (thingModel, types.Object, diag.Diagnostics) {
	if protocol == 6 {
		var m thingModel6
		diags := g.Get(ctx, &m)
		return m.thingModel, m.Settings, diags
	}
	var m thingModel
	diags := g.Get(ctx, &m)
	return m, types.ObjectNull(settingsAttrTypes), diags
}

// setThing writes a whole state.
func setThing(ctx context.Context, protocol int, s setter, m thingModel, settings types.Object) diag.Diagnostics {
	if protocol == 6 {
		return s.Set(ctx, thingModel6{thingModel: m, Settings: settings})
	}
	return s.Set(ctx, m)
}

// recordFromModel turns planned values into a record; the computed id, created_at and
// revision are left for the caller.
func recordFromModel(ctx context.Context, m thingModel, settings types.Object) (thingRecord, diag.Diagnostics) {
	var diags diag.Diagnostics
	rec := thingRecord{Name: m.Name.ValueString(), Rules: []ruleRecord{}}
	if !m.Size.IsNull() && !m.Size.IsUnknown() {
		v := m.Size.ValueInt64()
		rec.Size = &v
	}
	if !m.Tags.IsNull() && !m.Tags.IsUnknown() {
		tags := map[string]string{}
		diags.Append(m.Tags.ElementsAs(ctx, &tags, false)...)
		if tags == nil {
			tags = map[string]string{}
		}
		rec.Tags = tags
	}
	if !m.Secret.IsNull() && !m.Secret.IsUnknown() {
		v := m.Secret.ValueString()
		rec.Secret = &v
	}
	if !m.FailOn.IsNull() && !m.FailOn.IsUnknown() {
		v := m.FailOn.ValueString()
		rec.FailOn = &v
	}
	for _, r := range m.Rule {
		p := r.Protocol.ValueString()
		if r.Protocol.IsNull() || r.Protocol.IsUnknown() {
			p = defaultProtocol
		}
		rec.Rules = append(rec.Rules, ruleRecord{Port: r.Port.ValueInt64(), Protocol: p})
	}
	if !settings.IsNull() && !settings.IsUnknown() {
		var s settingsModel
		diags.Append(settings.As(ctx, &s, basetypes.ObjectAsOptions{})...)
		rec.Settings = &settingsRecord{}
		if !s.Mode.IsNull() && !s.Mode.IsUnknown() {
			v := s.Mode.ValueString()
			rec.Settings.Mode = &v
		}
		if !s.Replicas.IsNull() && !s.Replicas.IsUnknown() {
			v := s.Replicas.ValueInt64()
			rec.Settings.Replicas = &v
		}
	}
	return rec, diags
}

// modelFromRecord turns a record into state values.
func modelFromRecord(ctx context.Context, rec thingRecord) (thingModel, types.Object, diag.Diagnostics) {
	var diags diag.Diagnostics
	m := thingModel{
		ID:        types.StringValue(rec.ID),
		Name:      types.StringValue(rec.Name),
		Size:      types.Int64PointerValue(rec.Size),
		Tags:      types.MapNull(types.StringType),
		Secret:    types.StringPointerValue(rec.Secret),
		CreatedAt: types.StringValue(rec.CreatedAt),
		Revision:  types.Int64Value(rec.Revision),
		FailOn:    types.StringPointerValue(rec.FailOn),
		Rule:      []ruleModel{},
	}
	if rec.Tags != nil {
		var d diag.Diagnostics
		m.Tags, d = types.MapValueFrom(ctx, types.StringType, rec.Tags)
		diags.Append(d...)
	}
	for _, r := range rec.Rules {
		m.Rule = append(m.Rule, ruleModel{Port: types.Int64Value(r.Port), Protocol: types.StringValue(r.Protocol)})
	}
	settings := types.ObjectNull(settingsAttrTypes)
	if rec.Settings != nil {
		var d diag.Diagnostics
		settings, d = types.ObjectValueFrom(ctx, settingsAttrTypes, settingsModel{
			Mode:     types.StringPointerValue(rec.Settings.Mode),
			Replicas: types.Int64PointerValue(rec.Settings.Replicas),
		})
		diags.Append(d...)
	}
	return m, settings, diags
}
