package state

import (
	"context"
	"errors"
	"time"
)

// Function is a stored function definition (see internal/function). CodeDir is the copy of
// its code in cairn's data directory.
type Function struct {
	Tenant      string // "" is DefaultTenant; names are unique per tenant
	Name        string
	Kind        string // url, provided or nodejs
	URL         string
	Handler     string
	CodeDir     string
	Timeout     time.Duration
	MemoryMB    int
	Concurrency int
	Env         map[string]string // sealed at rest: values may be secrets
	// Code is the code's zip as uploaded, so that every replica can unpack it: written by
	// PutFunction and ReplaceFunction, read only by FunctionCode (Get and List leave it nil).
	Code      []byte
	CreatedAt time.Time
}

// ErrFunctionExists is returned by PutFunction when the name is taken.
var ErrFunctionExists = errors.New("function exists")

// Functions stores function definitions. It is not part of Store: backends that keep
// functions implement it besides.
type Functions interface {
	// PutFunction inserts f, or returns an error wrapping ErrFunctionExists when f.Tenant
	// has a function of that name.
	PutFunction(ctx context.Context, f Function) error
	// GetFunction returns tenant's function called name, or an error wrapping ErrNotFound.
	GetFunction(ctx context.Context, tenant, name string) (Function, error)
	// ListFunctions returns tenant's functions, by name.
	ListFunctions(ctx context.Context, tenant string) ([]Function, error)
	// ReplaceFunction replaces the definition of f.Tenant's function f.Name (keeping its
	// creation time), or returns an error wrapping ErrNotFound.
	ReplaceFunction(ctx context.Context, f Function) error
	// DeleteFunction removes tenant's function called name, or returns an error wrapping
	// ErrNotFound.
	DeleteFunction(ctx context.Context, tenant, name string) error
	// FunctionCode returns the code zip of tenant's function called name (nil for none), or
	// an error wrapping ErrNotFound.
	FunctionCode(ctx context.Context, tenant, name string) ([]byte, error)
}
