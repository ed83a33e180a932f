"""Invoke in the local cloud: Python and Node.js functions really run, in child processes, under
Lambda's contract ("Lambda runtime environment", "Using the Lambda context object", "Invoke" in the
AWS Lambda Developer Guide and API Reference). boto3 against the real local cloud, no Docker."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.functions.conftest import eventually, zipped

needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="Node.js is not installed here")

PYTHON_APP = '''
import json, os, boto3

def handler(event, context):
    print("handling", json.dumps(event))
    boto3.client("ssm").put_parameter(Name="/written/by/" + context.function_name, Value=event["value"],
                                      Type="String", Overwrite=True)
    return {"event": event, "function_name": context.function_name, "request_id": context.aws_request_id,
            "remaining": context.get_remaining_time_in_millis(), "memory": context.memory_limit_in_mb,
            "version": context.function_version, "arn": context.invoked_function_arn,
            "log_group": context.log_group_name, "log_stream": context.log_stream_name,
            "cwd": os.getcwd(), "env": dict(os.environ)}

def fails(event, context):
    raise ValueError("no good: " + event["value"])
'''

NODE_APP = '''
exports.handler = async (event, context) => {
  console.log("handling", JSON.stringify(event));
  return {event, functionName: context.functionName, requestId: context.awsRequestId,
          remaining: context.getRemainingTimeInMillis(), memory: context.memoryLimitInMB,
          env: process.env};
};
exports.callback = (event, context, callback) => { callback(null, {called: event.value}); };
exports.fails = async (event) => { throw new TypeError("no good: " + event.value); };
'''


def test_a_python_function_answers_with_its_return_value_context_and_environment(functions, cloud) -> None:
    functions.create("py-app", {"app.py": PYTHON_APP}, "app.handler", Timeout=20, MemorySize=256,
                     Environment={"Variables": {"GREETING": "hi"}})
    reply, answer = functions.invoke("py-app", {"value": "forty-two"})
    assert reply["StatusCode"] == 200 and "FunctionError" not in reply
    assert reply["ExecutedVersion"] == "$LATEST"
    assert answer["event"] == {"value": "forty-two"}
    assert answer["function_name"] == "py-app"
    assert answer["memory"] == "256"  # a string, as Lambda's Python runtime reads it from the environment
    assert answer["version"] == "$LATEST"
    assert answer["arn"].endswith(":function:py-app")
    assert 0 < answer["remaining"] <= 20_000
    assert answer["log_group"] == "/aws/lambda/py-app"
    env = answer["env"]
    assert env["GREETING"] == "hi"
    assert env["AWS_LAMBDA_FUNCTION_NAME"] == "py-app"
    assert env["AWS_REGION"] == env["AWS_DEFAULT_REGION"] == "us-east-1"
    assert env["AWS_LAMBDA_FUNCTION_MEMORY_SIZE"] == "256"
    assert env["AWS_EXECUTION_ENV"] == "AWS_Lambda_python3.12"
    assert env["_HANDLER"] == "app.handler"
    assert env["AWS_LAMBDA_LOG_STREAM_NAME"] == answer["log_stream"]
    assert env["AWS_ENDPOINT_URL"] == cloud.endpoint  # the SDKs call the local cloud...
    assert env["AWS_ACCESS_KEY_ID"] and env["AWS_SECRET_ACCESS_KEY"]  # ...with fake credentials
    assert env["LAMBDA_TASK_ROOT"] == answer["cwd"]  # the working folder is the unpacked code
    assert "FORMWRIGHT_HOME" not in env  # nothing of the local cloud's own environment
    # the function's boto3 call landed in the local cloud
    assert functions.parameter("/written/by/py-app") == "forty-two"


def test_a_python_functions_output_goes_to_its_log_group(functions, cloud) -> None:
    functions.create("py-logs", {"app.py": PYTHON_APP}, "app.handler", Timeout=20)
    reply, answer = functions.invoke("py-logs", {"value": "logged"}, LogType="Tail")
    logs = cloud.client("logs")
    lines = [e["message"] for e in logs.get_log_events(
        logGroupName="/aws/lambda/py-logs", logStreamName=answer["log_stream"])["events"]]
    request = answer["request_id"]
    assert lines[0] == f"START RequestId: {request} Version: $LATEST"
    assert 'handling {"value": "logged"}' in lines
    assert lines[-2] == f"END RequestId: {request}"
    assert lines[-1].startswith(f"REPORT RequestId: {request}\tDuration: ")
    # LogType Tail: the end of the same log, base64, in the reply
    import base64

    assert 'handling {"value": "logged"}' in base64.b64decode(reply["LogResult"]).decode()


@needs_node
def test_a_node_function_answers_async_and_callback_style(functions, cloud) -> None:
    functions.create("node-app", {"index.js": NODE_APP}, "index.handler", runtime="nodejs20.x", Timeout=20)
    reply, answer = functions.invoke("node-app", {"value": 7})
    assert reply["StatusCode"] == 200 and "FunctionError" not in reply
    assert answer["event"] == {"value": 7}
    assert answer["functionName"] == "node-app"
    assert answer["memory"] == "128"
    assert 0 < answer["remaining"] <= 20_000
    assert answer["env"]["AWS_ENDPOINT_URL"] == cloud.endpoint
    assert answer["env"]["AWS_EXECUTION_ENV"] == "AWS_Lambda_nodejs20.x"
    functions.create("node-cb", {"index.js": NODE_APP}, "index.callback", runtime="nodejs20.x")
    assert functions.invoke("node-cb", {"value": "back"})[1] == {"called": "back"}
    # console.log lines as Lambda's Node.js runtime writes them: time, request id, level, message
    stream = cloud.client("logs").describe_log_streams(logGroupName="/aws/lambda/node-app")["logStreams"][0]
    lines = [e["message"] for e in cloud.client("logs").get_log_events(
        logGroupName="/aws/lambda/node-app", logStreamName=stream["logStreamName"])["events"]]
    assert any(line.endswith(f'\t{answer["requestId"]}\tINFO\thandling {{"value":7}}') for line in lines)


def test_an_unhandled_python_error_is_answered_as_lambda_answers_it(functions) -> None:
    # Invoke: HTTP 200 with X-Amz-Function-Error: Unhandled and the runtime's error document
    functions.create("py-fails", {"app.py": PYTHON_APP}, "app.fails")
    reply, answer = functions.invoke("py-fails", {"value": "x"})
    assert reply["StatusCode"] == 200
    assert reply["FunctionError"] == "Unhandled"
    assert answer["errorType"] == "ValueError"
    assert answer["errorMessage"] == "no good: x"
    assert len(answer["stackTrace"]) == 1  # the function's frame only, not the runtime's
    line = PYTHON_APP.splitlines().index('    raise ValueError("no good: " + event["value"])') + 1
    assert f'app.py", line {line}, in fails' in answer["stackTrace"][0]
    assert 'raise ValueError("no good: " + event["value"])' in answer["stackTrace"][0]


@needs_node
def test_an_unhandled_node_error_is_answered_as_lambda_answers_it(functions) -> None:
    functions.create("node-fails", {"index.js": NODE_APP}, "index.fails", runtime="nodejs20.x")
    reply, answer = functions.invoke("node-fails", {"value": "y"})
    assert reply["FunctionError"] == "Unhandled"
    assert answer["errorType"] == "TypeError"
    assert answer["errorMessage"] == "no good: y"
    assert answer["trace"][0] == "TypeError: no good: y"  # Node.js runtimes answer `trace`, not stackTrace


def test_a_function_past_its_timeout_is_stopped_with_everything_it_started(functions, tmp_path) -> None:
    # "Troubleshoot invocation issues in Lambda": Sandbox.Timedout, "Task timed out after N seconds"
    pid_file = tmp_path / "child.pid"
    code = f'''
import subprocess, time
def handler(event, context):
    child = subprocess.Popen(["sleep", "300"])
    open({str(pid_file)!r}, "w").write(str(child.pid))
    time.sleep(300)
'''
    functions.create("py-slow", {"app.py": code}, "app.handler", Timeout=2)
    reply, answer = functions.invoke("py-slow")
    assert reply["FunctionError"] == "Unhandled"
    assert answer["errorType"] == "Sandbox.Timedout"
    assert answer["errorMessage"].endswith("Error: Task timed out after 2.00 seconds")
    # the process group was killed: the child the handler started is gone too
    pid = int(pid_file.read_text())
    eventually(lambda: not _running(pid), f"process {pid} ended")


def _running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    return state != "Z"


def test_a_python_function_importing_what_it_does_not_vendor_fails_as_on_lambda(functions) -> None:
    # `requests` is installed where the local cloud runs, but not in Lambda's Python runtime: the
    # function sees only its code, boto3 (which Lambda bundles) and the standard library
    code = "import requests\n\ndef handler(event, context):\n    return 1\n"
    functions.create("py-missing", {"app.py": code}, "app.handler")
    reply, answer = functions.invoke("py-missing")
    assert reply["FunctionError"] == "Unhandled"
    assert answer["errorType"] == "Runtime.ImportModuleError"
    assert answer["errorMessage"] == "Unable to import module 'app': No module named 'requests'"
    functions.create("py-vendored", {"app.py": code, "requests/__init__.py": "ok = True\n"}, "app.handler")
    assert functions.invoke("py-vendored")[1] == 1  # vendored in the .zip, it imports


@needs_node
def test_a_node_function_requiring_what_it_does_not_vendor_fails_as_on_lambda(functions) -> None:
    code = 'const pad = require("left-pad");\nexports.handler = async () => pad("1", 3);\n'
    functions.create("node-missing", {"index.js": code}, "index.handler", runtime="nodejs20.x")
    reply, answer = functions.invoke("node-missing")
    assert reply["FunctionError"] == "Unhandled"
    assert answer["errorType"] == "Runtime.ImportModuleError"
    assert answer["errorMessage"].startswith("Error: Cannot find module 'left-pad'")


def test_a_missing_handler_is_named(functions) -> None:
    functions.create("py-nohandler", {"app.py": PYTHON_APP}, "app.nothing")
    answer = functions.invoke("py-nohandler")[1]
    assert (answer["errorType"], answer["errorMessage"]) == (
        "Runtime.HandlerNotFound", "Handler 'nothing' missing on module 'app'")


@pytest.mark.parametrize("runtime", ["java21", "dotnet8", "go1.x", "provided.al2023", "ruby3.3"])
def test_other_runtimes_are_refused_by_name_at_invoke(functions, runtime) -> None:
    name = f"fn-{runtime.replace('.', '-')}"
    functions.create(name, {"app.py": PYTHON_APP}, "app.handler", runtime=runtime)
    with pytest.raises(functions.client.exceptions.InvalidRuntimeException) as refused:
        functions.client.invoke(FunctionName=name, Payload=b"{}")
    assert f"cannot run runtime {runtime}" in str(refused.value)


def test_an_event_invocation_answers_at_once_and_runs_in_the_background(functions) -> None:
    functions.create("py-async", {"app.py": PYTHON_APP}, "app.handler", Timeout=20)
    reply = functions.client.invoke(FunctionName="py-async", InvocationType="Event",
                                    Payload=json.dumps({"value": "later"}))
    assert reply["StatusCode"] == 202
    eventually(lambda: functions.parameter("/written/by/py-async") == "later", "the Event invocation ran")
    dry = functions.client.invoke(FunctionName="py-async", InvocationType="DryRun", Payload=b"{}")
    assert dry["StatusCode"] == 204


def test_a_payload_that_is_not_json_is_refused(functions) -> None:
    functions.create("py-json", {"app.py": PYTHON_APP}, "app.handler")
    with pytest.raises(functions.client.exceptions.InvalidRequestContentException):
        functions.client.invoke(FunctionName="py-json", Payload=b"{not json")


def test_code_uploaded_to_s3_runs(functions, cloud) -> None:
    # CreateFunction with S3Bucket/S3Key: the code is the S3 object's (as `aws cloudformation package`
    # uploads it)
    s3 = cloud.client("s3")
    s3.create_bucket(Bucket="artifacts")
    s3.put_object(Bucket="artifacts", Key="app.zip", Body=zipped({"app.py": PYTHON_APP}))
    functions.client.create_function(FunctionName="from-s3", Runtime="python3.11", Role=functions.role(),
                                     Handler="app.handler", Timeout=20,
                                     Code={"S3Bucket": "artifacts", "S3Key": "app.zip"})
    assert functions.invoke("from-s3", {"value": "s3"})[1]["event"] == {"value": "s3"}


def test_the_runtime_folder_holds_what_lambda_bundles_only() -> None:
    # what a Python function can import beyond its code: boto3 and its dependencies, as Lambda's
    # runtime provides them ("Lambda runtimes": the AWS SDK for Python is included)
    from formwright.cloud.lambda_runtime import artifact

    names = {p.name for p in artifact.python_runtime_dir().iterdir()}
    assert {"boto3", "botocore"} <= names
    assert "requests" not in names and "moto" not in names


def test_a_container_image_function_is_refused_by_name(functions) -> None:
    functions.client.create_function(FunctionName="from-image", Role=functions.role(), PackageType="Image",
                                     Code={"ImageUri": "123456789012.dkr.ecr.us-east-1.amazonaws.com/app:1"})
    with pytest.raises(functions.client.exceptions.InvalidRuntimeException) as refused:
        functions.client.invoke(FunctionName="from-image", Payload=b"{}")
    assert "cannot run container image functions (function from-image)" in str(refused.value)


def test_new_code_and_configuration_are_what_the_next_invocation_runs(functions) -> None:
    functions.create("py-changing", {"app.py": "def handler(e, c):\n    return 'first'\n"}, "app.handler")
    assert functions.invoke("py-changing")[1] == "first"
    second = zipped({"app.py": "def handler(e, c):\n    return 'second'\n"})
    functions.client.update_function_code(FunctionName="py-changing", ZipFile=second)
    assert functions.invoke("py-changing")[1] == "second"
    functions.client.update_function_configuration(FunctionName="py-changing", Handler="other.handler")
    functions.client.update_function_code(FunctionName="py-changing", ZipFile=zipped(
        {"other.py": "import os\ndef handler(e, c):\n    return os.environ['_HANDLER']\n"}))
    assert functions.invoke("py-changing")[1] == "other.handler"


def test_a_stopped_local_cloud_leaves_no_function_running(tmp_path, monkeypatch) -> None:
    # a private local cloud (not the session's), stopped while an Event invocation runs
    import boto3

    from formwright.cloud import local

    monkeypatch.setenv("FORMWRIGHT_HOME", str(tmp_path / "home"))
    record, _ = local.start()
    try:
        where = {"endpoint_url": record.endpoint, "region_name": "us-east-1", "aws_access_key_id": "x",
                 "aws_secret_access_key": "x"}
        client = boto3.client("lambda", **where)
        iam = boto3.client("iam", **where)
        role = iam.create_role(RoleName="r", AssumeRolePolicyDocument="{}")["Role"]["Arn"]
        pid_file = tmp_path / "pid"
        code = (f"import os, time\ndef handler(e, c):\n    open({str(pid_file)!r}, 'w')"
                ".write(str(os.getpid()))\n    time.sleep(600)\n")
        client.create_function(FunctionName="forever", Runtime="python3.12", Role=role, Handler="app.handler",
                               Timeout=900, Code={"ZipFile": zipped({"app.py": code})})
        reply = client.invoke(FunctionName="forever", InvocationType="Event", Payload=b"{}")
        assert reply["StatusCode"] == 202
        pid = int(eventually(lambda: pid_file.exists() and pid_file.read_text(), "the function started"))
        assert _running(pid)
    finally:
        local.stop()
    eventually(lambda: not _running(pid), f"function process {pid} ended with the local cloud")


def test_a_functions_layers_are_importable_as_from_opt(functions) -> None:
    # "Packaging your layer content": python/ and python/lib/python3.x/site-packages for Python,
    # nodejs/node_modules for Node.js; a later layer in Layers wins
    client = functions.client
    first = client.publish_layer_version(LayerName="helpers", Content={"ZipFile": zipped({
        "python/helper.py": "WHO = 'first layer'\n", "python/shadowed.py": "WHO = 'first'\n",
        "nodejs/node_modules/helper/index.js": "exports.who = 'node layer';\n"})})["LayerVersionArn"]
    second = client.publish_layer_version(LayerName="more", Content={"ZipFile": zipped({
        "python/shadowed.py": "WHO = 'second'\n"})})["LayerVersionArn"]
    code = "import helper, shadowed\n\ndef handler(event, context):\n    return [helper.WHO, shadowed.WHO]\n"
    functions.create("py-layers", {"app.py": code}, "app.handler", Layers=[first, second])
    assert functions.invoke("py-layers")[1] == ["first layer", "second"]
    if shutil.which("node"):
        node = 'exports.handler = async () => require("helper").who;\n'
        functions.create("node-layers", {"index.js": node}, "index.handler", runtime="nodejs20.x",
                         Layers=[first])
        assert functions.invoke("node-layers")[1] == "node layer"
    functions.create("py-nolayer", {"app.py": code}, "app.handler")
    assert functions.invoke("py-nolayer")[1]["errorType"] == "Runtime.ImportModuleError"
