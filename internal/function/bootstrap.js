// cairn's Node.js runtime for functions of runtime nodejs. It speaks the AWS Lambda Runtime
// API (2018-06-01) at $AWS_LAMBDA_RUNTIME_API, loads the module named by $_HANDLER
// ("index.handler" -> $LAMBDA_TASK_ROOT/index.js, export "handler") and calls
// handler(event, context, callback) for each invocation. An invocation ends at the first of:
// the callback, context.done/succeed/fail, the settling of a returned promise, or an empty
// event loop (result null). A callback does not wait for the event loop to empty
// (callbackWaitsForEmptyEventLoop is accepted and ignored): cfn-response leaves a keep-alive
// socket open after its PUT.
"use strict";
const http = require("http");
const path = require("path");
const fs = require("fs");
const url = require("url");

const env = process.env;
const [host, port] = (env.AWS_LAMBDA_RUNTIME_API || "").split(":");
const base = "/2018-06-01/runtime";
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

function call(method, p, body, headers) {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host, port, method, path: base + p, agent, headers: Object.assign({ "content-type": "application/json" }, headers || {}) },
      (res) => {
        const chunks = [];
        res.on("data", (c) => chunks.push(c));
        res.on("end", () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks).toString("utf8") }));
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}

function errorObject(err, type) {
  if (err instanceof Error) {
    return {
      errorType: type || err.name || "Error",
      errorMessage: err.message,
      stackTrace: String(err.stack || "").split("\n").filter((l) => /^\s+at /.test(l)).map((l) => l.trim()),
    };
  }
  let message;
  try {
    message = typeof err === "string" ? err : JSON.stringify(err);
  } catch (e) {
    message = String(err);
  }
  return { errorType: type || "Error", errorMessage: message, stackTrace: [] };
}

// loading runs load (the handler module's require or import) and gives what it throws the
// type Lambda gives it: Runtime.UserCodeSyntaxError for a syntax error,
// Runtime.ImportModuleError for a module that cannot be found (a require of the handler file
// that is not bundled), with Node's own message ("Error: Cannot find module 'x'" and its
// require stack); any other error as it was thrown.
async function loading(load) {
  try {
    return await load();
  } catch (e) {
    if (e instanceof SyntaxError) throw wrapped(e, "Runtime.UserCodeSyntaxError");
    if (e && (e.code === "MODULE_NOT_FOUND" || e.code === "ERR_MODULE_NOT_FOUND")) throw wrapped(e, "Runtime.ImportModuleError");
    throw e;
  }
}

function wrapped(e, name) {
  const w = new Error(String(e));
  w.name = name;
  w.stack = String(e.stack || "");
  return w;
}

async function loadHandler() {
  const spec = env._HANDLER || "";
  const slash = spec.lastIndexOf("/");
  const dir = spec.slice(0, slash + 1);
  const rest = spec.slice(slash + 1);
  const dot = rest.indexOf(".");
  if (dot <= 0) throw Object.assign(new Error(`Bad handler ${spec}: use MODULE.FUNCTION`), { name: "Runtime.MalformedHandlerName" });
  const modName = dir + rest.slice(0, dot);
  const modPath = path.resolve(env.LAMBDA_TASK_ROOT || process.cwd(), modName);
  let mod;
  if (fs.existsSync(modPath + ".mjs")) {
    mod = await loading(() => import(url.pathToFileURL(modPath + ".mjs").href));
  } else {
    // Resolve first, so that a missing handler file is told apart from a handler file that
    // requires a missing module: the latter keeps Node's own message and require stack.
    let file;
    try {
      file = require.resolve(modPath);
    } catch (e) {
      if (fs.existsSync(modPath + ".cjs")) {
        file = modPath + ".cjs";
      } else {
        throw Object.assign(new Error(`Cannot find module '${modName}'`), { name: "Runtime.ImportModuleError" });
      }
    }
    mod = await loading(async () => {
      try {
        return require(file);
      } catch (e) {
        if (e && e.code === "ERR_REQUIRE_ESM") return import(url.pathToFileURL(file).href);
        throw e;
      }
    });
  }
  let fn = mod;
  for (const key of rest.slice(dot + 1).split(".")) {
    fn = fn == null ? undefined : fn[key];
  }
  if (typeof fn !== "function") {
    throw Object.assign(new Error(`${spec} is undefined or not exported`), { name: "Runtime.HandlerNotFound" });
  }
  return fn;
}

function parseJSON(s) {
  if (!s) return undefined;
  try {
    return JSON.parse(s);
  } catch (e) {
    return undefined;
  }
}

let current = null; // finish() of the running invocation, for uncaught errors

function invoke(handler, event, h) {
  return new Promise((resolve) => {
    let finished = false;
    const finish = (err, result) => {
      if (finished) return;
      finished = true;
      current = null;
      resolve({ err, result });
    };
    current = finish;
    const deadline = Number(h["lambda-runtime-deadline-ms"]);
    const context = {
      callbackWaitsForEmptyEventLoop: true,
      functionName: env.AWS_LAMBDA_FUNCTION_NAME,
      functionVersion: env.AWS_LAMBDA_FUNCTION_VERSION,
      invokedFunctionArn: h["lambda-runtime-invoked-function-arn"],
      memoryLimitInMB: env.AWS_LAMBDA_FUNCTION_MEMORY_SIZE,
      awsRequestId: h["lambda-runtime-aws-request-id"],
      logGroupName: env.AWS_LAMBDA_LOG_GROUP_NAME,
      logStreamName: env.AWS_LAMBDA_LOG_STREAM_NAME,
      identity: parseJSON(h["lambda-runtime-cognito-identity"]),
      clientContext: parseJSON(h["lambda-runtime-client-context"]),
      getRemainingTimeInMillis: () => Math.max(deadline - Date.now(), 0),
      done: (err, result) => finish(err == null ? null : err, result),
      succeed: (result) => finish(null, result),
      fail: (err) => finish(err == null ? new Error("handled") : err),
    };
    const callback = (err, result) => finish(err == null ? null : err, result);
    let out;
    try {
      out = handler(event, context, callback);
    } catch (e) {
      finish(e);
      return;
    }
    if (out && typeof out.then === "function") {
      out.then((r) => finish(null, r), (e) => finish(e == null ? new Error("the handler's promise was rejected") : e));
    }
    // Otherwise the handler ends the invocation through the callback or the context.
  });
}

async function report(id, err, result) {
  if (err != null) {
    await call("POST", `/invocation/${id}/error`, JSON.stringify(errorObject(err)), {
      "Lambda-Runtime-Function-Error-Type": errorObject(err).errorType,
    });
    return;
  }
  let body;
  try {
    body = JSON.stringify(result === undefined ? null : result);
  } catch (e) {
    await call("POST", `/invocation/${id}/error`, JSON.stringify(errorObject(e, "Runtime.SerializationError")));
    return;
  }
  await call("POST", `/invocation/${id}/response`, body);
}

function crash(e) {
  const fin = current;
  console.error("Uncaught", e);
  if (fin) {
    fin(e); // the loop reports it; then exit
    setTimeout(() => process.exit(1), 500);
  } else {
    process.exit(1);
  }
}
// A handler that neither returns a promise nor calls back ends, as in Lambda, when the event
// loop is empty, with a null result.
process.on("beforeExit", () => {
  if (current) current(null, null);
});
process.on("uncaughtException", crash);
process.on("unhandledRejection", crash);

(async () => {
  let handler;
  try {
    handler = await loadHandler();
  } catch (e) {
    const obj = errorObject(e);
    console.error(["Init error " + obj.errorType + ": " + obj.errorMessage].concat(obj.stackTrace.map((l) => "    " + l)).join("\n"));
    await call("POST", "/init/error", JSON.stringify(obj), { "Lambda-Runtime-Function-Error-Type": obj.errorType }).catch(() => {});
    process.exit(1);
  }
  for (;;) {
    const next = await call("GET", "/invocation/next");
    if (next.status !== 200) {
      console.error("Runtime API answered", next.status, next.body);
      process.exit(1);
    }
    const id = next.headers["lambda-runtime-aws-request-id"];
    env._X_AMZN_TRACE_ID = next.headers["lambda-runtime-trace-id"] || "";
    let event;
    try {
      event = JSON.parse(next.body);
    } catch (e) {
      event = next.body;
    }
    const { err, result } = await invoke(handler, event, next.headers);
    await report(id, err, result);
  }
})().catch((e) => {
  console.error("cairn bootstrap failed:", e);
  process.exit(1);
});
