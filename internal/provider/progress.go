package provider

import "context"

type progressKey struct{}

// WithProgress returns ctx carrying report, which a provider calls (through ReportProgress)
// to say why a call is still in progress; the engine records each report as an event of the
// step's in-progress status.
func WithProgress(ctx context.Context, report func(reason string)) context.Context {
	return context.WithValue(ctx, progressKey{}, report)
}

// ReportProgress reports reason through the function WithProgress put in ctx; without one it
// does nothing. Call it from the goroutine that made the call.
func ReportProgress(ctx context.Context, reason string) {
	if f, ok := ctx.Value(progressKey{}).(func(string)); ok && f != nil {
		f(reason)
	}
}
