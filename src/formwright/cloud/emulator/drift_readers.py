"""The live configuration of a resource as moto holds it, in CloudFormation's property names.

One reader per type the local cloud checks for drift. A reader looks the resource up again in its
service's backend (None: it was deleted) and returns the properties it can read; drift detection
compares only those, and only where the template sets them. Tags are read apart (`tags.live`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from formwright.cloud.emulator import own

Reader = Callable[[Any, str, str], dict[str, Any] | None]


def _sqs(obj: Any, account: str, region: str) -> dict[str, Any] | None:
    from moto.sqs.models import sqs_backends

    queue = sqs_backends[account][region].queues.get(obj.name)
    if queue is None:
        return None
    # moto's `attributes` builds every attribute of the queue on each access (a camel-to-snake conversion
    # each), which made a queue's read most of a drift detection: read it once
    attributes = queue.attributes
    found = {name: attributes.get(name) for name in (
        "DelaySeconds", "MaximumMessageSize", "MessageRetentionPeriod", "ReceiveMessageWaitTimeSeconds",
        "VisibilityTimeout", "KmsMasterKeyId", "KmsDataKeyReusePeriodSeconds", "SqsManagedSseEnabled",
        "DeduplicationScope", "FifoThroughputLimit")} | {"QueueName": queue.name}
    found["FifoQueue"] = bool(queue.fifo_queue)
    dedup = attributes.get("ContentBasedDeduplication")
    found["ContentBasedDeduplication"] = str(dedup).lower() == "true"
    redrive = attributes.get("RedrivePolicy")
    found["RedrivePolicy"] = policy_document(redrive) if redrive else None
    return found


def _ssm(obj: Any, account: str, region: str) -> dict[str, Any] | None:
    from moto.ssm.models import ssm_backends

    parameter = ssm_backends[account][region].get_parameter(obj.name)
    if parameter is None:
        return None
    return {"Name": parameter.name, "Value": parameter.value, "Type": parameter.parameter_type,
            "Description": parameter.description}


def _sns(obj: Any, account: str, region: str) -> dict[str, Any] | None:
    from moto.sns.models import sns_backends

    topic = sns_backends[account][region].topics.get(obj.arn)
    if topic is None:
        return None
    return {"TopicName": topic.name, "DisplayName": topic.display_name,
            "KmsMasterKeyId": topic.kms_master_key_id or None, "FifoTopic": bool(topic.fifo_topic),
            "ContentBasedDeduplication": str(topic.content_based_deduplication).lower() == "true"}


def _table(obj: Any, account: str, region: str) -> dict[str, Any] | None:
    from moto.dynamodb.models import dynamodb_backends

    table = dynamodb_backends[account][region].tables.get(obj.name)
    if table is None:
        return None
    found = {"TableName": table.name, "KeySchema": table.schema, "AttributeDefinitions": table.attr,
             "BillingMode": table.billing_mode or "PROVISIONED",
             "DeletionProtectionEnabled": bool(table.deletion_protection_enabled)}
    if found["BillingMode"] == "PROVISIONED":
        found["ProvisionedThroughput"] = {k: table.throughput.get(k) for k in ("ReadCapacityUnits",
                                                                                 "WriteCapacityUnits")}
    stream = table.stream_specification or {}
    if stream.get("StreamEnabled"):
        found["StreamSpecification"] = {"StreamViewType": stream.get("StreamViewType")}
    return found


def ec2_backend(account: str, region: str) -> Any:
    """moto's EC2 backend of an account and region."""
    from moto.ec2.models import ec2_backends

    return ec2_backends[account][region]


def _vpc(obj: Any, account: str, region: str) -> dict[str, Any] | None:
    vpc = ec2_backend(account, region).vpcs.get(obj.id)
    if vpc is None:
        return None
    return {"CidrBlock": vpc.cidr_block, "InstanceTenancy": vpc.instance_tenancy,
            "EnableDnsSupport": vpc.enable_dns_support, "EnableDnsHostnames": vpc.enable_dns_hostnames}


def _subnet(obj: Any, account: str, region: str) -> dict[str, Any] | None:
    subnet = next((s for zone in ec2_backend(account, region).subnets.values() for s in zone.values()
                   if s.id == obj.id), None)
    if subnet is None:
        return None
    return {"VpcId": subnet.vpc_id, "CidrBlock": subnet.cidr_block,
            "AvailabilityZone": subnet.availability_zone,
            "MapPublicIpOnLaunch": subnet.map_public_ip_on_launch}


def security_rule_entries(rule: Any) -> list[dict[str, Any]]:
    """A moto security group rule as the template's SecurityGroupIngress entries (one per source)."""
    base = {"IpProtocol": rule.ip_protocol}
    if rule.from_port is not None:
        base |= {"FromPort": rule.from_port, "ToPort": rule.to_port}
    sources = []
    if rule.ip_range:
        sources.append({k: v for k, v in rule.ip_range.items() if k in ("CidrIp", "CidrIpv6", "Description")})
    if rule.source_group:
        sources.append({"SourceSecurityGroupId": rule.source_group.get("GroupId"),
                        **({"Description": rule.source_group["Description"]}
                           if rule.source_group.get("Description") else {})})
    return [base | source for source in sources] or [base]


def _security_group(obj: Any, account: str, region: str) -> dict[str, Any] | None:
    group = ec2_backend(account, region).get_security_group_from_id(obj.id)
    if group is None:
        return None
    return {"GroupDescription": group.description, "GroupName": group.name, "VpcId": group.vpc_id,
            "SecurityGroupIngress": [entry for rule in group.ingress_rules
                                     for entry in security_rule_entries(rule)]}


def _bucket(obj: Any, account: str, region: str) -> dict[str, Any] | None:
    from moto.s3.models import s3_backends
    from moto.utilities.utils import get_partition

    bucket = s3_backends[account][get_partition(region)].buckets.get(obj.name)
    if bucket is None:
        return None
    found: dict[str, Any] = {"BucketName": bucket.name, "VersioningConfiguration": None,
                             "PublicAccessBlockConfiguration": None, "NotificationConfiguration": None,
                             "ReplicationConfiguration": None}
    if bucket.versioning_status:
        found["VersioningConfiguration"] = {"Status": bucket.versioning_status}
    block = bucket.public_access_block
    if block is not None:
        found["PublicAccessBlockConfiguration"] = {
            "BlockPublicAcls": block.block_public_acls, "IgnorePublicAcls": block.ignore_public_acls,
            "BlockPublicPolicy": block.block_public_policy,
            "RestrictPublicBuckets": block.restrict_public_buckets}
    notifications = bucket.notification_configuration
    if notifications is not None:
        found["NotificationConfiguration"] = _notifications(notifications)
    replication = getattr(bucket, "replication", None)
    if replication:
        found["ReplicationConfiguration"] = {"Role": replication.get("Role"), "Rules": [
            {**{k: v for k, v in rule.items() if k != "ID"}, "Id": rule.get("ID")}
            for rule in replication.get("Rule") or []]}
    return found


def _notifications(config: Any) -> dict[str, Any]:
    """moto's notification configuration in AWS::S3::Bucket's property names."""
    def entries(items: Any, target: str) -> list[dict[str, Any]]:
        found = []
        for item in items:
            for event in item.events:
                entry: dict[str, Any] = {target: item.arn, "Event": event}
                rules = (item.filters or {}).get("S3Key", {}).get("FilterRule")
                if rules:
                    entry["Filter"] = {"S3Key": {"Rules": rules}}
                found.append(entry)
        return found

    found: dict[str, Any] = {"TopicConfigurations": entries(config.topic, "Topic"),
                             "QueueConfigurations": entries(config.queue, "Queue"),
                             "LambdaConfigurations": entries(config.cloud_function, "Function")}
    if config.event_bridge is not None:
        found["EventBridgeConfiguration"] = {"EventBridgeEnabled": True}
    return found


def policy_document(document: Any) -> Any:
    """A policy document as an object (moto keeps the text, URL-encoded or not)."""
    from urllib.parse import unquote

    if isinstance(document, str):
        try:
            return json.loads(document)
        except ValueError:
            return json.loads(unquote(document))
    return document


def _role(obj: Any, account: str, region: str) -> dict[str, Any] | None:
    from moto.iam.models import iam_backends
    from moto.utilities.utils import get_partition

    role = iam_backends[account][get_partition(region)].roles.get(obj.id)
    if role is None:
        return None
    return {"RoleName": role.name, "Path": role.path, "Description": role.description or None,
            "MaxSessionDuration": role.max_session_duration or 3600,
            "AssumeRolePolicyDocument": policy_document(role.assume_role_policy_document),
            "ManagedPolicyArns": sorted(role.managed_policies),
            "Policies": [{"PolicyName": name, "PolicyDocument": policy_document(document)}
                         for name, document in role.policies.items()]}


def _function(obj: Any, account: str, region: str) -> dict[str, Any] | None:
    from moto.awslambda.models import lambda_backends

    try:
        function = lambda_backends[account][region].get_function(obj.function_name)
    except Exception:  # noqa: BLE001 - moto raises its not-found error: the function was deleted
        return None
    found = {"FunctionName": function.function_name, "Runtime": function.run_time,
             "Handler": function.handler, "Role": function.role, "Timeout": function.timeout,
             "MemorySize": function.memory_size, "Description": function.description or None}
    found["Environment"] = {"Variables": dict(function.environment_vars or {})}
    found |= {"Layers": [layer["Arn"] for layer in function.layers or []],
              "Architectures": list(function.architectures), "TracingConfig": function.tracing_config,
              "KmsKeyArn": function.kms_key_arn, "EphemeralStorage": {"Size": function.ephemeral_storage},
              "PackageType": function.package_type,
              "ReservedConcurrentExecutions": function.reserved_concurrency}
    return found


def _log_group(obj: Any, account: str, region: str) -> dict[str, Any] | None:
    from moto.logs.models import logs_backends

    group = logs_backends[account][region].groups.get(obj.name)
    if group is None:
        return None
    return {"LogGroupName": group.name, "RetentionInDays": group.retention_in_days,
            "KmsKeyId": group.kms_key_id or None}


def _route_table(obj: Any, account: str, region: str) -> dict[str, Any] | None:
    table = ec2_backend(account, region).route_tables.get(obj.id)
    return None if table is None else {"VpcId": table.vpc_id}


def _association(obj: Any, account: str, region: str) -> dict[str, Any] | None:
    table = ec2_backend(account, region).route_tables.get(obj.route_table_id)
    subnet = table._associations.get(obj.id) if table is not None else None
    return None if subnet is None else {"RouteTableId": table.id, "SubnetId": subnet}


def _route(obj: Any, account: str, region: str) -> dict[str, Any] | None:
    table = ec2_backend(account, region).route_tables.get(obj.route_table.id)
    route = next((r for r in table.routes if r.id == obj.id), None) if table is not None else None
    if route is None:
        return None
    return {"RouteTableId": table.id, "DestinationCidrBlock": route.destination_cidr_block}


def _gateway(obj: Any, account: str, region: str) -> dict[str, Any] | None:
    return {} if obj.id in ec2_backend(account, region).internet_gateways else None


def _attachment(obj: Any, account: str, region: str) -> dict[str, Any] | None:
    backend = ec2_backend(account, region)
    internet = backend.internet_gateways.get(obj.gateway_id)
    vpn = backend.vpn_gateways.get(obj.gateway_id)
    attached = (internet is not None and internet.vpc is not None and internet.vpc.id == obj.vpc_id) or (
        vpn is not None and obj.vpc_id in vpn.attachments)
    return {"VpcId": obj.vpc_id} if attached else None


def _address(obj: Any, account: str, region: str) -> dict[str, Any] | None:
    found = any(a.public_ip == obj.public_ip for a in ec2_backend(account, region).addresses)
    return {"Domain": obj.domain} if found else None


def _network_interface(obj: Any, account: str, region: str) -> dict[str, Any] | None:
    """DescribeNetworkInterfaces."""
    eni = ec2_backend(account, region).enis.get(obj.id)
    if eni is None:
        return None
    secondary = [a for a in eni.private_ip_addresses if not a.get("Primary")]
    return {"SubnetId": eni.subnet.id, "Description": eni.description or None,
            "PrivateIpAddress": eni.private_ip_address, "GroupSet": [g.id for g in eni._group_set],
            "SourceDestCheck": eni.source_dest_check, "SecondaryPrivateIpAddressCount": len(secondary),
            "PrivateIpAddresses": [{"PrivateIpAddress": a["PrivateIpAddress"],
                                    "Primary": bool(a.get("Primary"))} for a in eni.private_ip_addresses]}


def _nat(obj: Any, account: str, region: str) -> dict[str, Any] | None:
    nat = ec2_backend(account, region).nat_gateways.get(obj.id)
    return None if nat is None or nat.state in ("deleting", "deleted") else {"SubnetId": nat.subnet_id}


def _peering(obj: Any, account: str, region: str) -> dict[str, Any] | None:
    peering = ec2_backend(account, region).vpc_pcxs.get(obj.id)
    if peering is None or peering._status.code in ("deleted", "rejected", "failed"):
        return None
    return {"VpcId": peering.vpc.id, "PeerVpcId": peering.peer_vpc.id}


READERS: dict[str, Reader] = {
    "AWS::SQS::Queue": _sqs,
    "AWS::SSM::Parameter": _ssm,
    "AWS::SNS::Topic": _sns,
    "AWS::DynamoDB::Table": _table,
    "AWS::EC2::VPC": _vpc,
    "AWS::EC2::Subnet": _subnet,
    "AWS::EC2::SecurityGroup": _security_group,
    "AWS::S3::Bucket": _bucket,
    "AWS::IAM::Role": _role,
    "AWS::Lambda::Function": _function,
    "AWS::Logs::LogGroup": _log_group,
    "AWS::EC2::RouteTable": _route_table,
    "AWS::EC2::SubnetRouteTableAssociation": _association,
    "AWS::EC2::Route": _route,
    "AWS::EC2::InternetGateway": _gateway,
    "AWS::EC2::VPCGatewayAttachment": _attachment,
    "AWS::EC2::EIP": _address,
    "AWS::EC2::NatGateway": _nat,
    "AWS::EC2::NetworkInterface": _network_interface,
    "AWS::EC2::VPCPeeringConnection": _peering,
}
def _auto_scaling_group(obj: Any, account: str, region: str) -> dict[str, Any] | None:
    from moto.autoscaling.models import autoscaling_backends

    group = autoscaling_backends[account][region].autoscaling_groups.get(obj.name)
    if group is None:
        return None
    found: dict[str, Any] = {
        "AutoScalingGroupName": group.name, "MinSize": group.min_size, "MaxSize": group.max_size,
        "DesiredCapacity": group.desired_capacity, "HealthCheckType": group.health_check_type,
        "HealthCheckGracePeriod": group.health_check_grace_period, "Cooldown": group.default_cooldown,
        "VPCZoneIdentifier": group.vpc_zone_identifier.split(",") if group.vpc_zone_identifier else None,
        "TargetGroupARNs": list(group.target_group_arns or []),
        "LoadBalancerNames": list(group.load_balancer_names or [])}
    if group.ec2_launch_template is not None:
        found["LaunchTemplate"] = {"LaunchTemplateId": group.ec2_launch_template.id,
                                   "LaunchTemplateName": group.ec2_launch_template.name,
                                   "Version": str(group.launch_template_version)}
    return found


READERS["AWS::AutoScaling::AutoScalingGroup"] = _auto_scaling_group


def _own(obj: Any, account: str, region: str) -> dict[str, Any] | None:
    return obj.read()  # type: ignore[no-any-return]


READERS.update(dict.fromkeys(own.models(), _own))
from formwright.cloud.emulator import drift_readers_services, lambda_grants  # noqa: E402 - they use the helpers above

READERS.update(drift_readers_services.READERS)  # the local cloud's own models read themselves
READERS.update(lambda_grants.READERS)
# properties a reader returns that are object-valued documents compared as JSON (policy documents)
DOCUMENTS = {"AssumeRolePolicyDocument", "PolicyDocument", "KeyPolicy"}
