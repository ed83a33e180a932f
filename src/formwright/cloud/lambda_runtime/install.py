"""Installing the Lambda runtime into moto's server (called by `formwright.cloud.moto_server.main`).

moto has no hook for any of these, so each is patched in place, idempotently:
- `LambdaFunction.invoke` (moto runs functions in Docker) runs them here (invoke.py);
- a CloudFormation `Code: {ZipFile: ...}` of a nodejs function becomes `index.js` with the
  `cfn-response` module, as CloudFormation makes it (moto wrote `index.py` whatever the runtime), and an
  update with ZipFile is converted the same way (moto took the text for base64);
- SQS event source mappings are delivered by a poller, not inside SendMessage (event_sources.py);
- S3 notifications to a function invoke it asynchronously with the documented record;
- the custom resources' ResponseURL is answered ahead of moto's routing (custom_resources.receive).
"""

from __future__ import annotations

import base64
import inspect
import io
import json
import zipfile
from pathlib import Path
from typing import Any

from formwright.cloud.lambda_runtime import contract, custom_resources, event_sources, invoke

HERE = Path(__file__).parent


def install(endpoint: str) -> None:
    """Patch moto so functions run in this local cloud, reachable at `endpoint`."""
    from moto.awslambda import models

    invoke.set_endpoint(endpoint)
    if getattr(models.LambdaFunction, "_formwright_runtime", False):
        return
    models.LambdaFunction._formwright_runtime = True  # type: ignore[attr-defined]  # our marker on moto's class
    # moto has no hook: patched in place (mypy reads a function set on a class as an unbound method)
    models.LambdaFunction.invoke = invoke.invoke  # type: ignore[method-assign,assignment]
    _patch_inline_code(models)
    _patch_sqs(models)
    _patch_s3()
    _patch_response_url()
    event_sources.start_poller()


def inline_zip(code: str, runtime: str | None) -> bytes:
    """A CloudFormation `ZipFile` as the .zip CloudFormation makes of it: `index.js` with the
    `cfn-response` module for nodejs, `index.py` with `cfnresponse` for Python ("AWS::Lambda::Function
    Code", ZipFile; "cfn-response module", AWS CloudFormation User Guide)."""
    from moto.utilities.utils import load_resource_as_str

    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        if contract.family(runtime) == "node":
            archive.writestr("index.js", code)
            archive.writestr("node_modules/cfn-response/index.js", (HERE / "cfn_response.js").read_text())
        else:
            archive.writestr("index.py", code)
            archive.writestr("cfnresponse.py", load_resource_as_str("awslambda/resources/cfnresponse.py.txt"))
    return out.getvalue()


def _patch_inline_code(models: Any) -> None:
    cls = models.LambdaFunction
    create = cls.create_from_cloudformation_json.__func__
    update = cls.update_from_cloudformation_json.__func__

    def create_from_cloudformation_json(klass: Any, resource_name: str, cloudformation_json: dict[str, Any],
                                        account_id: str, region_name: str, **kwargs: Any) -> Any:
        # read before moto rewrites it (to the base64 of its zip)
        text = (cloudformation_json.get("Properties", {}).get("Code") or {}).get("ZipFile")
        function = create(klass, resource_name, cloudformation_json, account_id, region_name, **kwargs)
        if isinstance(text, str) and contract.family(function.run_time) == "node":
            function.update_function_code({"ZipFile": base64.b64encode(inline_zip(text, function.run_time))})
        return function

    def update_from_cloudformation_json(klass: Any, original_resource: Any, new_resource_name: str,
                                        cloudformation_json: dict[str, Any], account_id: str,
                                        region_name: str) -> Any:
        props = cloudformation_json.get("Properties") or {}
        text = (props.get("Code") or {}).get("ZipFile")
        if isinstance(text, str):
            runtime = props.get("Runtime") or original_resource.run_time
            code = {**props["Code"], "ZipFile": base64.b64encode(inline_zip(text, runtime))}
            cloudformation_json = {**cloudformation_json, "Properties": {**props, "Code": code}}
        return update(klass, original_resource, new_resource_name, cloudformation_json, account_id,
                      region_name)

    cls.create_from_cloudformation_json = classmethod(create_from_cloudformation_json)
    cls.update_from_cloudformation_json = classmethod(update_from_cloudformation_json)


def _patch_sqs(models: Any) -> None:
    from moto.sqs.models import Queue

    create_mapping = models.LambdaBackend.create_event_source_mapping

    def create_event_source_mapping(self: Any, spec: dict[str, Any]) -> Any:
        mapping = create_mapping(self, spec)
        if mapping.event_source_arn.split(":")[2] == "sqs":
            event_sources.detach(mapping)
        return mapping

    models.LambdaBackend.create_event_source_mapping = create_event_source_mapping  # type: ignore[method-assign]
    add_message = Queue.add_message

    def add_message_and_wake(self: Any, message: Any) -> None:
        add_message(self, message)
        event_sources.wake()

    Queue.add_message = add_message_and_wake  # type: ignore[method-assign]  # moto has no hook: patched in place


def _patch_s3() -> None:
    from moto.s3 import notifications

    make_event = notifications._get_s3_event

    def get_s3_event(event_name: str, bucket: Any, key: Any, notification_id: str) -> dict[str, Any]:
        event = make_event(event_name, bucket, key, notification_id)
        return event_sources.s3_record(event, bucket.account_id, key.name, getattr(key, "version_id", None))

    def invoke_function(account_id: str, event_body: Any, fn_arn: str, region_name: str) -> None:
        from moto.awslambda.utils import get_backend

        try:
            function = get_backend(account_id, region_name).get_function(fn_arn)
        except Exception:  # noqa: BLE001 - S3 delivers asynchronously: a missing function fails nothing
            return
        invoke.in_background(function, json.dumps(event_body).encode("utf-8"))

    notifications._get_s3_event = get_s3_event
    notifications._invoke_awslambda = invoke_function
    _patch_bucket_notifications()


def _patch_bucket_notifications() -> None:
    """An AWS::S3::Bucket's NotificationConfiguration applied on create and update (moto ignored it)."""
    from moto.s3.models import FakeBucket

    # the classmethods' functions, to call with the class they are called on
    create = inspect.getattr_static(FakeBucket, "create_from_cloudformation_json").__func__
    update = inspect.getattr_static(FakeBucket, "update_from_cloudformation_json").__func__

    def apply(bucket: Any, cloudformation_json: dict[str, Any]) -> Any:
        config = (cloudformation_json.get("Properties") or {}).get("NotificationConfiguration")
        bucket.set_notification_configuration(event_sources.moto_notifications(config) or None)
        return bucket

    def create_from_cloudformation_json(klass: Any, resource_name: str, cloudformation_json: dict[str, Any],
                                        account_id: str, region_name: str, **kwargs: Any) -> Any:
        return apply(create(klass, resource_name, cloudformation_json, account_id, region_name, **kwargs),
                     cloudformation_json)

    def update_from_cloudformation_json(klass: Any, original_resource: Any, new_resource_name: str,
                                        cloudformation_json: dict[str, Any], account_id: str,
                                        region_name: str) -> Any:
        return apply(update(klass, original_resource, new_resource_name, cloudformation_json, account_id,
                            region_name), cloudformation_json)

    # moto has no hook for these: patched in place
    FakeBucket.create_from_cloudformation_json = classmethod(  # type: ignore[method-assign,assignment]
        create_from_cloudformation_json)
    FakeBucket.update_from_cloudformation_json = classmethod(  # type: ignore[method-assign,assignment]
        update_from_cloudformation_json)


def _patch_response_url() -> None:
    from moto.moto_server.werkzeug_app import DomainDispatcherApplication

    dispatch = DomainDispatcherApplication.__call__

    def call(self: Any, environ: dict[str, Any], start_response: Any) -> Any:
        if custom_resources.is_response(environ):
            return custom_resources.receive(environ, start_response)
        return dispatch(self, environ, start_response)

    DomainDispatcherApplication.__call__ = call  # type: ignore[method-assign]  # moto has no hook: patched in place
