package tfplugin

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
	ctyjson "github.com/zclconf/go-cty/cty/json"
	"github.com/zclconf/go-cty/cty/msgpack"

	"github.com/cairn-dev/cairn/internal/diag"
	tf5 "github.com/cairn-dev/cairn/internal/tfplugin5"
	tf6 "github.com/cairn-dev/cairn/internal/tfplugin6"
)

// Provider-defined functions (tfplugin 5.5 / 6.5: GetFunctions, CallFunction). Like terraform,
// cairn calls them on an unconfigured provider instance; a call with an unknown argument that
// the function does not accept is not made, its result is unknown.

// functionCallTimeout bounds one CallFunction: functions are pure computations.
const functionCallTimeout = time.Minute

// funcDecl is a function as GetFunctions declares it.
type funcDecl struct {
	params   []funcParam
	variadic *funcParam
	ret      []byte // JSON type
}

type funcParam struct {
	name                    string
	typ                     []byte // JSON type
	allowNull, allowUnknown bool
}

// funcClient is a protocol adapter that can list and call functions.
type funcClient interface {
	getFunctions(ctx context.Context) (map[string]funcDecl, diag.Diagnostics, error)
	callFunction(ctx context.Context, name string, args [][]byte) (result []byte, errText string, errArg *int64, err error)
}

// Functions returns the provider's functions by their bare names ("rfc3339_parse"), as cty
// functions that call the provider; none when the provider predates functions.
func (p *Provider) Functions(ctx context.Context) (map[string]function.Function, error) {
	if _, err := p.ready(ctx); err != nil {
		return nil, err
	}
	fc, ok := p.proto.(funcClient)
	if !ok {
		return nil, nil
	}
	var decls map[string]funcDecl
	var diags diag.Diagnostics
	err := p.call(ctx, "GetFunctions", func(ctx context.Context) (err error) {
		decls, diags, err = fc.getFunctions(ctx)
		return err
	})
	if err != nil {
		if ctx.Err() == nil && isUnimplemented(err) { // status.Code sees through the wrapping
			return nil, nil
		}
		return nil, err
	}
	if diags.HasErrors() {
		return nil, fmt.Errorf("provider %s: GetFunctions: %w", p.name, diags.Err())
	}
	out := make(map[string]function.Function, len(decls))
	for name, d := range decls {
		f, err := p.function(fc, name, d)
		if err != nil {
			return nil, fmt.Errorf("provider %s: function %s: %w", p.name, name, err)
		}
		out[name] = f
	}
	return out, nil
}

// function makes the cty function that calls name.
func (p *Provider) function(fc funcClient, name string, d funcDecl) (function.Function, error) {
	ret, err := ctyjson.UnmarshalType(d.ret)
	if err != nil {
		return function.Function{}, fmt.Errorf("return type: %w", err)
	}
	param := func(fp funcParam) (function.Parameter, error) {
		ty, err := ctyjson.UnmarshalType(fp.typ)
		return function.Parameter{Name: fp.name, Type: ty, AllowNull: fp.allowNull, AllowUnknown: fp.allowUnknown,
			AllowDynamicType: true}, err
	}
	spec := &function.Spec{Type: function.StaticReturnType(ret)}
	for _, fp := range d.params {
		pp, err := param(fp)
		if err != nil {
			return function.Function{}, fmt.Errorf("parameter %s: %w", fp.name, err)
		}
		spec.Params = append(spec.Params, pp)
	}
	if d.variadic != nil {
		vp, err := param(*d.variadic)
		if err != nil {
			return function.Function{}, fmt.Errorf("parameter %s: %w", d.variadic.name, err)
		}
		spec.VarParam = &vp
	}
	spec.Impl = func(args []cty.Value, retType cty.Type) (cty.Value, error) {
		enc := make([][]byte, len(args))
		for i, a := range args {
			ty := cty.DynamicPseudoType
			switch {
			case i < len(spec.Params):
				ty = spec.Params[i].Type
			case spec.VarParam != nil:
				ty = spec.VarParam.Type
			}
			b, err := msgpack.Marshal(a, ty)
			if err != nil {
				return cty.NilVal, function.NewArgError(i, err)
			}
			enc[i] = b
		}
		ctx, cancel := context.WithTimeout(context.Background(), functionCallTimeout)
		defer cancel()
		var res []byte
		var text string
		var argIdx *int64
		err := p.call(ctx, "CallFunction", func(ctx context.Context) (err error) {
			res, text, argIdx, err = fc.callFunction(ctx, name, enc)
			return err
		})
		switch {
		case err != nil:
			return cty.NilVal, err
		case text != "" && argIdx != nil:
			return cty.NilVal, function.NewArgErrorf(int(*argIdx), "%s", text)
		case text != "":
			return cty.NilVal, errors.New(text)
		}
		return msgpack.Unmarshal(res, retType)
	}
	return function.New(spec), nil
}

// protoParam is a GetFunctions parameter of either protocol: the generated types differ, their
// getters do not.
type protoParam interface {
	*tf5.Function_Parameter | *tf6.Function_Parameter
	GetName() string
	GetType() []byte
	GetAllowNullValue() bool
	GetAllowUnknownValues() bool
}

func funcParamOf[P protoParam](x P) funcParam {
	return funcParam{name: x.GetName(), typ: x.GetType(), allowNull: x.GetAllowNullValue(), allowUnknown: x.GetAllowUnknownValues()}
}

// funcDeclOf is a function as GetFunctions of either protocol declares it.
func funcDeclOf[P protoParam](ret []byte, params []P, variadic P) funcDecl {
	d := funcDecl{ret: ret}
	for _, x := range params {
		d.params = append(d.params, funcParamOf(x))
	}
	if variadic != nil {
		v := funcParamOf(variadic)
		d.variadic = &v
	}
	return d
}

func (c *conn5) getFunctions(ctx context.Context) (map[string]funcDecl, diag.Diagnostics, error) {
	r, err := c.c.GetFunctions(ctx, new(tf5.GetFunctions_Request), callOpts...)
	if err != nil {
		return nil, nil, err
	}
	out := map[string]funcDecl{}
	for name, f := range r.Functions {
		out[name] = funcDeclOf(f.GetReturn().GetType(), f.Parameters, f.VariadicParameter)
	}
	return out, diags5(r.Diagnostics), nil
}

func (c *conn5) callFunction(ctx context.Context, name string, args [][]byte) ([]byte, string, *int64, error) {
	req := &tf5.CallFunction_Request{Name: name}
	for _, a := range args {
		req.Arguments = append(req.Arguments, &tf5.DynamicValue{Msgpack: a})
	}
	r, err := c.c.CallFunction(ctx, req, callOpts...)
	if err != nil {
		return nil, "", nil, err
	}
	if r.Error != nil && r.Error.Text != "" {
		return nil, r.Error.Text, r.Error.FunctionArgument, nil
	}
	if r.Result == nil {
		return nil, "", nil, errors.New("CallFunction returned no result")
	}
	return r.Result.Msgpack, "", nil, nil
}

func (c *conn6) getFunctions(ctx context.Context) (map[string]funcDecl, diag.Diagnostics, error) {
	r, err := c.c.GetFunctions(ctx, new(tf6.GetFunctions_Request), callOpts...)
	if err != nil {
		return nil, nil, err
	}
	out := map[string]funcDecl{}
	for name, f := range r.Functions {
		out[name] = funcDeclOf(f.GetReturn().GetType(), f.Parameters, f.VariadicParameter)
	}
	return out, diags6(r.Diagnostics), nil
}

func (c *conn6) callFunction(ctx context.Context, name string, args [][]byte) ([]byte, string, *int64, error) {
	req := &tf6.CallFunction_Request{Name: name}
	for _, a := range args {
		req.Arguments = append(req.Arguments, &tf6.DynamicValue{Msgpack: a})
	}
	r, err := c.c.CallFunction(ctx, req, callOpts...)
	if err != nil {
		return nil, "", nil, err
	}
	if r.Error != nil && r.Error.Text != "" {
		return nil, r.Error.Text, r.Error.FunctionArgument, nil
	}
	if r.Result == nil {
		return nil, "", nil, errors.New("CallFunction returned no result")
	}
	return r.Result.Msgpack, "", nil, nil
}
