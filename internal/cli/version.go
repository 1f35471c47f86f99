package cli

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cairn-dev/cairn/internal/provider/tfplugin"
	"github.com/cairn-dev/cairn/internal/template/tflang"
)

// versionInfo is what `cairn version -o json` prints.
type versionInfo struct {
	Version           string `json:"version"`            // the module version, or "dev"
	Revision          string `json:"revision,omitempty"` // VCS revision the binary was built from
	Time              string `json:"time,omitempty"`     // its commit time
	Modified          bool   `json:"modified,omitempty"` // built from a work tree with changes
	Go                string `json:"go"`
	TerraformLanguage string `json:"terraformLanguage"` // the terraform release whose language cairn implements
	PluginProtocols   []int  `json:"pluginProtocols"`   // tfplugin protocol versions spoken to providers
}

// readBuildInfo is debug.ReadBuildInfo; tests replace it.
var readBuildInfo = debug.ReadBuildInfo

// buildVersion reads the binary's build information: a module version when built by `go
// install module@version`, else the VCS stamp of a `go build` in a checkout, else "dev".
func buildVersion() versionInfo {
	v := versionInfo{Version: "dev", Go: runtime.Version(), TerraformLanguage: tflang.LanguageVersion,
		PluginProtocols: tfplugin.Protocols}
	bi, ok := readBuildInfo()
	if !ok {
		return v
	}
	if bi.GoVersion != "" {
		v.Go = bi.GoVersion
	}
	if mv := bi.Main.Version; mv != "" && mv != "(devel)" {
		v.Version = mv
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Revision = s.Value
		case "vcs.time":
			v.Time = s.Value
		case "vcs.modified":
			v.Modified = s.Value == "true"
		}
	}
	return v
}

// String is the one-line form, as `cairn --version` prints it.
func (v versionInfo) String() string {
	s := "cairn " + v.Version
	if v.Revision != "" {
		rev := v.Revision
		if len(rev) > 12 {
			rev = rev[:12]
		}
		var extra []string
		if v.Time != "" {
			extra = append(extra, v.Time)
		}
		if v.Modified {
			extra = append(extra, "modified")
		}
		s += " (" + strings.Join(append([]string{rev}, extra...), ", ") + ")"
	}
	return s
}

// text is the long form of `cairn version`.
func (v versionInfo) text() string {
	protocols := make([]string, len(v.PluginProtocols))
	for i, p := range v.PluginProtocols {
		protocols[i] = fmt.Sprint(p)
	}
	return fmt.Sprintf("%s\ngo: %s\nterraform language: %s\ntfplugin protocols: %s\n",
		v, v.Go, v.TerraformLanguage, strings.Join(protocols, ", "))
}

func (r *runner) versionCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print cairn's version, its Go version, and the Terraform language and plugin protocols it implements",
		Example: "  cairn version\n" +
			"  cairn version -o json",
	}
	cmd.RunE = r.action(func(cmd *cobra.Command) error {
		v := buildVersion()
		if r.output == "json" {
			return writeJSON(r.env.Stdout, v)
		}
		_, err := fmt.Fprint(r.env.Stdout, v.text())
		return err
	})
	return cmd
}
