// Package httpfunc carries tfplugin5 calls through an HTTP function, as Huawei RFS talks to a
// private provider: every gRPC call becomes one POST /provider of
//
//	{"method_name": "/tfplugin5.Provider/X", "request_data": base64(request),
//	 "context": {"session_id": "...", "config_data": base64(Configure request)}}
//
// answered by {"response_data": base64(response), "error": "..."} with status 200. Conn is
// the caller's side, a grpc.ClientConnInterface that the tfplugin client runs over unchanged;
// Server is the function's side (cairn provider serve), which starts a fresh provider process
// per request, configures it from config_data and forwards the call.
package httpfunc

import (
	"strings"
)

// Path is the fixed path of every call.
const Path = "/provider"

// Request is the body RFS posts to the function.
type Request struct {
	MethodName  string  `json:"method_name"`
	RequestData string  `json:"request_data"`
	Context     Context `json:"context"`
}

// Context groups the calls of one operation and carries the provider configuration.
type Context struct {
	SessionID  string `json:"session_id"`
	ConfigData string `json:"config_data"`
}

// Response is the function's answer.
type Response struct {
	ResponseData string `json:"response_data"`
	Error        string `json:"error"`
}

const (
	service       = "/tfplugin5.Provider/"
	methodConfig  = service + "Configure"
	methodShutdwn = "/plugin.GRPCController/Shutdown"
)

// needsConfig reports whether a method runs against a configured provider, so config_data
// travels with it. Schemas, validation and Configure itself need none (the digest's advice).
func needsConfig(method string) bool {
	switch strings.TrimPrefix(method, service) {
	case "GetSchema", "GetMetadata", "PrepareProviderConfig", "ValidateResourceTypeConfig",
		"ValidateDataSourceConfig", "Configure":
		return false
	}
	return strings.HasPrefix(method, service)
}
