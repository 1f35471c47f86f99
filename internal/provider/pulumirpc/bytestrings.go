package pulumirpc

import (
	"encoding/base64"
	"fmt"
	"unicode/utf8"

	"github.com/zclconf/go-cty/cty"
	"google.golang.org/protobuf/types/known/structpb"

	psig "github.com/pulumi/pulumi/sdk/v3/go/common/resource/sig"
)

// Byte strings: a string property holding bytes that are not UTF-8 travels as an object
// {psig.Key: psig.ByteString, "value": <base64>}, between an engine and a plugin that both
// said so at Handshake (AcceptsByteString), as Pulumi's engine negotiates it (sdk
// plugin/rpc.go, KeepByteString). cairn keeps such a value as that object (fromPB keeps
// signature objects verbatim), stores it so, and exports it so, as Pulumi's state does; a
// plugin that did not accept byte strings gets the text when it is UTF-8, and a refusal
// otherwise.

// isByteString says whether v is a byte-string object; b64 is its base64 value.
func isByteString(v cty.Value) (b64 string, ok bool) {
	if !v.IsKnown() || v.IsNull() || !v.Type().IsObjectType() || !v.Type().HasAttribute(psig.Key) || !v.Type().HasAttribute("value") {
		return "", false
	}
	sig, val := v.GetAttr(psig.Key), v.GetAttr("value")
	if sig.IsMarked() || val.IsMarked() { // a secret inside one is no byte string Pulumi makes: an object, kept secret
		return "", false
	}
	if sig.Type() != cty.String || !sig.IsKnown() || sig.IsNull() || sig.AsString() != psig.ByteString ||
		val.Type() != cty.String || !val.IsKnown() || val.IsNull() {
		return "", false
	}
	return val.AsString(), true
}

// byteStringText is what a plugin that does not accept byte strings gets for one.
func byteStringText(b64 string) (*structpb.Value, error) {
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return nil, fmt.Errorf("malformed byte string: %w", err)
	}
	if !utf8.Valid(raw) {
		return nil, fmt.Errorf("a string that contains non-UTF8 bytes, which the plugin does not support")
	}
	return structpb.NewStringValue(string(raw)), nil
}
