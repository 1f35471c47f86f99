// cairn's cfn-response module for inline (Code.ZipFile) Node.js functions: the interface
// CloudFormation documents for its own module (send, SUCCESS, FAILED), written for cairn. send
// PUTs the response object to event.ResponseURL (http or https, whichever the URL says) and
// then ends the invocation with context.done(), as the documented module does.
"use strict";
const http = require("http");
const https = require("https");

exports.SUCCESS = "SUCCESS";
exports.FAILED = "FAILED";

exports.send = function send(event, context, responseStatus, responseData, physicalResourceId, noEcho) {
  const body = JSON.stringify({
    Status: responseStatus,
    Reason: "See the details in the log stream: " + context.logStreamName,
    PhysicalResourceId: physicalResourceId || context.logStreamName,
    StackId: event.StackId,
    RequestId: event.RequestId,
    LogicalResourceId: event.LogicalResourceId,
    NoEcho: noEcho || false,
    Data: responseData,
  });
  const target = new URL(event.ResponseURL);
  const client = target.protocol === "http:" ? http : https;
  return new Promise((resolve) => {
    const req = client.request(
      target,
      { method: "PUT", headers: { "content-type": "", "content-length": Buffer.byteLength(body) } },
      (res) => {
        console.log("Status code: " + res.statusCode);
        res.resume();
        res.on("end", () => {
          resolve();
          context.done();
        });
      },
    );
    req.on("error", (err) => {
      console.log("send(..) failed executing request: " + err);
      resolve();
      context.done();
    });
    req.end(body);
  });
};
