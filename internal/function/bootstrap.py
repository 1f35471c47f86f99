# cairn's Python runtime for functions of runtime python3.x. It speaks the AWS Lambda Runtime
# API (2018-06-01) at $AWS_LAMBDA_RUNTIME_API, imports the module named by $_HANDLER
# ("index.handler" -> $LAMBDA_TASK_ROOT/index.py, function "handler") and calls
# handler(event, context) for each invocation; what it returns is the result. Threads the
# handler starts keep running after it returns: the process stays up between invocations.
import http.client
import importlib
import json
import os
import sys
import time
import traceback

API = os.environ.get("AWS_LAMBDA_RUNTIME_API", "")
BASE = "/2018-06-01/runtime"


def call(method, path, body=None, headers=None):
    host, _, port = API.partition(":")
    conn = http.client.HTTPConnection(host, int(port or 80))
    try:
        h = {"Content-Type": "application/json"}
        h.update(headers or {})
        data = None if body is None else body.encode("utf-8")
        conn.request(method, BASE + path, body=data, headers=h)
        resp = conn.getresponse()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read().decode("utf-8")
    finally:
        conn.close()


class HandlerError(Exception):
    """An error of loading the handler, with the type Lambda gives it."""

    def __init__(self, kind, message, trace=None):
        super().__init__(message)
        self.kind = kind
        self.trace = trace or []


def frames(tb):
    # Lambda's stackTrace: one string per frame, as traceback.format_list writes them.
    return [line for line in traceback.format_list(traceback.extract_tb(tb))]


def load_handler():
    spec = os.environ.get("_HANDLER", "")
    mod_path, dot, func = spec.rpartition(".")
    if not dot or not mod_path or not func:
        raise HandlerError("Runtime.MalformedHandlerName", "Bad handler '%s': use MODULE.FUNCTION" % spec)
    mod_name = mod_path.replace("/", ".")
    try:
        mod = importlib.import_module(mod_name)
    except SyntaxError as e:
        raise HandlerError("Runtime.UserCodeSyntaxError", "Syntax error in module '%s': %s" % (mod_name, e),
                           frames(e.__traceback__))
    except ImportError as e:
        # The real error, such as "No module named 'requests'" for a module the code imports.
        raise HandlerError("Runtime.ImportModuleError", "Unable to import module '%s': %s" % (mod_name, e),
                           frames(e.__traceback__))
    fn = getattr(mod, func, None)
    if not callable(fn):
        raise HandlerError("Runtime.HandlerNotFound", "Handler '%s' missing on module '%s'" % (func, mod_name))
    return fn


class Context:
    """The Lambda context object of one invocation."""

    def __init__(self, headers):
        env = os.environ
        self.function_name = env.get("AWS_LAMBDA_FUNCTION_NAME")
        self.function_version = env.get("AWS_LAMBDA_FUNCTION_VERSION")
        self.invoked_function_arn = headers.get("lambda-runtime-invoked-function-arn")
        self.memory_limit_in_mb = env.get("AWS_LAMBDA_FUNCTION_MEMORY_SIZE")
        self.aws_request_id = headers.get("lambda-runtime-aws-request-id")
        self.log_group_name = env.get("AWS_LAMBDA_LOG_GROUP_NAME")
        self.log_stream_name = env.get("AWS_LAMBDA_LOG_STREAM_NAME")
        self.identity = parse(headers.get("lambda-runtime-cognito-identity"))
        self.client_context = parse(headers.get("lambda-runtime-client-context"))
        self._deadline = int(headers.get("lambda-runtime-deadline-ms") or 0)

    def get_remaining_time_in_millis(self):
        return max(self._deadline - int(time.time() * 1000), 0)


def parse(s):
    if not s:
        return None
    try:
        return json.loads(s)
    except ValueError:
        return None


def error_object(kind, message, trace):
    return {"errorMessage": message, "errorType": kind, "stackTrace": trace}


def post_error(path, obj):
    call("POST", path, json.dumps(obj), {"Lambda-Runtime-Function-Error-Type": obj["errorType"]})


def main():
    task_root = os.environ.get("LAMBDA_TASK_ROOT") or os.getcwd()
    if task_root not in sys.path:
        sys.path.insert(0, task_root)
    try:
        handler = load_handler()
    except HandlerError as e:
        obj = error_object(e.kind, str(e), e.trace)
        print("[ERROR] %s: %s" % (e.kind, e), file=sys.stderr)
        for line in e.trace:
            sys.stderr.write(line)
        post_error("/init/error", obj)
        sys.exit(1)
    while True:
        status, headers, body = call("GET", "/invocation/next")
        if status != 200:
            print("Runtime API answered %d %s" % (status, body), file=sys.stderr)
            sys.exit(1)
        request_id = headers.get("lambda-runtime-aws-request-id")
        os.environ["_X_AMZN_TRACE_ID"] = headers.get("lambda-runtime-trace-id", "")
        try:
            event = json.loads(body)
        except ValueError:
            event = body
        try:
            result = handler(event, Context(headers))
        except Exception as e:  # the handler's error is the invocation's
            trace = frames(e.__traceback__)
            traceback.print_exception(type(e), e, e.__traceback__)
            post_error("/invocation/%s/error" % request_id, error_object(type(e).__name__, str(e), trace))
            continue
        try:
            out = json.dumps(result)
        except (TypeError, ValueError) as e:
            post_error("/invocation/%s/error" % request_id,
                       error_object("Runtime.MarshalError", "Unable to marshal response: %s" % e, []))
            continue
        call("POST", "/invocation/%s/response" % request_id, out)


if __name__ == "__main__":
    main()
