package pulumirpc

import (
	"context"

	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/cairn-dev/cairn/internal/provider/stopgrace"
)

// DefaultStopGrace is how long a call whose context ended (Ctrl-C, a cancelled run) may still
// run after the plugin was sent Cancel, before cairn abandons it. Pulumi's engine waits for
// in-flight operations without a limit on the first Ctrl-C; cairn bounds the wait as it does
// for terraform providers.
const DefaultStopGrace = stopgrace.Default

// call runs one mutating or reading RPC (Create, Update, Delete, Read) the way Pulumi's engine
// runs it when the deployment is cancelled: the RPC is not cut off, the plugin is sent Cancel
// (once per process) so that it returns promptly, and what it then returns (an id and
// properties with ErrorResourceInitFailed, usually) is kept. The RPC runs on a context only
// the stop grace ends, so a plugin that ignores Cancel is abandoned after that grace.
func (p *Provider) call(ctx context.Context, fn func(context.Context) error) error {
	return stopgrace.Run(ctx, p.opts.StopGrace, p.proc.signalCancellation, fn)
}

// signalCancellation sends Cancel once: the plugin is to end what it is doing, because the
// engine is going away (Pulumi's SignalCancellation on the first Ctrl-C). Unimplemented is
// fine; the reply does not matter.
func (p *process) signalCancellation() {
	p.cancelOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), cancelGrace)
		defer cancel()
		_, _ = p.client.Cancel(ctx, &emptypb.Empty{})
	})
}
