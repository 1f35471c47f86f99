package cli

import (
	"fmt"
	"strings"

	"github.com/cairn-dev/cairn/internal/app"
)

// rotated renders the result of `cairn secrets rotate-key`.
func (v view) rotated(rot app.Rotation) error {
	if v.json {
		return writeJSON(v.w, rot)
	}
	fmt.Fprintf(v.w, "Re-encrypted %d secret values with key %s.\n", rot.Values, rot.New)
	switch {
	case rot.KeyFile != "":
		fmt.Fprintf(v.w, "%s now holds key %s alone: back it up again (old keys %s no longer open the state).\n",
			rot.KeyFile, rot.New, strings.Join(rot.Old, ", "))
	case len(rot.Old) > 0:
		fmt.Fprintf(v.w, "Remove keys %s from CAIRN_SECRETS_KEY: they no longer open the state.\n", strings.Join(rot.Old, ", "))
	}
	return nil
}
