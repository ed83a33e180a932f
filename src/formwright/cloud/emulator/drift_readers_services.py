"""Readers for the types real templates use most beyond storage and networks (issue 30, item 0).

Lambda layers and event source mappings, EventBridge rules, Step Functions state machines, IAM
managed and inline policies and instance profiles, security group ingress rules, KMS keys and Kinesis
streams, each looked up again in its moto service backend and returned in CloudFormation's property
names (None: it is gone). `drift_readers.READERS` registers them; the read-back after create, the read
back after delete and drift detection use them alike.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from formwright.cloud.emulator.drift_readers import ec2_backend, policy_document, security_rule_entries
from formwright.cloud.emulator.own import pascal


def _iam(account: str, region: str) -> Any:
    from moto.iam.models import iam_backends
    from moto.utilities.utils import get_partition

    return iam_backends[account][get_partition(region)]


def _lambda(account: str, region: str) -> Any:
    from moto.awslambda.utils import get_backend

    return get_backend(account, region)


def layer_version(obj: Any, account: str, region: str) -> dict[str, Any] | None:
    """AWS::Lambda::LayerVersion (GetLayerVersion)."""
    try:
        found = _lambda(account, region).layers_versions_by_arn(obj.arn)
    except Exception:  # noqa: BLE001 - moto raises its not-found error: the layer version was deleted
        return None
    if found is None:
        return None
    return {"LayerName": found.name, "Description": found.description or None,
            "CompatibleRuntimes": list(found.compatible_runtimes or []),
            "CompatibleArchitectures": list(found.compatible_architectures or []),
            "LicenseInfo": found.license_info or None}


def event_source_mapping(obj: Any, account: str, region: str) -> dict[str, Any] | None:
    """AWS::Lambda::EventSourceMapping (GetEventSourceMapping); FunctionName is not compared: the
    template gives a name or an ARN and the service answers the ARN."""
    found = _lambda(account, region).get_event_source_mapping(obj.uuid)
    if found is None:
        return None
    return {"EventSourceArn": found.event_source_arn, "BatchSize": found.batch_size,
            "Enabled": found.enabled, "StartingPosition": found.starting_position,
            "FilterCriteria": found.filter_criteria,
            "MaximumBatchingWindowInSeconds": found.max_batch_window,
            "FunctionResponseTypes": found.function_response_types}


def events_rule(obj: Any, account: str, region: str) -> dict[str, Any] | None:
    """AWS::Events::Rule (DescribeRule, ListTargetsByRule); EventBusName is not compared (a name or an
    ARN in the template)."""
    from moto.events.models import events_backends

    bus = events_backends[account][region].event_buses.get(obj.event_bus_name)
    rule = bus.rules.get(obj.name) if bus is not None else None
    if rule is None:
        return None
    pattern = rule.event_pattern.dump()
    return {"Name": rule.name, "Description": rule.description or None,
            "ScheduleExpression": rule.scheduled_expression or None,
            "EventPattern": json.loads(pattern) if pattern else None, "State": rule.state,
            "RoleArn": rule.role_arn or None, "Targets": [dict(t) for t in rule.targets]}


def state_machine(obj: Any, account: str, region: str) -> dict[str, Any] | None:
    """AWS::StepFunctions::StateMachine (DescribeStateMachine). `DefinitionString` is compared as the
    document it is, however the template gave it (`completions_services.state_machine_expected`)."""
    from moto.stepfunctions.models import stepfunctions_backends

    machine = stepfunctions_backends[account][region].state_machines
    found = next((m for m in machine if m.arn == obj.arn), None)
    if found is None:
        return None
    try:
        definition = json.loads(found.definition)
    except ValueError:
        definition = found.definition
    return {"StateMachineName": found.name, "RoleArn": found.roleArn, "StateMachineType": found.type,
            "DefinitionString": definition,
            "LoggingConfiguration": pascal(found.loggingConfiguration),
            "TracingConfiguration": pascal(found.tracingConfiguration)}


def managed_policy(obj: Any, account: str, region: str) -> dict[str, Any] | None:
    """AWS::IAM::ManagedPolicy (GetPolicy, GetPolicyVersion, ListEntitiesForPolicy)."""
    backend = _iam(account, region)
    found = backend.managed_policies.get(obj.arn)
    if found is None:
        return None

    def attached(entities: Any) -> list[str]:
        return sorted(e.name for e in entities.values() if obj.arn in e.managed_policies)

    return {"ManagedPolicyName": found.name, "Description": found.description or None,
            "Path": found.path,
            "PolicyDocument": policy_document(next(v.document for v in found.versions if v.is_default)),
            "Roles": attached(backend.roles), "Users": attached(backend.users),
            "Groups": attached(backend.groups)}


def inline_policy(obj: Any, account: str, region: str) -> dict[str, Any] | None:
    """AWS::IAM::Policy: the inline policy as each role, user and group holds it (GetRolePolicy, ...)."""
    backend = _iam(account, region)
    if obj.name not in backend.inline_policies:
        return None

    def holders(entities: Any) -> list[str]:
        return sorted(e.name for e in entities.values() if obj.policy_name in e.policies)

    holding = [e for group in (backend.roles, backend.users, backend.groups) for e in group.values()
               if obj.policy_name in e.policies]
    documents = [policy_document(e.policies[obj.policy_name]) for e in holding]
    same = documents and all(d == documents[0] for d in documents)
    return {"PolicyName": obj.policy_name, "PolicyDocument": documents[0] if same else None,
            "Roles": holders(backend.roles), "Users": holders(backend.users),
            "Groups": holders(backend.groups)}


def instance_profile(obj: Any, account: str, region: str) -> dict[str, Any] | None:
    """AWS::IAM::InstanceProfile (GetInstanceProfile)."""
    found = next((p for p in _iam(account, region).instance_profiles.values() if p.id == obj.id), None)
    if found is None:
        return None
    return {"InstanceProfileName": found.name, "Path": found.path, "Roles": [r.name for r in found.roles]}


INGRESS_KEYS = ("IpProtocol", "FromPort", "ToPort", "CidrIp", "CidrIpv6", "SourceSecurityGroupId",
                "Description")


def security_group_ingress(obj: Any, account: str, region: str) -> dict[str, Any] | None:
    """AWS::EC2::SecurityGroupIngress: its rule among the group's (DescribeSecurityGroupRules), found by
    its rule id (`sgr-...`, the resource's Ref); None when the group no longer has it."""
    found = ingress_rule(obj, account, region)
    if found is None:
        return None
    rule, entry = found
    return {"GroupId": rule.group_id, "Id": rule.id, **{k: entry.get(k) for k in INGRESS_KEYS}}


def ingress_rule(obj: Any, account: str, region: str) -> tuple[Any, dict[str, Any]] | None:
    """(the moto rule, its entry in the template's names) an AWS::EC2::SecurityGroupIngress made: the rule of
    its id once known, else the first of its group matching its properties (IpProtocol compared by name or
    number, tcp is 6)."""
    wanted = {k: obj.properties[k] for k in INGRESS_KEYS if obj.properties.get(k) is not None}
    group = ec2_backend(account, region).get_security_group_from_id(obj.security_group.id)
    if group is None:
        return None
    rule_id = getattr(obj, "fw_rule_id", None)
    for rule in group.ingress_rules:
        if rule_id is not None and rule.id != rule_id:
            continue
        for entry in security_rule_entries(rule):
            if rule_id is not None or all(_same_rule_value(k, v, entry.get(k))
                                          for k, v in wanted.items() if k != "Description"):
                return rule, entry
    return None


PROTOCOLS = {"tcp": "6", "udp": "17", "icmp": "1", "icmpv6": "58", "all": "-1"}


def _same_rule_value(key: str, expected: Any, actual: Any) -> bool:
    if key == "IpProtocol":
        return PROTOCOLS.get(str(expected).lower(), str(expected)) == PROTOCOLS.get(
            str(actual).lower(), str(actual))
    return str(expected) == str(actual)


def kms_key(obj: Any, account: str, region: str) -> dict[str, Any] | None:
    """AWS::KMS::Key (DescribeKey, GetKeyPolicy, GetKeyRotationStatus); a key pending deletion is gone
    for the stack, as CloudFormation schedules the deletion."""
    from moto.kms.models import kms_backends

    found = kms_backends[account][region].keys.get(obj.id)
    if found is None or found.key_state == "PendingDeletion":
        return None
    return {"Description": found.description or None, "Enabled": found.enabled,
            "EnableKeyRotation": bool(found.key_rotation_status), "KeyUsage": found.key_usage,
            "KeySpec": found.key_spec, "MultiRegion": bool(found.multi_region),
            "KeyPolicy": policy_document(found.policy)}


def kinesis_stream(obj: Any, account: str, region: str) -> dict[str, Any] | None:
    """AWS::Kinesis::Stream (DescribeStreamSummary)."""
    from moto.kinesis.models import kinesis_backends

    found = kinesis_backends[account][region].streams.get(obj.stream_name)
    if found is None:
        return None
    return {"Name": found.stream_name, "RetentionPeriodHours": found.retention_period_hours,
            "ShardCount": None if found.stream_mode.get("StreamMode") == "ON_DEMAND" else len(found.shards),
            "StreamModeDetails": found.stream_mode}


READERS: dict[str, Callable[[Any, str, str], dict[str, Any] | None]] = {
    "AWS::Lambda::LayerVersion": layer_version,
    "AWS::Lambda::EventSourceMapping": event_source_mapping,
    "AWS::Events::Rule": events_rule,
    "AWS::StepFunctions::StateMachine": state_machine,
    "AWS::IAM::ManagedPolicy": managed_policy,
    "AWS::IAM::Policy": inline_policy,
    "AWS::IAM::InstanceProfile": instance_profile,
    "AWS::EC2::SecurityGroupIngress": security_group_ingress,
    "AWS::KMS::Key": kms_key,
    "AWS::Kinesis::Stream": kinesis_stream,
}
