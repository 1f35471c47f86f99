package cli

import (
	"strings"

	"github.com/spf13/cobra"
)

// examples are the Example fields of the commands, by command path (without "cairn "): one
// table, so that TestExamples can check that every command has them and that each line
// parses with the command's own flags. Lines starting with # are comments.
var examples = map[string]string{
	"": `# deploy the quickstart's template in-process (state in ./.cairn), then look at it
cairn deploy -f examples/quickstart/stack.yaml --stack demo -p HandlerUrl=http://127.0.0.1:9000
cairn describe --stack demo
# the same against a server
cairn stacks --server https://cairn.example.com:8443 --ca-file ca.pem`,
	"deploy": `cairn deploy -f stack.yaml --stack web -p Name=bob
cairn deploy -f stack.yaml --stack web --disable-rollback --timeout 30m
# a Terraform-language configuration in the current directory
cairn deploy --stack net --var region=eu-west-1 --var-file prod.tfvars
cairn deploy -f . --stack net --refresh --parallelism 8 -o json
# apply exactly the plan a preview saved, without asking
cairn deploy --plan net.plan
# in CI: never asks anyway when not on a terminal; --yes says so on a terminal
cairn deploy -f stack.yaml --stack web --yes`,
	"preview": `cairn preview -f stack.yaml --stack web -p Name=al
cairn preview -f . --stack net --refresh
# save the plan for cairn deploy --plan
cairn preview -f . --stack net --out net.plan`,
	"delete": `cairn delete --stack web
cairn delete --stack web --retain Bucket --timeout 10m
cairn delete --stack web --yes`,
	"cancel": `# stop a deploy (a CloudFormation stack rolls back), also one whose cairn process was killed
cairn cancel --stack web
# end it at once, without rollback, as terraform force-unlock does
cairn cancel --stack web --force
cairn cancel --stack web --force --yes -o json`,
	"import": `# adopt an existing object as a resource of a Terraform-language stack
cairn import aws_s3_bucket.logs my-log-bucket --stack net -f .`,
	"stacks": `cairn stacks
cairn stacks -o json`,
	"describe": `cairn describe --stack web
cairn describe --stack web -o json`,
	"events": `cairn events --stack web
cairn events --stack web --follow`,
	"outputs": `cairn outputs --stack web
cairn outputs --stack web -o json`,
	"validate": `cairn validate -f stack.yaml -p Name=bob
cat stack.yaml | cairn validate -f -
cairn validate -f . --var-file prod.tfvars`,
	"server": `cairn server --listen 127.0.0.1:8080 --dir /var/lib/cairn
cairn server --listen :8080 --public-url http://cairn.internal:8080 --tls-listen :8443`,
	"function": `cairn function create greeter --code ./src --runtime nodejs --handler index.handler
cairn function invoke greeter --payload '{"name":"bob"}'`,
	"function create": `cairn function create greeter --url https://hooks.example.com/greeter
cairn function create greeter --code ./build --runtime provided --timeout 1m
cairn function create greeter --code ./src --runtime nodejs --handler index.handler --memory 256
cairn function create greeter --code ./src --runtime python3.12 --handler index.handler --env GREETING=hello`,
	"function list":     `cairn function list`,
	"function describe": `cairn function describe greeter -o json`,
	"function delete":   `cairn function delete greeter`,
	"function invoke": `cairn function invoke greeter --payload '{"name":"bob"}'
cairn function invoke greeter --async`,
	"function logs": `cairn function logs greeter --limit 50
cairn function logs greeter --request-id 4f1c2d7e-0b9a-4c55-9d1e-3a2b1c0d9e8f
# the invocation that handled the custom-resource request whose RequestId a stack's events show
cairn function logs provisioner --request-id <RequestId>`,
	"provider": `cairn provider create acme --version 1.0.0 --function-urn urn:fss:cn-north-4:0123456789:function:default:acme:latest
cairn provider list`,
	"provider create": `cairn provider create acme --description "ACME resources"
cairn provider create acme --version 1.0.0 --function-urn urn:fss:cn-north-4:0123456789:function:default:acme:latest`,
	"provider list":   `cairn provider list -o json`,
	"provider show":   `cairn provider show acme`,
	"provider update": `cairn provider update acme --description "ACME resources, v2"`,
	"provider delete": `cairn provider delete acme`,
	"provider version": `cairn provider version create acme --version 1.1.0 --function-urn urn:fss:cn-north-4:0123456789:function:default:acme:latest
cairn provider version list acme`,
	"provider version create": `cairn provider version create acme --version 1.1.0 --function-urn urn:fss:cn-north-4:0123456789:function:default:acme:latest`,
	"provider version list":   `cairn provider version list acme`,
	"provider version show":   `cairn provider version show acme 1.1.0`,
	"provider version delete": `cairn provider version delete acme 1.1.0`,
	"provider serve": `cairn provider serve --provider ./terraform-provider-acme
cairn provider serve --provider ./terraform-provider-acme --listen :8000 --reuse --warm 4`,
	"secrets":            `cairn secrets rotate-key --dir /var/lib/cairn`,
	"secrets rotate-key": `cairn secrets rotate-key --dir /var/lib/cairn --secrets-key-file /etc/cairn/secrets.key`,
	"state": `cairn state pull --stack net --out terraform.tfstate
cairn state push terraform.tfstate --stack net -f .`,
	"state pull": `cairn state pull --stack net > terraform.tfstate
cairn state pull --stack net --out terraform.tfstate
# a Pulumi YAML stack, as pulumi stack export writes it
PULUMI_CONFIG_PASSPHRASE=... cairn state pull --stack web --out web.json`,
	"state push": `# move a stack from terraform to cairn
terraform state pull > terraform.tfstate
cairn state push terraform.tfstate --stack net -f .
# move a stack from pulumi to cairn
pulumi stack export --file web.json
PULUMI_CONFIG_PASSPHRASE=... cairn state push web.json --stack web -f .`,
	"refresh": `cairn refresh --stack net -f .
cairn refresh --stack net -f . --var-file prod.tfvars -o json`,
	"init": `cairn init
cairn init -f ./infra --upgrade`,
}

// setExamples gives every command its examples, indented as cobra's help shows them.
func setExamples(c *cobra.Command) {
	path := strings.TrimPrefix(strings.TrimPrefix(c.CommandPath(), "cairn"), " ")
	if ex, ok := examples[path]; ok && c.Example == "" {
		c.Example = "  " + strings.ReplaceAll(ex, "\n", "\n  ")
	}
	for _, sub := range c.Commands() {
		setExamples(sub)
	}
}
