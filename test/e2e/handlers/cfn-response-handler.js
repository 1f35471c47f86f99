// A handler written the way the CloudFormation docs show, with the npm cfn-response module.
// Properties steer it: Name and Version make the physical id (a new Version replaces the
// resource), Fail: "true" answers FAILED.
const response = require("cfn-response");

exports.handler = function (event, context) {
  const p = event.ResourceProperties || {};
  if (event.RequestType !== "Delete" && p.Fail === "true") {
    response.send(event, context, response.FAILED, { Why: "asked to fail" }, event.PhysicalResourceId || "failed-" + event.LogicalResourceId);
    return;
  }
  if (event.RequestType === "Delete") {
    response.send(event, context, response.SUCCESS, {}, event.PhysicalResourceId);
    return;
  }
  const id = p.Name + "-v" + (p.Version || "1");
  response.send(event, context, response.SUCCESS, { Greeting: "hello " + p.Name, Version: p.Version || "1" }, id);
};
