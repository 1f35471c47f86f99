// Package budget bounds the work one request may make a shared server do. Every template
// parse and evaluation runs under a Budget carried in its context: nesting depth, YAML alias
// expansion, instances per count/for_each and per stack, the elements and bytes one expression
// may build, and wall time. Exceeding a limit is an *Exceeded error that names the limit and
// the server flag that changes it; the caller turns it into a diagnostic with a source range.
// Nothing here panics or allocates in proportion to what it refuses. It imports only the
// standard library, go-cty and yaml.v3.
package budget

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Limits are the bounds of one request. A zero field takes its default (Defaults); a negative
// one means no limit.
type Limits struct {
	// Depth bounds the nesting of a template value or expression (brackets, braces,
	// interpolations, YAML/JSON collections). It is checked before recursing, far below
	// Go's stack limit.
	Depth int
	// AliasNodes bounds the YAML nodes a document may reach through aliases and merge keys.
	AliasNodes int64
	// Instances bounds the instances of one count or for_each.
	Instances int64
	// Resources bounds the resources of one stack after count and for_each are expanded.
	Resources int64
	// Elements bounds the collection elements one expression (or one function call) may build.
	Elements int64
	// Bytes bounds the string bytes one expression (or one function call) may build.
	Bytes int64
	// Time bounds the wall time of one request's parse and evaluation.
	Time time.Duration
}

// Defaults are the limits of a server run without budget flags: generous for real templates
// (the largest public modules stay far below them), far below what would hurt a 2-core,
// 512 MB server. cty spends a microsecond or more and tens of bytes per element it builds
// (flatten of a 10⁶-element tuple: 2 s), hence half a million elements.
var Defaults = Limits{
	Depth:      200,
	AliasNodes: 100_000,
	Instances:  100_000,
	Resources:  200_000,
	Elements:   500_000,
	Bytes:      64 << 20,
	Time:       60 * time.Second,
}

// Flag names the server flag of each limit, as errors quote them.
var Flag = map[string]string{
	"depth":       "--max-depth",
	"alias-nodes": "--max-alias-nodes",
	"instances":   "--max-instances",
	"resources":   "--max-resources",
	"elements":    "--max-elements",
	"bytes":       "--max-bytes",
	"time":        "--max-eval-time",
}

// EnvName is the environment variable that sets a limit's flag: "--max-elements" ->
// CAIRN_MAX_ELEMENTS.
func EnvName(flag string) string {
	return "CAIRN_" + strings.ToUpper(strings.ReplaceAll(strings.TrimPrefix(flag, "--"), "-", "_"))
}

// withDefaults fills zero fields from Defaults.
func (l Limits) withDefaults() Limits {
	d := Defaults
	return Limits{Depth: or(l.Depth, d.Depth), AliasNodes: or(l.AliasNodes, d.AliasNodes),
		Instances: or(l.Instances, d.Instances), Resources: or(l.Resources, d.Resources),
		Elements: or(l.Elements, d.Elements), Bytes: or(l.Bytes, d.Bytes), Time: or(l.Time, d.Time)}
}

// or is v, or def when v is zero.
func or[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// Exceeded says a limit was reached. Limit is a key of Flag.
type Exceeded struct {
	Limit string
	Max   int64  // the limit's value (nanoseconds for "time")
	What  string // what reached it, e.g. "setproduct" or "count"; may be empty
}

func (e *Exceeded) Error() string {
	max := fmt.Sprint(e.Max)
	if e.Limit == "time" {
		max = time.Duration(e.Max).String()
	}
	what := ""
	if e.What != "" {
		what = e.What + ": "
	}
	flag := Flag[e.Limit]
	return fmt.Sprintf("%sexceeds the %s limit of this server (%s); the server's operator can change it with %s "+
		"(an in-process cairn reads %s)", what, e.Limit, max, flag, EnvName(flag))
}

// Named returns err with what as the name of what reached the limit, when err is an
// *Exceeded that names nothing yet; any other err unchanged.
func Named(err error, what string) error {
	var e *Exceeded
	if errors.As(err, &e) && e.What == "" {
		named := *e
		named.What = what
		return &named
	}
	return err
}

// IsExceeded reports whether err is or wraps an *Exceeded.
func IsExceeded(err error) bool {
	var e *Exceeded
	return errors.As(err, &e)
}

// Budget is the bound of one request. It is safe for concurrent use: counters that are shared
// (resources of a stack) live in Meters owned by one goroutine each, and the rest is read-only.
type Budget struct {
	ctx context.Context
	lim Limits
}

type ctxKey struct{}

// With returns a context whose Budget has lim (zero fields default) and whose evaluations stop
// when lim.Time has passed. Call the cancel function when the request is done.
func With(ctx context.Context, lim Limits) (context.Context, context.CancelFunc) {
	lim = lim.withDefaults()
	cancel := context.CancelFunc(func() {})
	if lim.Time > 0 {
		ctx, cancel = context.WithTimeoutCause(ctx, lim.Time, &Exceeded{Limit: "time", Max: int64(lim.Time)})
	}
	b := &Budget{ctx: ctx, lim: lim}
	return context.WithValue(ctx, ctxKey{}, b), cancel
}

// WithLimits returns ctx carrying a Budget with lim but no new deadline: for a run that
// outlives its request (a deploy in the background) yet must keep its request's bounds on
// evaluation. ctx's own cancellation still stops evaluations.
func WithLimits(ctx context.Context, lim Limits) context.Context {
	return context.WithValue(ctx, ctxKey{}, &Budget{ctx: ctx, lim: lim.withDefaults()})
}

// From returns the Budget ctx carries, or one with the default limits bound to ctx.
func From(ctx context.Context) *Budget {
	if ctx == nil {
		ctx = context.Background()
	}
	if b, ok := ctx.Value(ctxKey{}).(*Budget); ok {
		return b
	}
	return &Budget{ctx: ctx, lim: Defaults}
}

// Limits returns the limits in force.
func (b *Budget) Limits() Limits { return b.lim }

// Err returns a non-nil error once the request's time is up (an *Exceeded for "time") or the
// request was cancelled (its client went away): evaluations check it between steps.
func (b *Budget) Err() error {
	if b.ctx.Err() == nil {
		return nil
	}
	if cause := context.Cause(b.ctx); cause != nil {
		return cause
	}
	return b.ctx.Err()
}

// Depth returns an *Exceeded when depth is past the nesting limit. Call it before recursing.
func (b *Budget) Depth(depth int) error {
	if b.lim.Depth >= 0 && depth > b.lim.Depth {
		return &Exceeded{Limit: "depth", Max: int64(b.lim.Depth)}
	}
	return nil
}

// Instances returns an *Exceeded when n instances of one count or for_each are too many.
// what names the meta-argument ("count", "for_each").
func (b *Budget) Instances(n int64, what string) error {
	if b.lim.Instances >= 0 && (n < 0 || n > b.lim.Instances) {
		return &Exceeded{Limit: "instances", Max: b.lim.Instances, What: what}
	}
	return nil
}

// Meter counts what one evaluation builds: elements, bytes, alias nodes, resources. A Meter
// belongs to one goroutine. It checks the request's time every few hundred charges.
type Meter struct {
	b                                   *Budget
	elements, bytes, aliases, resources int64
	ticks                               int
}

// Meter returns a fresh meter: start one per expression evaluation (elements, bytes) or per
// document (alias nodes, resources).
func (b *Budget) Meter() *Meter { return &Meter{b: b} }

// Budget returns the meter's budget.
func (m *Meter) Budget() *Budget { return m.b }

func (m *Meter) tick() error {
	if m.ticks++; m.ticks&255 == 0 {
		return m.b.Err()
	}
	return nil
}

// charge adds n to *total and returns an *Exceeded naming limit when it passes max (a
// negative max: no limit; a negative n is refused as overflow).
func (m *Meter) charge(total *int64, n, max int64, limit, what string) error {
	if *total += n; n < 0 || max >= 0 && *total > max {
		return &Exceeded{Limit: limit, Max: max, What: what}
	}
	return m.tick()
}

// Elements charges n collection elements; what names what built them.
func (m *Meter) Elements(n int64, what string) error {
	return m.charge(&m.elements, n, m.b.lim.Elements, "elements", what)
}

// Bytes charges n string bytes; what names what built them.
func (m *Meter) Bytes(n int64, what string) error {
	return m.charge(&m.bytes, n, m.b.lim.Bytes, "bytes", what)
}

// AliasNodes charges n nodes reached through a YAML alias or merge key.
func (m *Meter) AliasNodes(n int64) error {
	return m.charge(&m.aliases, n, m.b.lim.AliasNodes, "alias-nodes", "YAML aliases")
}

// Resources charges n resources of a stack.
func (m *Meter) Resources(n int64) error {
	return m.charge(&m.resources, n, m.b.lim.Resources, "resources", "the stack's resources")
}

// Would reports, without charging, whether building n more elements (or bytes, for strings)
// would pass the limit: the check to make before an allocation whose size is known up front.
func (m *Meter) Would(elements, bytes int64, what string) error {
	if elements < 0 || m.b.lim.Elements >= 0 && elements > m.b.lim.Elements-m.elements {
		return &Exceeded{Limit: "elements", Max: m.b.lim.Elements, What: what}
	}
	if bytes < 0 || m.b.lim.Bytes >= 0 && bytes > m.b.lim.Bytes-m.bytes {
		return &Exceeded{Limit: "bytes", Max: m.b.lim.Bytes, What: what}
	}
	return nil
}
