package pulumirpc

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/structpb"

	psig "github.com/pulumi/pulumi/sdk/v3/go/common/resource/sig"
)

// GRPCLogVar names the file that records every call cairn makes to a plugin, as pulumi's
// engine records them under the same variable: one JSON line when a call starts and one when
// it ends, in pulumi's format (method, request, response, errors, progress, timestamp,
// duration, metadata {mode, kind, name}), so the same tools read both engines' logs.
const GRPCLogVar = "PULUMI_DEBUG_GRPC"

// Unlike pulumi's log, property values are never written: secrets travel in clear in some
// calls (CheckConfig, plugins that do not accept secrets), and cairn writes no secret to a
// log. Every value inside a property bag is replaced by elided, except what names a value's
// kind (the signature of a secret, asset or resource reference, the sentinel of an unknown);
// maps of text (Configure's deprecated variables, Construct's config) keep their keys only.
const elided = "[elided]"

// grpcLog appends the calls of one plugin to a log file.
type grpcLog struct {
	path string
	meta map[string]any
}

// grpcLogMu serialises writers: one plugin's calls run in parallel, and several plugins may
// share a file.
var grpcLogMu sync.Mutex

// logEntry is one line, field for field pulumi's rpcdebug entry.
type logEntry struct {
	Method    string          `json:"method"`
	Request   json.RawMessage `json:"request,omitempty"`
	Response  json.RawMessage `json:"response,omitempty"`
	Errors    []string        `json:"errors,omitempty"`
	Metadata  any             `json:"metadata,omitempty"`
	Progress  string          `json:"progress,omitempty"`
	Timestamp time.Time       `json:"timestamp"`
	Duration  time.Duration   `json:"duration,omitempty"`
}

// grpcLogOption is the interceptor that writes the log, none when path is empty.
func grpcLogOption(path, pkg, executable string) []grpc.DialOption {
	if path == "" {
		return nil
	}
	l := grpcLog{path: path, meta: map[string]any{"mode": "client", "kind": "resource", "name": pkg, "path": executable}}
	return []grpc.DialOption{grpc.WithChainUnaryInterceptor(l.intercept)}
}

func (l grpcLog) intercept(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	e := logEntry{Method: method, Metadata: l.meta, Timestamp: time.Now(), Progress: "request_started"}
	e.Request, e.Errors = transcode(req, e.Errors)
	l.write(e)
	err := invoker(ctx, method, req, reply, cc, opts...)
	if err != nil {
		e.Errors = append(e.Errors, err.Error())
	} else {
		e.Response, e.Errors = transcode(reply, e.Errors)
	}
	now := time.Now()
	e.Progress, e.Duration, e.Timestamp = "response_completed", now.Sub(e.Timestamp), now
	l.write(e)
	return err
}

// write appends one line; a log that cannot be written never fails the call it records.
func (l grpcLog) write(e logEntry) {
	b, err := json.Marshal(e)
	if err != nil {
		return
	}
	grpcLogMu.Lock()
	defer grpcLogMu.Unlock()
	f, err := os.OpenFile(l.path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return
	}
	_, _ = f.Write(append(b, '\n'))
	_ = f.Close()
}

func transcode(m any, errs []string) (json.RawMessage, []string) {
	msg, ok := m.(proto.Message)
	if !ok {
		return nil, append(errs, fmt.Sprintf("cannot log a %T", m))
	}
	b, err := protojson.Marshal(elide(msg))
	if err != nil {
		return nil, append(errs, err.Error())
	}
	return b, errs
}

// elide returns a copy of msg without property values.
func elide(msg proto.Message) proto.Message {
	c := proto.Clone(msg)
	elideMessage(c.ProtoReflect())
	return c
}

func elideMessage(m protoreflect.Message) {
	if s, ok := m.Interface().(*structpb.Struct); ok {
		for _, v := range s.GetFields() {
			elideValue(v)
		}
		return
	}
	if v, ok := m.Interface().(*structpb.Value); ok {
		elideValue(v)
		return
	}
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if fd.IsMap() && fd.MapValue().Kind() == protoreflect.StringKind { // config as text: Configure's variables, Construct's config
			var keys []protoreflect.MapKey
			v.Map().Range(func(k protoreflect.MapKey, _ protoreflect.Value) bool {
				keys = append(keys, k)
				return true
			})
			for _, k := range keys {
				v.Map().Set(k, protoreflect.ValueOfString(elided))
			}
			return true
		}
		if fd.Kind() != protoreflect.MessageKind && fd.Kind() != protoreflect.GroupKind {
			return true
		}
		switch {
		case fd.IsList():
			for i := 0; i < v.List().Len(); i++ {
				elideMessage(v.List().Get(i).Message())
			}
		case fd.IsMap():
			if fd.MapValue().Kind() == protoreflect.MessageKind {
				v.Map().Range(func(_ protoreflect.MapKey, mv protoreflect.Value) bool {
					elideMessage(mv.Message())
					return true
				})
			}
		default:
			elideMessage(v.Message())
		}
		return true
	})
}

// elideValue replaces every leaf but the markers of special values and unknowns.
func elideValue(v *structpb.Value) {
	switch k := v.GetKind().(type) {
	case *structpb.Value_StructValue:
		for key, f := range k.StructValue.GetFields() {
			if key == psig.Key {
				continue // the kind of special value: secret, asset, reference, output
			}
			elideValue(f)
		}
	case *structpb.Value_ListValue:
		for _, f := range k.ListValue.GetValues() {
			elideValue(f)
		}
	case *structpb.Value_StringValue:
		switch k.StringValue {
		case unknownString, unknownBool, unknownNumber, unknownArray, unknownObject, unknownAsset, unknownArchive:
		default:
			v.Kind = &structpb.Value_StringValue{StringValue: elided}
		}
	case *structpb.Value_NumberValue, *structpb.Value_BoolValue:
		v.Kind = &structpb.Value_StringValue{StringValue: elided}
	}
}
