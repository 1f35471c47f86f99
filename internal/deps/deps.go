package deps
import (
_ "github.com/zclconf/go-cty/cty"
_ "gopkg.in/yaml.v3"
_ "github.com/spf13/cobra"
_ "modernc.org/sqlite"
_ "github.com/prometheus/client_golang/prometheus"
_ "github.com/google/go-cmp/cmp"
_ "github.com/rogpeppe/go-internal/testscript"
_ "github.com/aws/aws-lambda-go/cfn"
_ "golang.org/x/term"
_ "golang.org/x/sync/errgroup"
)
