// Package tenant names who is calling cairn. The server resolves a caller's token to a tenant
// and puts it in the request's context; tenant-scoped parts of cairn (the private-provider
// registry, and the engine when it resolves private providers) read it from there. The tenants
// file of `cairn server --tenants` is parsed here too. It imports only the standard library.
package tenant

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
)

// Default is the tenant of the server's own token and of a server run with --no-auth.
const Default = "default"

type ctxKey struct{}

// With returns ctx carrying tenant name.
func With(ctx context.Context, name string) context.Context {
	return context.WithValue(ctx, ctxKey{}, name)
}

// From returns the tenant ctx carries, or Default when it carries none.
func From(ctx context.Context) string {
	if name, ok := ctx.Value(ctxKey{}).(string); ok && name != "" {
		return name
	}
	return Default
}

// nameRE is what a tenant name may be: it is stored with every tenant-scoped row.
var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

// ValidName reports whether name can name a tenant: 1..64 letters, digits, '_', '.', '-',
// starting with a letter or digit.
func ValidName(name string) bool { return nameRE.MatchString(name) }

// Parse reads a tenants file: one "TENANT TOKEN" pair per line, separated by spaces or tabs;
// blank lines and lines starting with # are skipped. It returns the tenant of each token.
// A tenant may have several tokens; a token may name one tenant only. src names the file in
// errors.
func Parse(src string, r io.Reader) (map[string]string, error) {
	tokens := map[string]string{}
	sc := bufio.NewScanner(r)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		fields := strings.Fields(text)
		if len(fields) != 2 {
			return nil, fmt.Errorf("%s:%d: want \"TENANT TOKEN\", got %d fields", src, line, len(fields))
		}
		name, tok := fields[0], fields[1]
		if !ValidName(name) {
			return nil, fmt.Errorf("%s:%d: invalid tenant name %q: want 1..64 letters, digits, '_', '.', '-', starting with a letter or digit", src, line, name)
		}
		if prev, ok := tokens[tok]; ok && prev != name {
			return nil, fmt.Errorf("%s:%d: the token of tenant %s is already the token of tenant %s", src, line, name, prev)
		}
		tokens[tok] = name
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("cannot read %s: %w", src, err)
	}
	return tokens, nil
}

// ParseFile reads the tenants file at path (see Parse).
func ParseFile(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read tenants file: %w", err)
	}
	defer f.Close()
	return Parse(path, f)
}
