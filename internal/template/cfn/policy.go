package cfn

import "github.com/cairn-dev/cairn/internal/template"

// Policies are how the engine runs CloudFormation and ROS stacks, CloudFormation first:
// failures roll back, a provider's update replaces an object by returning a new physical id,
// resources are not read back (a custom resource cannot be), and a redeploy keeps the
// parameters it is not given (UsePreviousValue; ROS's UsePreviousParameters).
func Policies() []template.DialectPolicy {
	return []template.DialectPolicy{Policy(template.CloudFormation), Policy(template.ROS)}
}

// Policy is the policy of dialect d (CloudFormation or ROS).
func Policy(d template.Dialect) template.DialectPolicy {
	p := template.DialectPolicy{Dialect: template.CloudFormation, Name: "CloudFormation", StackType: "AWS::CloudFormation::Stack",
		RollsBack: true, ParseUsesStackID: true, RemembersParameters: true, Paths: paths, StackID: template.StackARN}
	if d == template.ROS {
		p.Dialect, p.Name, p.StackType = template.ROS, "ROS", "ALIYUN::ROS::Stack"
		p.StackID = func(_, _, _, unique string) string { return unique }
	}
	return p
}

func paths(r *template.Resource) template.ResourcePaths {
	at := "Resources." + r.Name
	return template.ResourcePaths{Resource: at, Type: at + ".Type", Properties: at + ".Properties"}
}
