# cairn's cfnresponse module for inline (Code.ZipFile) Python functions: the interface
# CloudFormation documents for its own module (send, SUCCESS, FAILED), written for cairn with
# the standard library only. send PUTs the response object to event["ResponseURL"] and returns;
# a failure to send is printed, not raised, as the documented module does.
import json
import urllib.request

SUCCESS = "SUCCESS"
FAILED = "FAILED"


def send(event, context, responseStatus, responseData, physicalResourceId=None, noEcho=False, reason=None):
    body = json.dumps({
        "Status": responseStatus,
        "Reason": reason or "See the details in the log stream: " + context.log_stream_name,
        "PhysicalResourceId": physicalResourceId or context.log_stream_name,
        "StackId": event["StackId"],
        "RequestId": event["RequestId"],
        "LogicalResourceId": event["LogicalResourceId"],
        "NoEcho": noEcho,
        "Data": responseData,
    }).encode("utf-8")
    req = urllib.request.Request(event["ResponseURL"], data=body, method="PUT",
                                 headers={"Content-Type": "", "Content-Length": str(len(body))})
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            print("Status code:", resp.status)
    except Exception as e:  # as the documented module: report and return
        print("send(..) failed executing request:", e)
