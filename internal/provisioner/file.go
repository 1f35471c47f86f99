package provisioner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/hashicorp/hcl/v2/hcldec"
	"github.com/zclconf/go-cty/cty"
)

var fileSpec = hcldec.ObjectSpec{
	"source":      &hcldec.AttrSpec{Name: "source", Type: cty.String},
	"content":     &hcldec.AttrSpec{Name: "content", Type: cty.String},
	"destination": &hcldec.AttrSpec{Name: "destination", Type: cty.String, Required: true},
}

// validateFile is terraform's check of a file provisioner block: source or content, not both.
func validateFile(cfg cty.Value) *Invalid {
	source, content := attr(cfg, "source"), attr(cfg, "content")
	switch {
	case !source.IsNull() && !content.IsNull():
		return &Invalid{Summary: "Cannot set both 'source' and 'content'"}
	case source.IsNull() && content.IsNull():
		return &Invalid{Summary: "Must provide one of 'source' or 'content'"}
	}
	return nil
}

// file uploads content, or the file or directory source, to destination over the connection,
// as terraform's file provisioner: a directory source ending in "/" uploads what it holds.
func file(ctx context.Context, req Request) error {
	if err := fileUpload(ctx, req); err != nil {
		return fmt.Errorf("file provisioner error: %w", err)
	}
	return nil
}

func fileUpload(ctx context.Context, req Request) error {
	if inv := validateFile(req.Config); inv != nil {
		return inv
	}
	conn, err := parseConnection(req.Connection)
	if err != nil {
		return err
	}
	dst := str(req.Config, "destination")
	client, err := connectSSH(ctx, conn, nil)
	if err != nil {
		return err
	}
	defer client.Close()

	if c := attr(req.Config, "content"); !c.IsNull() {
		content := c.AsString()
		if err := client.uploadFile(dst, strings.NewReader(content), int64(len(content))); err != nil {
			return fmt.Errorf("Upload failed: %v", err)
		}
		return nil
	}
	given := str(req.Config, "source")
	src, err := localPath(req.Dir, given)
	if err != nil {
		return err
	}
	fi, err := os.Stat(src)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			pe.Path = given // as the configuration says it, not where the server keeps it
		}
		return err
	}
	if fi.IsDir() {
		if err := client.uploadDir(dst, src, strings.HasSuffix(given, "/")); err != nil {
			return fmt.Errorf("Upload failed: %v", err)
		}
		return nil
	}
	f, err := os.Open(src)
	if err != nil {
		return err
	}
	defer f.Close()
	if fi, err = f.Stat(); err != nil {
		return err
	}
	if err := client.uploadFile(dst, f, fi.Size()); err != nil {
		return fmt.Errorf("Upload failed: %v", err)
	}
	return nil
}

// localPath is where a path of the configuration is on this machine: relative to dir (the
// provisioners' working directory), "~/" the home of the user cairn runs as, as terraform's
// homedir expansion.
func localPath(dir, p string) (string, error) {
	if p == "~" || strings.HasPrefix(p, "~/") {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", err
		}
		return filepath.Join(home, p[1:]), nil
	}
	if filepath.IsAbs(p) || dir == "" {
		return p, nil
	}
	return filepath.Join(dir, p), nil
}
