"""Resource policies a stack attaches to another resource: S3 BucketPolicy, SQS QueuePolicy and EventBridge
EventBusPolicy, set through moto's S3, SQS and Events backends (GetBucketPolicy, GetQueueAttributes Policy and
DescribeEventBus answer them).

Return values (AWS CloudFormation Template Reference): BucketPolicy `Ref` is the bucket's name (its primary
identifier); QueuePolicy `Ref` and `Id` its generated id; EventBusPolicy `Ref` its statement id.
"""

from __future__ import annotations

import json
from typing import Any

from formwright.cloud.emulator.own import Invalid, Model, backend, document, generated_name, register


def _s3(account: str, region: str) -> Any:
    from moto.s3.models import s3_backends
    from moto.utilities.utils import get_partition

    return s3_backends[account][get_partition(region)]


def _text(policy: Any) -> str:
    return policy if isinstance(policy, str) else json.dumps(policy)


@register
class BucketPolicy(Model):
    """AWS::S3::BucketPolicy."""

    kind = "AWS::S3::BucketPolicy"
    in_place = frozenset({"PolicyDocument"})

    def create(self, props: dict[str, Any], stack_name: str) -> None:
        self.physical_resource_id = str(props["Bucket"])
        self.update(props, {"PolicyDocument"})

    def update(self, props: dict[str, Any], names: set[str]) -> None:
        policy = document(props["PolicyDocument"])
        if not isinstance(policy, dict) or not policy.get("Statement"):
            raise Invalid("Policies must be valid JSON and the first byte must be '{'")
        _s3(self.account_id, self.region_name).put_bucket_policy(
            self.physical_resource_id, _text(policy).encode()
        )

    def remove(self) -> None:
        bucket = _s3(self.account_id, self.region_name).buckets.get(self.physical_resource_id)
        if bucket is not None:
            bucket.policy = None

    def read(self) -> dict[str, Any] | None:
        bucket = _s3(self.account_id, self.region_name).buckets.get(self.physical_resource_id)
        if bucket is None or not bucket.policy:
            return None
        return {"Bucket": bucket.name, "PolicyDocument": json.loads(bucket.policy)}


def _sqs(account: str, region: str) -> Any:
    return backend("sqs", account, region)


def _queue_name(url: str) -> str:
    """A queue's name from its URL (`Queues` lists URLs: the Ref of an AWS::SQS::Queue)."""
    return str(url).rstrip("/").rsplit("/", 1)[-1]


@register
class QueuePolicy(Model):
    """AWS::SQS::QueuePolicy: the same policy on each queue listed."""

    kind = "AWS::SQS::QueuePolicy"
    in_place = frozenset({"PolicyDocument", "Queues"})

    def create(self, props: dict[str, Any], stack_name: str) -> None:
        self.queues: dict[str, str] = {}  # name -> URL as the template gives it
        self.physical_resource_id = generated_name(self.kind, stack_name, self.logical_resource_id)
        self.update(props, {"PolicyDocument", "Queues"})

    def update(self, props: dict[str, Any], names: set[str]) -> None:
        backend = _sqs(self.account_id, self.region_name)
        policy = _text(document(props["PolicyDocument"]))
        wanted = {_queue_name(url): str(url) for url in props.get("Queues") or []}
        for name in wanted:
            backend.get_queue(name).policy = policy  # a missing queue: QueueDoesNotExist
        for name in set(self.queues) - set(wanted):
            queue = backend.queues.get(name)
            if queue is not None:
                queue.policy = None
        self.queues = wanted

    def remove(self) -> None:
        backend = _sqs(self.account_id, self.region_name)
        for name in self.queues:
            queue = backend.queues.get(name)
            if queue is not None:
                queue.policy = None

    def read(self) -> dict[str, Any] | None:
        backend = _sqs(self.account_id, self.region_name)
        live = [n for n in self.queues if n in backend.queues and backend.queues[n].policy]
        if not live:
            return None
        return {
            "PolicyDocument": json.loads(backend.queues[live[0]].policy),
            "Queues": [self.queues[n] for n in live],
        }

    def attribute(self, name: str) -> Any:
        if name == "Id":
            return self.physical_resource_id
        raise KeyError(name)


def _events(account: str, region: str) -> Any:
    return backend("events", account, region)


@register
class EventBusPolicy(Model):
    """AWS::Events::EventBusPolicy: one statement of an event bus's policy (PutPermission)."""

    kind = "AWS::Events::EventBusPolicy"
    in_place = frozenset({"Statement", "Action", "Principal", "Condition"})

    def create(self, props: dict[str, Any], stack_name: str) -> None:
        self.bus = str(props.get("EventBusName") or "default")
        self.physical_resource_id = str(props["StatementId"])
        self.update(props, set(self.in_place))

    def update(self, props: dict[str, Any], names: set[str]) -> None:
        backend = _events(self.account_id, self.region_name)
        bus = backend.describe_event_bus(self.bus)
        bus.remove_statement(self.physical_resource_id)
        statement = document(props.get("Statement"))
        if statement:
            full = {"Effect": "Allow", "Resource": bus.arn, **statement, "Sid": self.physical_resource_id}
            backend.put_permission(self.bus, None, None, None, None, json.dumps({"Statement": [full]}))
        else:
            backend.put_permission(
                self.bus,
                props.get("Action") or "events:PutEvents",
                props.get("Principal"),
                self.physical_resource_id,
                props.get("Condition"),
                None,
            )

    def remove(self) -> None:
        bus = _events(self.account_id, self.region_name).event_buses.get(self.bus)
        if bus is not None:
            bus.remove_statement(self.physical_resource_id)

    def _statement(self) -> dict[str, Any] | None:
        bus = _events(self.account_id, self.region_name).event_buses.get(self.bus)
        found = bus._statements.get(self.physical_resource_id) if bus is not None else None
        return found.describe() if found is not None else None

    def read(self) -> dict[str, Any] | None:
        statement = self._statement()
        if statement is None:
            return None
        principal = statement["Principal"]
        found = {
            "EventBusName": self.bus,
            "StatementId": self.physical_resource_id,
            "Action": statement["Action"],
            "Principal": principal.get("AWS") if isinstance(principal, dict) else principal,
            "Statement": {k: v for k, v in statement.items() if k != "Sid"},
        }
        if isinstance(found["Principal"], str) and found["Principal"].startswith("arn:"):
            found["Principal"] = found["Principal"].split(":")[4]  # PutPermission's account id
        return found
