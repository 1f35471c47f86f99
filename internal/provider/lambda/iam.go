package lambda

import (
	"context"
	"crypto/sha256"
	"encoding/base32"
	"fmt"

	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/provider"
)

// IAMTypes are the role and policy types IAM serves: templates that give their Lambda function
// a role carry them, and cairn, which runs functions as its own user, has nothing to apply.
var IAMTypes = []string{"AWS::IAM::Role", "AWS::IAM::Policy", "AWS::IAM::ManagedPolicy", "ALIYUN::RAM::Role"}

// AcceptFlag is how an operator allows them; docs/custom-resources.md explains it.
const AcceptFlag = "--accept-iam-noop (env CAIRN_ACCEPT_IAM_NOOP=true)"

// IAM records roles and policies without applying anything, when Accept is set; otherwise
// its Check refuses them, naming the flag.
type IAM struct {
	provider.Unimplemented
	Accept bool
}

var _ provider.Provider = (*IAM)(nil)

// Check refuses the resource unless the operator accepted no-op IAM.
func (p *IAM) Check(_ context.Context, req provider.CheckRequest) (provider.CheckResponse, error) {
	resp := provider.CheckResponse{Props: req.Props}
	if !p.Accept {
		resp.Failures = []provider.CheckFailure{{Reason: fmt.Sprintf("%s is not applied by cairn: functions run as cairn's own user, "+
			"with no %s in between. To deploy this template with the %s recorded and nothing applied, start cairn with %s",
			req.Resource.Type, iamName(req.Resource.Type), kindOf(req.Resource.Type), AcceptFlag)}}
		return resp, nil
	}
	resp.Warnings = []provider.CheckFailure{{Reason: fmt.Sprintf("%s is recorded only: cairn applies no permissions (%s)",
		req.Resource.Type, AcceptFlag)}}
	return resp, nil
}

func iamName(typ string) string {
	if typ == "ALIYUN::RAM::Role" {
		return "RAM"
	}
	return "IAM"
}

func kindOf(typ string) string {
	if typ == "AWS::IAM::Policy" || typ == "AWS::IAM::ManagedPolicy" {
		return "policy"
	}
	return "role"
}

// Diff: any change is an update, which records the new properties.
func (p *IAM) Diff(_ context.Context, req provider.DiffRequest) (provider.DiffResponse, error) {
	oldProps, _ := req.OldProps.UnmarkDeep()
	newProps, _ := req.NewProps.UnmarkDeep()
	if newProps == cty.NilVal || !newProps.IsWhollyKnown() || oldProps == cty.NilVal || !oldProps.Equals(newProps).True() {
		return provider.DiffResponse{Changed: true}, nil
	}
	return provider.DiffResponse{}, nil
}

// Create records the resource: its name and the attributes a template reads.
func (p *IAM) Create(_ context.Context, req provider.CreateRequest) (provider.CreateResponse, error) {
	if !p.Accept {
		return provider.CreateResponse{NotCreated: "no-op IAM is not accepted"}, fmt.Errorf("%s needs %s", req.Resource.Type, AcceptFlag)
	}
	id := p.id(req.Resource, req.Props, req.Token)
	return provider.CreateResponse{ID: id, Outputs: iamOutputs(req.Resource, id)}, nil
}

// Update records the new properties; a new name is a new id.
func (p *IAM) Update(_ context.Context, req provider.UpdateRequest) (provider.UpdateResponse, error) {
	id := req.ID
	if name, ok := p.name(req.Resource.Type, req.NewProps); ok {
		id = name
	}
	return provider.UpdateResponse{ID: id, Outputs: iamOutputs(req.Resource, id)}, nil
}

// Delete has nothing to delete.
func (p *IAM) Delete(context.Context, provider.DeleteRequest) (provider.DeleteResponse, error) {
	return provider.DeleteResponse{}, nil
}

func (p *IAM) name(typ string, props cty.Value) (string, bool) {
	switch typ {
	case "AWS::IAM::Role", "ALIYUN::RAM::Role":
		return stringProp(props, "RoleName")
	case "AWS::IAM::ManagedPolicy":
		return stringProp(props, "ManagedPolicyName")
	case "AWS::IAM::Policy":
		return stringProp(props, "PolicyName")
	}
	return "", false
}

func (p *IAM) id(res provider.Resource, props cty.Value, token string) string {
	if name, ok := p.name(res.Type, props); ok && name != "" {
		return name
	}
	return generatedName(res, token)
}

// iamOutputs are the attributes of the type: a role's Arn and RoleId (RAM: Arn, RoleId,
// RoleName), a managed policy's PolicyArn, a policy's Id.
func iamOutputs(res provider.Resource, id string) cty.Value {
	sum := sha256.Sum256([]byte(res.StackKey + "\n" + res.Name + "\n" + id))
	unique := base32.StdEncoding.EncodeToString(sum[:])[:17]
	switch res.Type {
	case "AWS::IAM::Role":
		return cty.ObjectVal(map[string]cty.Value{"Arn": cty.StringVal(fmt.Sprintf("arn:aws:iam::%s:role/%s", res.AccountID, id)),
			"RoleId": cty.StringVal("AROA" + unique)})
	case "ALIYUN::RAM::Role":
		return cty.ObjectVal(map[string]cty.Value{"Arn": cty.StringVal(fmt.Sprintf("acs:ram::%s:role/%s", res.AccountID, id)),
			"RoleId": cty.StringVal(unique), "RoleName": cty.StringVal(id)})
	case "AWS::IAM::ManagedPolicy":
		return cty.ObjectVal(map[string]cty.Value{"PolicyArn": cty.StringVal(fmt.Sprintf("arn:aws:iam::%s:policy/%s", res.AccountID, id))})
	}
	return cty.ObjectVal(map[string]cty.Value{"Id": cty.StringVal(id)})
}
