// host.js runs custom-resource handlers the way Lambda would, for cairn's end-to-end tests:
// an HTTP server takes each request cairn POSTs to the ServiceToken, answers 202 at once, then
// calls handler(event, context[, callback]) with a Lambda-like context. The handler libraries
// (cfn-response, custom-resource-helper) are used unchanged. GET /log lists the requests seen.
//
//   node host.js PORT
const http = require("http");

const handlers = {
  "/cfn-response": require("./cfn-response-handler").handler,
  "/custom-resource-helper": require("./custom-resource-helper-handler").handler,
};
const seen = [];

function lambdaContext(event, done) {
  const deadline = Date.now() + 10 * 60 * 1000;
  return {
    awsRequestId: event.RequestId,
    logStreamName: "2026/11/23/[$LATEST]e2e",
    functionName: "e2e",
    callbackWaitsForEmptyEventLoop: false,
    getRemainingTimeInMillis: () => deadline - Date.now(),
    done: (err) => done(err),
    succeed: () => done(),
    fail: (err) => done(err || new Error("failed")),
  };
}

const server = http.createServer((req, res) => {
  if (req.method === "GET" && req.url === "/log") {
    res.setHeader("content-type", "application/json");
    res.end(JSON.stringify(seen));
    return;
  }
  const handler = handlers[req.url];
  if (req.method !== "POST" || !handler) {
    res.statusCode = 404;
    res.end();
    return;
  }
  let body = "";
  req.on("data", (c) => (body += c));
  req.on("end", () => {
    let event;
    try {
      event = JSON.parse(body);
    } catch (e) {
      res.statusCode = 400;
      res.end(String(e));
      return;
    }
    seen.push({
      handler: req.url, RequestType: event.RequestType, LogicalResourceId: event.LogicalResourceId,
      PhysicalResourceId: event.PhysicalResourceId || "", RequestId: event.RequestId,
      ResourceProperties: event.ResourceProperties, OldResourceProperties: event.OldResourceProperties || null,
    });
    res.statusCode = 202;
    res.end();
    const done = (err) => { if (err) console.error("invocation failed:", err); };
    const ctx = lambdaContext(event, done);
    try {
      const out = handler(event, ctx, done);
      if (out && typeof out.then === "function") out.then(() => done(), done);
    } catch (e) {
      done(e);
    }
  });
});

server.listen(Number(process.argv[2] || 0), "127.0.0.1", () => {
  console.log("listening " + server.address().port);
});
