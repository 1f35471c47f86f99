// Package customresource implements provider.Provider for CloudFormation and ROS custom
// resources (Custom::*, AWS::CloudFormation::CustomResource, ALIYUN::ROS::CustomResource):
// it builds request objects exactly as CloudFormation or ROS would, delivers them to the
// handler named by ServiceToken, and waits for the handler's response at a signed
// ResponseURL served by ResponseHandler.
//
// The flow of one Create, Update or Delete, keyed by the engine's Token (the RequestId):
//
//	PutRequest (idempotent) -> already answered? return that outcome
//	                        -> not yet sent?     POST it to the handler, MarkSent
//	                        -> wait for ResponseHandler (in memory) or the Store (polling)
//	                           until the request's deadline
//
// so a call resumed after a restart never sends a second request and sees a response that
// arrived while cairn was down.
//
// http(s) and web: tokens reach only what the service-token policy (egress.Policy) allows,
// checked by Check on the URL and by the default Client on every address it dials; a failing
// endpoint's answer is quoted as an egress.Excerpt at most. A Create that no handler accepted
// (refused, unreachable, a non-2xx answer) reports provider.CreateResponse.NotCreated, so a
// rollback sends no Delete for it.
//
// The package imports provider, egress, value and diag; it never imports engine or state (the
// caller adapts its own store to Store). docs/custom-resources.md is the user's guide.
package customresource
