package provisioner

import (
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hcldec"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/gocty"
)

// connectionAttrs is terraform's superset of the arguments of a connection block, SSH's and
// WinRM's together (internal/communicator/shared): a connection block is checked against it
// before anyone knows which communicator will read it.
var connectionAttrs = map[string]cty.Type{
	"host": cty.String, "type": cty.String, "user": cty.String, "password": cty.String, "port": cty.Number,
	"timeout": cty.String, "script_path": cty.String,
	// SSH
	"target_platform": cty.String, "private_key": cty.String, "certificate": cty.String, "host_key": cty.String,
	"agent": cty.Bool, "agent_identity": cty.String,
	"proxy_scheme": cty.String, "proxy_host": cty.String, "proxy_port": cty.Number, "proxy_user_name": cty.String,
	"proxy_user_password": cty.String,
	"bastion_host":        cty.String, "bastion_host_key": cty.String, "bastion_port": cty.Number, "bastion_user": cty.String,
	"bastion_password": cty.String, "bastion_private_key": cty.String, "bastion_certificate": cty.String,
	// WinRM
	"https": cty.Bool, "insecure": cty.Bool, "cacert": cty.String, "use_ntlm": cty.Bool,
}

// ConnectionSpec decodes a connection block (the resource's merged with the provisioner's).
var ConnectionSpec hcldec.Spec = func() hcldec.ObjectSpec {
	spec := hcldec.ObjectSpec{}
	for name, typ := range connectionAttrs {
		spec[name] = &hcldec.AttrSpec{Name: name, Type: typ, Required: name == "host"}
	}
	return spec
}()

// ConnectionSchema is the schema of a connection block, to check its arguments before
// anything is evaluated.
func ConnectionSchema() *hcl.BodySchema { return hcldec.ImpliedSchema(ConnectionSpec) }

// Defaults of a connection, terraform's (internal/communicator/ssh).
const (
	defaultUser           = "root"
	defaultPort           = 22
	defaultTimeout        = 5 * time.Minute
	defaultUnixScript     = "/tmp/terraform_%RAND%.sh"
	defaultWindowsScript  = "C:/windows/temp/terraform_%RAND%.cmd"
	targetPlatformUnix    = "unix"
	targetPlatformWindows = "windows"
)

// RefusedConnection reports why cairn does not open a connection of type typ ("" when it
// does): terraform knows ssh (the default) and winrm; cairn speaks SSH only.
func RefusedConnection(typ string) string {
	switch typ {
	case "", "ssh":
		return ""
	case "winrm":
		return `cairn does not open WinRM connections (connection type "winrm"): use an SSH connection (an OpenSSH server runs on Windows too, with target_platform = "windows"), or configure the machine with its own tools`
	}
	return fmt.Sprintf("connection type '%s' not supported", typ)
}

// endpoint is a machine an SSH connection logs in to: the target, or a bastion on the way.
type endpoint struct {
	host, user, password, privateKey, certificate, hostKey string
	port                                                   uint16
}

func (e endpoint) addr() string { return joinHostPort(e.host, e.port) }

// connection is a decoded SSH connection block with terraform's defaults filled in.
type connection struct {
	endpoint
	bastion        *endpoint
	scriptPath     string
	targetPlatform string
	timeout        time.Duration
}

// parseConnection reads a connection block's value as terraform's SSH communicator does
// (parseConnectionInfo), refusing what cairn does not do on a shared server.
func parseConnection(v cty.Value) (*connection, error) {
	if v.IsNull() || !v.Type().IsObjectType() {
		return nil, errors.New("Missing connection configuration for provisioner.")
	}
	if why := RefusedConnection(str(v, "type")); why != "" {
		return nil, errors.New(why)
	}
	c := &connection{endpoint: endpoint{host: str(v, "host"), user: str(v, "user"), password: str(v, "password"),
		privateKey: str(v, "private_key"), certificate: str(v, "certificate"), hostKey: str(v, "host_key")},
		scriptPath: str(v, "script_path"), targetPlatform: str(v, "target_platform")}
	var err error
	if c.port, err = port(v, "port"); err != nil {
		return nil, err
	}
	if a := attr(v, "agent"); !a.IsNull() && a.Type() == cty.Bool && a.True() {
		// The agent would be the one of the server's own user (SSH_AUTH_SOCK): its keys are not
		// the configuration's to use. terraform also uses it when agent is unset; cairn never.
		return nil, errors.New("cairn does not use an SSH agent (agent = true): the agent reachable from the cairn server belongs to " +
			"the server's own user, not to this configuration; give the key in private_key (or a password) instead")
	}
	if str(v, "proxy_host") != "" {
		return nil, errors.New("cairn does not connect through an HTTP proxy (proxy_host): connect directly, or through an SSH bastion (bastion_host)")
	}
	if c.user == "" {
		c.user = defaultUser
	}
	if c.host == "" {
		return nil, errors.New("host for provisioner cannot be empty")
	}
	if c.port == 0 {
		c.port = defaultPort
	}
	switch c.targetPlatform {
	case "":
		c.targetPlatform = targetPlatformUnix
	case targetPlatformUnix, targetPlatformWindows:
	default:
		return nil, fmt.Errorf("target_platform for provisioner has to be either %s or %s", targetPlatformUnix, targetPlatformWindows)
	}
	if c.scriptPath == "" {
		c.scriptPath = defaultUnixScript
		if c.targetPlatform == targetPlatformWindows {
			c.scriptPath = defaultWindowsScript
		}
	}
	c.timeout = defaultTimeout
	if t := str(v, "timeout"); t != "" {
		if d, err := time.ParseDuration(t); err == nil { // terraform falls back to the default too
			c.timeout = d
		}
	}
	if h := str(v, "bastion_host"); h != "" {
		b := &endpoint{host: h, user: str(v, "bastion_user"), password: str(v, "bastion_password"),
			privateKey: str(v, "bastion_private_key"), certificate: str(v, "bastion_certificate"), hostKey: str(v, "bastion_host_key")}
		if b.port, err = port(v, "bastion_port"); err != nil {
			return nil, err
		}
		// As terraform: what the bastion does not set it takes from the target's settings,
		// except its host key.
		if b.user == "" {
			b.user = c.user
		}
		if b.password == "" {
			b.password = c.password
		}
		if b.privateKey == "" {
			b.privateKey = c.privateKey
		}
		if b.certificate == "" {
			b.certificate = c.certificate
		}
		if b.port == 0 {
			b.port = c.port
		}
		c.bastion = b
	}
	return c, nil
}

func port(v cty.Value, name string) (uint16, error) {
	p := attr(v, name)
	if p.IsNull() || p.Type() != cty.Number {
		return 0, nil
	}
	var n uint16
	if err := gocty.FromCtyValue(p, &n); err != nil {
		return 0, fmt.Errorf("invalid %s: %w", name, err)
	}
	return n, nil
}
