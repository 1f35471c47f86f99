package main

// cairntest:index:Group is a component resource (isComponent in the schema): Construct
// registers the group on the engine's ResourceMonitor, then one cairntest:index:Thing per
// entry of its `values` input (named "<group>-<index>", value the entry, parented to the
// group), and returns `outs` (each thing's `out`) and `count`. Construct is recorded in the
// call log as "Construct <name>[ preview]".

import (
	"context"
	"fmt"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
)

const groupType = "cairntest:index:Group"

var groupSchema = map[string]any{
	"description": "A component: one Thing per entry of values.",
	"isComponent": true,
	"inputProperties": map[string]any{
		"values": map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "description": "One Thing per entry."},
	},
	"properties": map[string]any{
		"outs":  map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "description": "Each thing's out."},
		"count": map[string]any{"type": "number", "description": "How many things."},
	},
}

func (p *cairntest) Construct(ctx context.Context, req *pulumirpc.ConstructRequest) (*pulumirpc.ConstructResponse, error) {
	p.record("Construct", req.GetName(), req.GetDryRun())
	if req.GetType() != groupType {
		return nil, status.Errorf(codes.InvalidArgument, "cairntest has no component %s", req.GetType())
	}
	ins, err := unmarshal(req.GetInputs())
	if err != nil {
		return nil, err
	}
	conn, err := grpc.NewClient(req.GetMonitorEndpoint(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, fmt.Errorf("connect to the resource monitor: %w", err)
	}
	defer conn.Close()
	monitor := pulumirpc.NewResourceMonitorClient(conn)
	group, err := monitor.RegisterResource(ctx, &pulumirpc.RegisterResourceRequest{
		Type: groupType, Name: req.GetName(), Provider: req.GetProviders()["cairntest"],
	})
	if err != nil {
		return nil, fmt.Errorf("register %s: %w", req.GetName(), err)
	}
	var outs []resource.PropertyValue
	values := ins["values"]
	for values.IsSecret() {
		values = values.SecretValue().Element
	}
	if values.IsArray() {
		for i, v := range values.ArrayValue() {
			child, err := monitor.RegisterResource(ctx, &pulumirpc.RegisterResourceRequest{
				Type: thingType, Custom: true, Name: fmt.Sprintf("%s-%d", req.GetName(), i), Parent: group.GetUrn(),
				Version: cairntestVersion, Provider: req.GetProviders()["cairntest"], AcceptSecrets: true,
				Object: marshal(resource.PropertyMap{"value": v}),
			})
			if err != nil {
				return nil, fmt.Errorf("register thing %d: %w", i, err)
			}
			childOuts, err := unmarshal(child.GetObject())
			if err != nil {
				return nil, err
			}
			out, ok := childOuts["out"]
			if !ok {
				out = resource.MakeComputed(resource.NewProperty(""))
			}
			outs = append(outs, out)
		}
	}
	state := resource.PropertyMap{"outs": resource.NewProperty(outs), "count": resource.NewProperty(float64(len(outs)))}
	if _, err := monitor.RegisterResourceOutputs(ctx, &pulumirpc.RegisterResourceOutputsRequest{Urn: group.GetUrn(), Outputs: marshal(state)}); err != nil {
		return nil, fmt.Errorf("register the outputs of %s: %w", req.GetName(), err)
	}
	return &pulumirpc.ConstructResponse{Urn: group.GetUrn(), State: marshal(state)}, nil
}
