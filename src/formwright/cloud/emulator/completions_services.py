"""What moto's models of Lambda functions, KMS keys and Step Functions state machines leave out on
create (and update), set through their service objects as the service's API sets them.

Found by reading the resources back after create (issue 30): moto's `AWS::Lambda::LayerVersion` drops
`CompatibleArchitectures` and cannot be deleted; its `AWS::Lambda::Function` takes
neither `Layers`, `Architectures`, `TracingConfig`, `KmsKeyArn` nor `EphemeralStorage` (a SAM function's
layers were missing when it ran); its `AWS::KMS::Key` is always a symmetric encryption key whatever
`KeySpec` and `KeyUsage` say; its `AWS::StepFunctions::StateMachine` reads `DefinitionString` alone
(no `Definition` object, `DefinitionS3Location` or `DefinitionSubstitutions`) and makes every machine
STANDARD, without its logging or tracing configuration.
Its `AWS::EC2::SecurityGroupIngress` keeps a rule's Description only when the rule is a CidrIp one.
"""

from __future__ import annotations

import json
import re
from typing import Any

from formwright.cloud.emulator.own import camel


def layer_created(obj: Any, props: dict[str, Any], account: str, region: str) -> None:
    """A layer version's CompatibleArchitectures (moto's create takes the other properties)."""
    obj.compatible_architectures = list(props.get("CompatibleArchitectures") or [])


def _layer_deleted(obj: Any, account: str, region: str) -> None:
    from moto.awslambda.utils import get_backend

    get_backend(account, region).delete_layer_version(obj.name, str(obj.version))


def _managed_policy_deleted(obj: Any, account: str, region: str) -> None:
    """Detached from its roles, users and groups, then deleted (DeletePolicy refuses an attached policy)."""
    from moto.iam.models import iam_backends
    from moto.utilities.utils import get_partition

    backend: Any = iam_backends[account][get_partition(region)]
    for entities, detach in ((backend.roles, backend.detach_role_policy),
                             (backend.users, backend.detach_user_policy),
                             (backend.groups, backend.detach_group_policy)):
        for entity in list(entities.values()):
            if obj.arn in entity.managed_policies:
                detach(obj.arn, entity.name)
    backend.delete_policy(obj.arn)


def rule_call(rule: dict[str, Any]) -> dict[str, Any]:
    """One SecurityGroupIngress / SecurityGroupEgress entry as moto's authorize/revoke arguments."""
    ranges = [{k: rule[k] for k in (key, "Description") if k in rule} for key in ("CidrIp", "CidrIpv6")
              if key in rule]
    group = rule.get("SourceSecurityGroupId") or rule.get("DestinationSecurityGroupId")
    # a rule's Description is the group pair's too (EC2 API UserIdGroupPair, "Description")
    pair = {"GroupId": group, **({"Description": rule["Description"]} if "Description" in rule else {})}
    return {"ip_protocol": str(rule.get("IpProtocol")), "from_port": rule.get("FromPort"),
            "to_port": rule.get("ToPort"), "ip_ranges": ranges, "source_groups": [pair] if group else []}


def ingress_created(obj: Any, props: dict[str, Any], account: str, region: str) -> None:
    """An AWS::EC2::SecurityGroupIngress from another group keeps its Description: moto's model gives the
    Description to a CidrIp rule alone, so the rule it made is authorized again with it. The rule's id
    (`sgr-...`) is then the resource's physical id, as CloudFormation's Ref gives it (the provider schema's
    primary identifier, Id)."""
    from moto.ec2.models import ec2_backends

    from formwright.cloud.emulator.drift_readers_services import ingress_rule

    if "Description" in props and props.get("SourceSecurityGroupId"):
        group, backend = obj.security_group, ec2_backends[account][region]
        made = {k: v for k, v in props.items() if k != "Description"}
        backend.revoke_security_group_ingress(group.id, vpc_id=group.vpc_id, **rule_call(made))
        backend.authorize_security_group_ingress(group.id, vpc_id=group.vpc_id, **rule_call(props))
    found = ingress_rule(obj, account, region)
    obj.fw_rule_id = found[0].id if found else None


def _ingress_deleted(obj: Any, account: str, region: str) -> None:
    """An AWS::EC2::SecurityGroupIngress rule revoked from its group (moto's model has no delete)."""
    from moto.ec2.models import ec2_backends

    group = obj.security_group
    ec2_backends[account][region].revoke_security_group_ingress(group.id, vpc_id=group.vpc_id,
                                                                **rule_call(obj.properties))


# types whose delete through moto's model does nothing or leaves the resource
OWN_DELETE = {"AWS::Lambda::LayerVersion": _layer_deleted, "AWS::IAM::ManagedPolicy": _managed_policy_deleted,
              "AWS::EC2::SecurityGroupIngress": _ingress_deleted}


def patch_models() -> None:
    """AWS::Lambda::LayerVersion's Ref is its version ARN and AWS::EC2::SecurityGroupIngress's its rule id
    ("Return values"); moto's models have no physical id, so Ref gave the object's text."""
    from moto.awslambda.models import LayerVersion
    from moto.ec2.models.security_groups import SecurityGroupIngress

    LayerVersion.physical_resource_id = property(lambda self: self.arn)  # type: ignore[attr-defined]
    # an ingress rule's Ref is its rule id (set once made: `ingress_created`)
    SecurityGroupIngress.physical_resource_id = property(  # type: ignore[attr-defined]
        lambda self: getattr(self, "fw_rule_id", None))

FUNCTION_SETTINGS = ("Layers", "Architectures", "TracingConfig", "KmsKeyArn", "EphemeralStorage")


def function_settings(obj: Any, props: dict[str, Any], names: set[str], account: str, region: str) -> None:
    """A function's layers, architecture, tracing, KMS key and /tmp size (their defaults when the
    template drops them)."""
    if "Layers" in names:
        obj.layers = obj._get_layers_data(props.get("Layers") or [])
    if "Architectures" in names:
        obj.architectures = list(props.get("Architectures") or ["x86_64"])
    if "TracingConfig" in names:
        obj.tracing_config = props.get("TracingConfig") or {"Mode": "PassThrough"}
    if "KmsKeyArn" in names:
        obj.kms_key_arn = props.get("KmsKeyArn")
    if "EphemeralStorage" in names:
        obj.ephemeral_storage = int((props.get("EphemeralStorage") or {}).get("Size", 512))


def function_created(obj: Any, props: dict[str, Any], account: str, region: str) -> None:
    """The settings moto's create of a function drops."""
    function_settings(obj, props, set(props) & set(FUNCTION_SETTINGS), account, region)


def key_created(obj: Any, props: dict[str, Any], account: str, region: str) -> None:
    """A key of the KeySpec and KeyUsage the template gives (moto's create makes SYMMETRIC_DEFAULT
    ENCRYPT_DECRYPT), with key material of that spec."""
    from moto.kms.utils import generate_private_key

    spec = props.get("KeySpec") or "SYMMETRIC_DEFAULT"
    obj.key_usage = props.get("KeyUsage") or "ENCRYPT_DECRYPT"
    if spec != obj.key_spec:
        obj.key_spec = spec
        obj.private_key = generate_private_key(spec)


def definition(props: dict[str, Any], account: str | None = None, region: str | None = None) -> str | None:
    """A state machine's definition text from `Definition`, `DefinitionString` or (given the account and
    region) `DefinitionS3Location`, with `DefinitionSubstitutions` put in for `${name}`
    (AWS::StepFunctions::StateMachine); None when it cannot be told."""
    if isinstance(props.get("Definition"), dict):
        text = json.dumps(props["Definition"])
    elif isinstance(props.get("DefinitionString"), str):
        text = props["DefinitionString"]
    elif isinstance(props.get("DefinitionS3Location"), dict) and account and region:
        text = _s3_text(props["DefinitionS3Location"], account, region)
    else:
        return None
    values = props.get("DefinitionSubstitutions") or {}
    return re.sub(r"\$\{([^}]+)\}", lambda m: str(values[m.group(1)]) if m.group(1) in values else m.group(0),
                  text)


def _s3_text(location: dict[str, Any], account: str, region: str) -> str:
    from moto.s3.models import s3_backends
    from moto.utilities.utils import get_partition

    key: Any = s3_backends[account][get_partition(region)].get_object(
        location["Bucket"], location["Key"], version_id=location.get("Version"))
    return str(key.value.decode())


def state_machine_settings(obj: Any, props: dict[str, Any], names: set[str], account: str,
                           region: str) -> None:
    """A state machine's definition (however given), type, logging and tracing."""
    if names & {"Definition", "DefinitionString", "DefinitionS3Location", "DefinitionSubstitutions"}:
        text = definition(props, account, region)
        if text is not None:
            obj.definition = text
    if "StateMachineType" in names:
        obj.type = props.get("StateMachineType") or "STANDARD"
    if "LoggingConfiguration" in names:
        obj.loggingConfiguration = camel(props.get("LoggingConfiguration")) or {"level": "OFF"}
    if "TracingConfiguration" in names:
        obj.tracingConfiguration = camel(props.get("TracingConfiguration")) or {"enabled": False}


def state_machine_created(obj: Any, props: dict[str, Any], account: str, region: str) -> None:
    """What moto's create of a state machine drops."""
    state_machine_settings(obj, props, set(props), account, region)


def state_machine_expected(values: dict[str, Any]) -> dict[str, Any]:
    """The applied properties of a state machine as its reader gives them: `DefinitionString` the
    document with its substitutions made, whichever way the template wrote it (a definition in S3 is
    not compared)."""
    text = definition(values)
    for name in ("DefinitionString", "DefinitionSubstitutions", "DefinitionS3Location", "Definition"):
        values.pop(name, None)
    if text is not None:
        try:
            values["DefinitionString"] = json.loads(text)
        except ValueError:
            values["DefinitionString"] = text
    return values


# per type: the applied properties as its reader answers them (compared after the write-only ones go)
EXPECTED = {"AWS::StepFunctions::StateMachine": state_machine_expected}
