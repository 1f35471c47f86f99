package tfplugin

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/msgpack"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/cairn-dev/cairn/internal/provider"
	tf5 "github.com/cairn-dev/cairn/internal/tfplugin5"
)

// recordingConn is a grpc.ClientConnInterface with no network at all, as a later transport
// (an HTTP envelope) will be: it records the methods called and answers a few of them. The
// plan blocks until Stop arrives.
type recordingConn struct {
	mu      sync.Mutex
	methods []string
	stopped chan struct{}
}

func (c *recordingConn) Invoke(ctx context.Context, method string, args, reply any, _ ...grpc.CallOption) error {
	c.mu.Lock()
	c.methods = append(c.methods, method)
	c.mu.Unlock()
	switch method {
	case "/tfplugin5.Provider/GetMetadata":
		return status.Error(codes.Unimplemented, "no GetMetadata here")
	case "/tfplugin5.Provider/GetSchema":
		r := reply.(*tf5.GetProviderSchema_Response)
		r.ResourceSchemas = map[string]*tf5.Schema{"rec_thing": {Block: &tf5.Schema_Block{Attributes: []*tf5.Schema_Attribute{
			{Name: "id", Type: []byte(`"string"`), Computed: true},
			{Name: "wait", Type: []byte(`"bool"`), Optional: true},
		}}}}
		r.ServerCapabilities = &tf5.ServerCapabilities{PlanDestroy: true}
		return nil
	case "/tfplugin5.Provider/PlanResourceChange":
		req := args.(*tf5.PlanResourceChange_Request)
		ty := cty.Object(map[string]cty.Type{"id": cty.String, "wait": cty.Bool})
		proposed, err := msgpack.Unmarshal(req.ProposedNewState.Msgpack, ty)
		if err != nil {
			return err
		}
		if w := proposed.GetAttr("wait"); !w.IsNull() && w.True() {
			select {
			case <-c.stopped:
				reply.(*tf5.PlanResourceChange_Response).Diagnostics = []*tf5.Diagnostic{{Severity: tf5.Diagnostic_ERROR, Summary: "stopped"}}
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		planned := cty.ObjectVal(map[string]cty.Value{"id": cty.UnknownVal(cty.String), "wait": proposed.GetAttr("wait")})
		b, _ := msgpack.Marshal(planned, ty)
		reply.(*tf5.PlanResourceChange_Response).PlannedState = &tf5.DynamicValue{Msgpack: b}
		return nil
	case "/tfplugin5.Provider/Stop":
		close(c.stopped)
		return nil
	}
	return status.Errorf(codes.Unimplemented, "%s", method)
}

func (c *recordingConn) NewStream(context.Context, *grpc.StreamDesc, string, ...grpc.CallOption) (grpc.ClientStream, error) {
	return nil, errors.New("no streams")
}

// TestConn5OverAnyConn runs the tfplugin5 adapter over a connection that is not go-plugin's:
// method paths are tfplugin5's, GetSchema follows an unimplemented GetMetadata, and a
// cancelled call sends Stop.
func TestConn5OverAnyConn(t *testing.T) {
	c := &recordingConn{stopped: make(chan struct{})}
	p, err := NewFromConn(c, 5, Options{Name: "rec"})
	if err != nil {
		t.Fatal(err)
	}
	res := provider.Resource{Type: "rec_thing"}
	d, err := p.Diff(testCtx(t), provider.DiffRequest{Resource: res, NewProps: cty.ObjectVal(map[string]cty.Value{"wait": cty.False})})
	noErrors(t, "Diff", d.Diagnostics, err)
	if !d.Changed || attr(d.Planned, "id").IsKnown() {
		t.Errorf("Diff = %+v", d)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err = p.Diff(ctx, provider.DiffRequest{Resource: res, NewProps: cty.ObjectVal(map[string]cty.Value{"wait": cty.True})})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Diff(wait) = %v; want the deadline", err)
	}
	want := []string{"/tfplugin5.Provider/GetMetadata", "/tfplugin5.Provider/GetSchema", "/tfplugin5.Provider/PlanResourceChange",
		"/tfplugin5.Provider/PlanResourceChange", "/tfplugin5.Provider/Stop"}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !slices.Equal(c.methods, want) {
		t.Errorf("methods = %v\nwant %v", c.methods, want)
	}
	if _, err := NewFromConn(c, 4, Options{Name: "rec"}); err == nil {
		t.Error("NewFromConn(protocol 4): no error")
	}
}
