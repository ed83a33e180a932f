"""Valid templates that moto's own CloudFormation models fail on with a Python error, given to moto as
CloudFormation reads them (issue 30: "no InternalFailure on a valid template").

Only the properties handed to moto's model change; the stack's record keeps the template's own.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any


def _security_group(props: dict[str, Any], account: str, region: str) -> dict[str, Any]:
    """An ingress rule without ports (IpProtocol -1, "all protocols": AWS::EC2::SecurityGroup Ingress,
    FromPort "Required: Conditional") is all ports, -1 as the EC2 API writes "all"; moto's model reads
    FromPort and ToPort unconditionally (and drops a null one)."""
    for rule in props.get("SecurityGroupIngress") or []:
        rule.setdefault("FromPort", -1)
        rule.setdefault("ToPort", -1)
    return props


def _kms_key(props: dict[str, Any], account: str, region: str) -> dict[str, Any]:
    """AWS::KMS::Key KeyPolicy: "If you don't specify a key policy, AWS KMS uses the default key policy",
    which gives the account's root full access (AWS KMS Developer Guide, "Default key policy"). A policy given
    as an object is handed to moto as the JSON text GetKeyPolicy answers. Tags are CloudFormation's Key/Value
    pairs (AWS::KMS::Key Tags, "Tag"), which the KMS API names TagKey/TagValue (CreateKey, AWS KMS API
    Reference) as moto's store reads them."""
    props.setdefault("KeyPolicy", {"Version": "2012-10-17", "Id": "key-default-1", "Statement": [{
        "Sid": "Enable IAM User Permissions", "Effect": "Allow",
        "Principal": {"AWS": f"arn:aws:iam::{account}:root"}, "Action": "kms:*", "Resource": "*"}]})
    if isinstance(props["KeyPolicy"], dict):  # GetKeyPolicy answers the text moto keeps
        props["KeyPolicy"] = json.dumps(props["KeyPolicy"])
    if props.get("Tags"):
        props["Tags"] = [{"TagKey": t["Key"], "TagValue": t["Value"]} for t in props["Tags"]]
    return props


def _instance(props: dict[str, Any], account: str, region: str) -> dict[str, Any]:
    """A BlockDeviceMappings entry of an instance store volume (VirtualName `ephemeralN`, no Ebs) or one
    suppressed with NoDevice makes no EBS volume, and DescribeInstances lists EBS volumes only; moto's model
    reads Ebs unconditionally, so it gets the EBS mappings alone. An instance from a launch template gets the
    template's parameters it does not set itself (moto's model ignores LaunchTemplate)."""
    if props.get("LaunchTemplate"):
        props = _from_launch_template(props, account, region)
    if props.get("BlockDeviceMappings"):
        props["BlockDeviceMappings"] = [m for m in props["BlockDeviceMappings"] if "Ebs" in m]
    return props


def _from_launch_template(props: dict[str, Any], account: str, region: str) -> dict[str, Any]:
    """The instance's properties with the launch template version's LaunchTemplateData under them: "any
    parameters that you specify for the new instance override the corresponding parameters in the launch
    template" (EC2 User Guide, "Launch an instance from a launch template"; AWS::EC2::Instance
    LaunchTemplateSpecification: LaunchTemplateId or LaunchTemplateName, and Version)."""
    from moto.ec2.models import ec2_backends

    spec = props["LaunchTemplate"]
    data = ec2_backends[account][region]._get_template_from_args(
        {**spec, "Version": str(spec.get("Version", "$Default"))}).data
    for key in ("ImageId", "InstanceType", "KeyName", "SecurityGroupIds", "SecurityGroups", "UserData",
                "BlockDeviceMappings"):
        if key in data and key not in props:
            props[key] = str(data[key]) if key == "UserData" else copy.deepcopy(data[key])
    primary: dict[str, Any] = next(
        (n for n in data.get("NetworkInterfaces") or [] if int(n.get("DeviceIndex", 0)) == 0), {})
    for key, there in (("SubnetId", "SubnetId"), ("PrivateIpAddress", "PrivateIpAddress"),
                       ("SecurityGroupIds", "Groups")):
        if there in primary:
            props.setdefault(key, primary[there])
    profile = data.get("IamInstanceProfile") or {}
    if "IamInstanceProfile" not in props and (profile.get("Name") or profile.get("Arn")):
        props["IamInstanceProfile"] = profile.get("Name") or str(profile["Arn"]).rsplit("/", 1)[-1]
    for spec_tags in data.get("TagSpecifications") or []:
        if spec_tags.get("ResourceType") == "instance":
            props["Tags"] = [*spec_tags.get("Tags", []), *props.get("Tags", [])]
    return props


def _layer_version(props: dict[str, Any], account: str, region: str) -> dict[str, Any]:
    """moto's model names a layer by the name property of its own type (`LayerVersion`), never by
    `LayerName`: the layer got the generated name."""
    if props.get("LayerName"):
        props["LayerVersion"] = props["LayerName"]
    return props


def _address(props: dict[str, Any], account: str, region: str) -> dict[str, Any]:
    """An Elastic IP address without a Domain is a VPC address with an allocation id: EC2-Classic is
    retired (EC2 User Guide, "Migrate from EC2-Classic to a VPC"), so AllocateAddress makes only those.
    moto's model made a "standard" address without one, and AWS's sample EIP_With_Association.yaml failed
    on its Fn::GetAtt AllocationId."""
    props.setdefault("Domain", "vpc")
    return props


def _function(props: dict[str, Any], account: str, region: str) -> dict[str, Any]:
    """A function of a runtime Lambda no longer takes for new functions is refused as Lambda refuses it
    (Lambda Developer Guide, "Runtime deprecation policy": after the "Block function create" date "you can
    no longer create new Lambda functions" with it), by the dates cfn-lint ships (its rule E2531). moto made
    them, and SAM's python2.7 and nodejs6.10 examples reached CREATE_COMPLETE where AWS fails them."""
    import datetime

    from cfnlint.data import AdditionalSpecs
    from cfnlint.helpers import load_resource
    from moto.awslambda.exceptions import InvalidParameterValueException

    runtime = props.get("Runtime")
    dates = load_resource(AdditionalSpecs, "LmbdRuntimeLifecycle.json").get(str(runtime)) or {}
    blocked = dates.get("create-block")
    if blocked and datetime.date.fromisoformat(blocked) <= datetime.date.today():
        successor = dates.get("successor")
        advice = f" We recommend you use the new runtime ({successor})" if successor else ""
        raise InvalidParameterValueException(
            f"The runtime parameter of {runtime} is no longer supported for creating or updating AWS Lambda "
            f"functions.{advice} while creating or updating functions.")
    return props


def _flow_log(props: dict[str, Any], account: str, region: str) -> dict[str, Any]:
    """MaxAggregationInterval is an Integer (60 or 600; CloudFormation template reference, AWS::EC2::FlowLog)
    that CloudFormation takes written as a string too, as a String parameter gives it. moto compared the
    string with 60 and 600 and refused AWS's sample VPCFlowLogsCloudWatch.cfn.yaml ("Invalid Flow Log Max
    Aggregation Interval")."""
    interval = props.get("MaxAggregationInterval")
    if isinstance(interval, str) and interval.strip().isdigit():
        props["MaxAggregationInterval"] = int(interval)
    return props


def _ssm_document(props: dict[str, Any], account: str, region: str) -> dict[str, Any]:
    """AWS::SSM::Document DocumentFormat is optional ("JSON | YAML | TEXT", "Default: JSON"; CloudFormation
    template reference, and CreateDocument: "JSON is the default format"); moto's model refused a document
    without it ("Invalid document format None", AWS's sample EC2-Domain-Join.yaml). Content is of type Json:
    an object is handed to moto as the text of that format, which GetDocument answers (moto kept the
    object's Python repr)."""
    props.setdefault("DocumentFormat", "JSON")
    if isinstance(props.get("Content"), dict):
        import yaml

        content = props["Content"]
        props["Content"] = (yaml.safe_dump(content, sort_keys=False) if props["DocumentFormat"] == "YAML"
                            else json.dumps(content))
    return props


PREPARE: dict[str, Callable[[dict[str, Any], str, str], dict[str, Any]]] = {
    "AWS::EC2::SecurityGroup": _security_group,
    "AWS::KMS::Key": _kms_key,
    "AWS::EC2::Instance": _instance,
    "AWS::Lambda::LayerVersion": _layer_version,
    "AWS::EC2::EIP": _address,
    "AWS::Lambda::Function": _function,
    "AWS::EC2::FlowLog": _flow_log,
    "AWS::SSM::Document": _ssm_document,
}


def for_moto(kind: str, props: dict[str, Any], account: str, region: str) -> dict[str, Any]:
    """The properties to hand to moto's model of `kind` (a copy where they need changing)."""
    prepare = PREPARE.get(kind)
    return prepare(copy.deepcopy(props), account, region) if prepare else props
