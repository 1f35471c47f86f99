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
// The package imports provider, value and diag; it never imports engine or state (the
// caller adapts its own store to Store). docs/custom-resources.md is the user's guide.
package customresource
