package pulumirpc

import (
	"encoding/base64"
	"strings"
	"testing"

	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
	"github.com/zclconf/go-cty/cty"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/cairn-dev/cairn/internal/value"
	psig "github.com/pulumi/pulumi/sdk/v3/go/common/resource/sig"
)

func mustStruct(t *testing.T, js string) *structpb.Struct {
	t.Helper()
	var s structpb.Struct
	if err := protojson.Unmarshal([]byte(js), &s); err != nil {
		t.Fatal(err)
	}
	return &s
}

func TestWireValuesToCty(t *testing.T) {
	s := mustStruct(t, `{
		"name": "alpha", "size": 1, "on": true, "none": null,
		"password": {"4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270", "value": "hunter2"},
		"arn": "04da6b54-80e4-46f7-96ec-b56ff0331ba9",
		"flag": "1c4a061d-8072-4f0a-a4cb-0ff528b18fe7",
		"list": "6a19a0b0-7e62-4c92-b797-7f8e31da9cc2",
		"out": {"4dabf18193072939515e22adb298388d": "d0e6a833031e9bbcd3f4e8bde6ca49a4", "value": "x", "secret": true},
		"pending": {"4dabf18193072939515e22adb298388d": "d0e6a833031e9bbcd3f4e8bde6ca49a4"},
		"asset": {"4dabf18193072939515e22adb298388d": "c44067f5952c0a294b673a41bacd8c17", "hash": "abc", "text": "hi"}
	}`)
	v, err := fromStruct(s)
	if err != nil {
		t.Fatal(err)
	}
	if pw := v.GetAttr("password"); !pw.IsMarked() {
		t.Error("secret not marked")
	} else if u, _ := pw.Unmark(); u.AsString() != "hunter2" {
		t.Errorf("secret value %#v", u)
	}
	if a := v.GetAttr("arn"); a.IsKnown() {
		t.Error("unknown sentinel read as a string")
	}
	if f := v.GetAttr("flag"); f.IsKnown() || f.Type() != cty.Bool {
		t.Errorf("unknown bool %#v", f)
	}
	if o := v.GetAttr("out"); !o.IsMarked() {
		t.Error("secret output value not marked")
	}
	if p := v.GetAttr("pending"); p.IsKnown() {
		t.Error("output value without value is not unknown")
	}

	// back on the wire, in a preview, for a provider that accepts secrets
	back, err := encoder{secrets: true, preview: true}.toStruct(v)
	if err != nil {
		t.Fatal(err)
	}
	f := back.GetFields()
	if f["password"].GetStructValue().GetFields()[psig.Key].GetStringValue() != psig.Secret ||
		f["password"].GetStructValue().GetFields()["value"].GetStringValue() != "hunter2" {
		t.Errorf("secret on the wire: %v", f["password"])
	}
	for k, want := range map[string]string{"arn": unknownString, "flag": unknownBool, "list": unknownArray, "pending": unknownString} {
		if got := f[k].GetStringValue(); got != want {
			t.Errorf("%s on the wire: %q, want %q", k, got, want)
		}
	}
	if f["asset"].GetStructValue().GetFields()[psig.Key].GetStringValue() != psig.AssetSig || f["asset"].GetStructValue().GetFields()["text"].GetStringValue() != "hi" {
		t.Errorf("asset not kept verbatim: %v", f["asset"])
	}
	if f["size"].GetNumberValue() != 1 || !f["on"].GetBoolValue() || f["none"].GetNullValue() != structpb.NullValue_NULL_VALUE {
		t.Errorf("scalars: %v", f)
	}

	// a provider without secrets gets the plain value; unknowns are refused outside a preview
	plain, err := encoder{}.toStruct(cty.ObjectVal(map[string]cty.Value{"pw": value.Secret(cty.StringVal("s"))}))
	if err != nil || plain.GetFields()["pw"].GetStringValue() != "s" {
		t.Errorf("plain secret: %v %v", err, plain)
	}
	if _, err := (encoder{}).toStruct(v); err == nil || !strings.Contains(err.Error(), "not known") {
		t.Errorf("unknown outside a preview: %v", err)
	}
}

func TestDiffResultReplaces(t *testing.T) {
	r := diffResult(&pulumirpc.DiffResponse{
		Changes: pulumirpc.DiffResponse_DIFF_SOME, Diffs: []string{"size"}, Replaces: []string{"name"},
	})
	if !r.Changed || !r.Replace || strings.Join(r.ReplacePaths, ",") != "name" || strings.Join(r.ChangedKeys, ",") != "name,size" {
		t.Errorf("replaces: %+v", r)
	}
	r = diffResult(&pulumirpc.DiffResponse{
		Changes: pulumirpc.DiffResponse_DIFF_SOME, HasDetailedDiff: true,
		DetailedDiff: map[string]*pulumirpc.PropertyDiff{
			"tags.env":  {Kind: pulumirpc.PropertyDiff_UPDATE},
			"zone[0]":   {Kind: pulumirpc.PropertyDiff_ADD_REPLACE},
			`["a.b"].c`: {Kind: pulumirpc.PropertyDiff_DELETE},
		},
	})
	if !r.Replace || strings.Join(r.ReplacePaths, ",") != "zone[0]" || strings.Join(r.ChangedKeys, ",") != "a.b,tags,zone" {
		t.Errorf("detailed diff: %+v", r)
	}
	r = diffResult(&pulumirpc.DiffResponse{Changes: pulumirpc.DiffResponse_DIFF_NONE})
	if r.Changed || r.Replace || r.DeleteBeforeReplace || r.Stables != nil {
		t.Errorf("no diff: %+v", r)
	}
}

func TestDiffResultDeleteBeforeReplaceAndStables(t *testing.T) {
	r := diffResult(&pulumirpc.DiffResponse{
		Changes: pulumirpc.DiffResponse_DIFF_SOME, Replaces: []string{"name"},
		DeleteBeforeReplace: true, Stables: []string{"id", "arn", "id"},
	})
	if !r.Replace || !r.DeleteBeforeReplace || strings.Join(r.Stables, ",") != "arn,id" {
		t.Errorf("delete-before-replace and stables: %+v", r)
	}
	r = diffResult(&pulumirpc.DiffResponse{Changes: pulumirpc.DiffResponse_DIFF_SOME, Diffs: []string{"size"}})
	if r.DeleteBeforeReplace || r.Stables != nil {
		t.Errorf("neither asked for: %+v", r)
	}
}

func TestUnknownDiffKeepsProviderAnswer(t *testing.T) {
	olds := cty.ObjectVal(map[string]cty.Value{"name": cty.StringVal("a"), "size": cty.NumberIntVal(1)})
	news := cty.ObjectVal(map[string]cty.Value{"name": cty.StringVal("a"), "size": cty.NumberIntVal(2)})
	answer := &pulumirpc.DiffResponse{
		Changes: pulumirpc.DiffResponse_DIFF_UNKNOWN, Replaces: []string{"size"},
		DeleteBeforeReplace: true, Stables: []string{"id"},
	}
	r := unknownDiff(answer, olds, news)
	if !r.Changed || !r.Replace || strings.Join(r.ReplacePaths, ",") != "size" || strings.Join(r.ChangedKeys, ",") != "size" ||
		!r.DeleteBeforeReplace || strings.Join(r.Stables, ",") != "id" {
		t.Errorf("inputs differ: %+v", r)
	}
	r = unknownDiff(answer, olds, olds)
	if r.Changed || r.Replace {
		t.Errorf("inputs equal: no change and no replacement whatever the plugin listed: %+v", r)
	}
}

// TestByteStrings: a byte-string object reaches a plugin that accepted byte strings as it is,
// one that did not as its text when that is UTF-8, and is refused otherwise.
func TestByteStrings(t *testing.T) {
	byteString := func(raw string) cty.Value {
		return cty.ObjectVal(map[string]cty.Value{"bytes": cty.ObjectVal(map[string]cty.Value{
			psig.Key: cty.StringVal(psig.ByteString), "value": cty.StringVal(base64.StdEncoding.EncodeToString([]byte(raw)))})})
	}
	s, err := encoder{byteStrings: true}.toStruct(byteString("\x00hello \x80\xfe"))
	if f := s.GetFields()["bytes"].GetStructValue().GetFields(); err != nil || f[psig.Key].GetStringValue() != psig.ByteString || f["value"].GetStringValue() != "AGhlbGxvIID+" {
		t.Errorf("to a plugin that accepts byte strings: %v %v", s, err)
	}
	s, err = encoder{}.toStruct(byteString("plain text"))
	if err != nil || s.GetFields()["bytes"].GetStringValue() != "plain text" {
		t.Errorf("UTF-8 bytes to a plugin that does not: %v %v", s, err)
	}
	if _, err := (encoder{}).toStruct(byteString("\x80\xfe")); err == nil || !strings.Contains(err.Error(), "non-UTF8") {
		t.Errorf("other bytes to a plugin that does not: %v", err)
	}
}
