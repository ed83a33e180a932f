"""What moto's models leave out when they create or update a resource, per type, done through moto's
service backends: VPC and subnet attributes, an SQS queue's attributes, a log group's retention, a security
group's rules changed in place; and the tables `resources` reads (COMPLETE_CREATE, OWN_UPDATE,
COMPLETE_UPDATE, MOTO_IGNORES, MOTO_APPLIES).
"""

from __future__ import annotations

from typing import Any

from formwright.cloud.emulator import completions
from formwright.cloud.emulator import completions_services as services

# property -> (ec2 backend method, moto attribute name, CloudFormation's default) for the properties
# moto's models neither update through CloudFormation nor set on create
IN_PLACE = {
    "AWS::EC2::VPC": {"EnableDnsSupport": ("modify_vpc_attribute", "enable_dns_support", True),
                      "EnableDnsHostnames": ("modify_vpc_attribute", "enable_dns_hostnames", False)},
    "AWS::EC2::Subnet": {"MapPublicIpOnLaunch": ("modify_subnet_attribute", "map_public_ip_on_launch",
                                                 False)},
}


def set_in_place(kind: str, obj: Any, props: dict[str, Any], names: set[str], account: str,
                  region: str) -> None:
    """Set the IN_PLACE properties among `names` (their default when the template drops them)."""
    from moto.ec2.models import ec2_backends

    from formwright.cloud.emulator.resources import physical_id

    for name in sorted(names & set(IN_PLACE.get(kind, {}))):
        method, attribute, default = IN_PLACE[kind][name]
        value = str(props.get(name, default)).lower() == "true"
        getattr(ec2_backends[account][region], method)(physical_id(obj), attribute, value)


# AWS::SQS::Queue properties moto's update leaves alone (it sets VisibilityTimeout and
# ReceiveMessageWaitTimeSeconds only), set through SetQueueAttributes; a property the template drops
# goes back to the queue's default (moto's, which a queue made without it has)
SQS_ATTRIBUTES: dict[str, Any] = {
    "DelaySeconds": 0, "MaximumMessageSize": None, "MessageRetentionPeriod": 345600,
    "ReceiveMessageWaitTimeSeconds": 0, "VisibilityTimeout": 30, "KmsMasterKeyId": None,
    "KmsDataKeyReusePeriodSeconds": 300, "SqsManagedSseEnabled": True, "ContentBasedDeduplication": False,
    "DeduplicationScope": "queue", "FifoThroughputLimit": "perQueue", "RedrivePolicy": {},
}


def _set_queue_attributes(obj: Any, props: dict[str, Any], names: set[str], account: str,
                          region: str) -> None:
    from moto.sqs.models import MAXIMUM_MESSAGE_LENGTH, sqs_backends

    wanted = {n: props.get(n, SQS_ATTRIBUTES[n]) for n in names & set(SQS_ATTRIBUTES)}
    if "MaximumMessageSize" in wanted and wanted["MaximumMessageSize"] is None:
        wanted["MaximumMessageSize"] = MAXIMUM_MESSAGE_LENGTH
    if wanted:
        backend = sqs_backends[account][region]
        # moto's SetQueueAttributes clears the queue's Policy unless it is passed along
        backend.set_queue_attributes(obj.name, {**wanted, "Policy": backend.get_queue(obj.name).policy})


def _set_retention(obj: Any, props: dict[str, Any], names: set[str], account: str, region: str) -> None:
    from moto.logs.models import logs_backends

    if "RetentionInDays" not in names:
        return
    backend = logs_backends[account][region]
    if props.get("RetentionInDays") is None:  # dropped from the template: kept forever again
        backend.delete_retention_policy(obj.name)
    else:
        # moto annotates the days as str but keeps and answers what it is given: an int, as AWS answers
        backend.put_retention_policy(obj.name, int(props["RetentionInDays"]))  # type: ignore[arg-type]


# the rule a new group has until the template gives its own egress rules ("AWS::EC2::SecurityGroup":
# "When you specify an egress rule, CloudFormation removes the default rule")
DEFAULT_EGRESS = {"IpProtocol": "-1", "CidrIp": "0.0.0.0/0"}


def sync_rules(obj: Any, props: dict[str, Any], before: dict[str, Any], account: str, region: str) -> Any:
    """A security group's inline rules changed in place: the rules the old template had and the new one
    lacks are revoked, the new ones authorized; rules others added stay (moto's own update deletes the
    group and makes another, under a new id). Egress rules given replace the default allow-all one."""
    from moto.ec2.models import ec2_backends

    backend = ec2_backends[account][region]
    for name, verb in (("SecurityGroupIngress", "ingress"), ("SecurityGroupEgress", "egress")):
        old, new = before.get(name) or [], props.get(name) or []
        if name == "SecurityGroupEgress":
            old, new = old or [DEFAULT_EGRESS], new or [DEFAULT_EGRESS]
        revoke = getattr(backend, f"revoke_security_group_{verb}")
        authorize = getattr(backend, f"authorize_security_group_{verb}")
        for rule in [r for r in old if r not in new]:
            revoke(obj.id, vpc_id=obj.vpc_id, **services.rule_call(rule))
        for rule in [r for r in new if r not in old]:
            authorize(obj.id, vpc_id=obj.vpc_id, **services.rule_call(rule))
    return obj


def created_egress(obj: Any, props: dict[str, Any], account: str, region: str) -> None:
    """moto makes a group without its template's egress rules, and its ingress rules without their
    Description: they are set here (found by the read-back after create)."""
    if props.get("SecurityGroupEgress"):
        sync_rules(obj, {"SecurityGroupEgress": props["SecurityGroupEgress"]}, {}, account, region)
    ingress = props.get("SecurityGroupIngress") or []
    described = [r for r in ingress if isinstance(r, dict) and "Description" in r]
    if described:
        made = [{k: v for k, v in r.items() if k != "Description"} for r in described]
        sync_rules(obj, {"SecurityGroupIngress": described}, {"SecurityGroupIngress": made}, account, region)


# what moto's create leaves out, applied right after it
COMPLETE_CREATE = {"AWS::EC2::SecurityGroup": created_egress, "AWS::S3::Bucket": completions.bucket_created,
                   "AWS::IAM::Role": completions.role_created,
                   "AWS::Lambda::Function": services.function_created, "AWS::KMS::Key": services.key_created,
                   "AWS::StepFunctions::StateMachine": services.state_machine_created,
                   "AWS::Lambda::LayerVersion": services.layer_created,
                   "AWS::EC2::SecurityGroupIngress": services.ingress_created,
                   "AWS::EC2::Instance": completions.instance_created,
                   "AWS::EC2::Subnet": completions.subnet_created}

# types updated in place here rather than by moto's update (which would replace them)
OWN_UPDATE = {"AWS::EC2::SecurityGroup": sync_rules}

# what a type's update in moto leaves out (or moto has no update for), applied through the service's
# backend after moto's update if any
COMPLETE_UPDATE = {"AWS::SQS::Queue": _set_queue_attributes, "AWS::Logs::LogGroup": _set_retention,
                   "AWS::IAM::Role": completions.role_policies,
                   "AWS::Lambda::Function": services.function_settings,
                   "AWS::StepFunctions::StateMachine": services.state_machine_settings}


# properties moto's update of a type is known to ignore and that no drift reader would catch after it
# (the rest is checked once applied: execute.Execution._modify)
MOTO_IGNORES = {"AWS::IAM::Role": {"Policies", "PermissionsBoundary"}}
# for these types, all that moto's update (completed by COMPLETE_UPDATE) applies, besides tags
# (a bucket's NotificationConfiguration: applied by lambda_runtime/install.py, which completes moto's model)
MOTO_APPLIES = {"AWS::S3::Bucket": {"BucketEncryption", "NotificationConfiguration"},
                "AWS::SQS::Queue": set(SQS_ATTRIBUTES),
                "AWS::Logs::LogGroup": {"RetentionInDays"},
                "AWS::EC2::SecurityGroup": {"SecurityGroupIngress", "SecurityGroupEgress"}}
