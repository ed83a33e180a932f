"""Read back after create for the types real templates use most beyond storage and networks (issue 30,
item 0): Lambda functions, layers and event source mappings, EventBridge rules, Step Functions state
machines, IAM managed and inline policies and instance profiles, security group ingress rules, KMS
keys, Kinesis streams, SQS queues and SNS topics.

Each property below is one moto's CloudFormation model dropped until the local cloud set it
(`emulator/completions_services.py`); after the create, boto3 reads it from the service as the
resource's page in the AWS CloudFormation User Guide says the template sets it. A property the local
cloud cannot apply fails the create, naming it, and the stack rolls back (never CREATE_COMPLETE).
"""

from __future__ import annotations

import io
import json
import zipfile

TRUST = {"Version": "2012-10-17", "Statement": [
    {"Effect": "Allow", "Principal": {"Service": ["lambda.amazonaws.com", "states.amazonaws.com"]},
     "Action": "sts:AssumeRole"}]}
READ_LOGS = {"Version": "2012-10-17", "Statement": [
    {"Effect": "Allow", "Action": "logs:CreateLogGroup", "Resource": "*"}]}
CODE = "def handler(event, context):\n    return event\n"


def _layer_zip() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("python/shared.py", "VALUE = 1\n")
    return buffer.getvalue()


def _template(bucket: str) -> dict:
    role_arn = {"Fn::GetAtt": ["Role", "Arn"]}
    return {"Resources": {
        "Role": {"Type": "AWS::IAM::Role", "Properties": {
            "AssumeRolePolicyDocument": TRUST,
            "Policies": [{"PolicyName": "logs", "PolicyDocument": READ_LOGS}]}},
        "Layer": {"Type": "AWS::Lambda::LayerVersion", "Properties": {
            "LayerName": "shared", "Description": "shared code", "CompatibleRuntimes": ["python3.12"],
            "Content": {"S3Bucket": bucket, "S3Key": "layer.zip"}}},
        # AWS::Lambda::Function: Layers, Architectures, TracingConfig, EphemeralStorage
        "Function": {"Type": "AWS::Lambda::Function", "Properties": {
            "Runtime": "python3.12", "Handler": "index.handler", "Role": role_arn,
            "Code": {"ZipFile": CODE}, "Layers": [{"Ref": "Layer"}], "Architectures": ["arm64"],
            "TracingConfig": {"Mode": "Active"}, "EphemeralStorage": {"Size": 1024}}},
        "DeadLetters": {"Type": "AWS::SQS::Queue"},
        "Work": {"Type": "AWS::SQS::Queue", "Properties": {"RedrivePolicy": {
            "deadLetterTargetArn": {"Fn::GetAtt": ["DeadLetters", "Arn"]}, "maxReceiveCount": 4}}},
        "Mapping": {"Type": "AWS::Lambda::EventSourceMapping", "Properties": {
            "FunctionName": {"Ref": "Function"}, "EventSourceArn": {"Fn::GetAtt": ["Work", "Arn"]},
            "BatchSize": 5}},
        "Schedule": {"Type": "AWS::Events::Rule", "Properties": {
            "Description": "every five minutes", "ScheduleExpression": "rate(5 minutes)",
            "Targets": [{"Id": "fn", "Arn": {"Fn::GetAtt": ["Function", "Arn"]}}]}},
        # AWS::StepFunctions::StateMachine: Definition (an object), DefinitionSubstitutions,
        # StateMachineType, TracingConfiguration
        "Machine": {"Type": "AWS::StepFunctions::StateMachine", "Properties": {
            "RoleArn": role_arn, "StateMachineType": "EXPRESS",
            "Definition": {"StartAt": "Call", "States": {"Call": {
                "Type": "Task", "Resource": "${FunctionArn}", "End": True}}},
            "DefinitionSubstitutions": {"FunctionArn": {"Fn::GetAtt": ["Function", "Arn"]}},
            "TracingConfiguration": {"Enabled": True}}},
        "Managed": {"Type": "AWS::IAM::ManagedPolicy", "Properties": {
            "Description": "reads logs", "PolicyDocument": READ_LOGS, "Roles": [{"Ref": "Role"}]}},
        "Inline": {"Type": "AWS::IAM::Policy", "Properties": {
            "PolicyName": "more-logs", "PolicyDocument": READ_LOGS, "Roles": [{"Ref": "Role"}]}},
        "Profile": {"Type": "AWS::IAM::InstanceProfile", "Properties": {"Roles": [{"Ref": "Role"}]}},
        "Vpc": {"Type": "AWS::EC2::VPC", "Properties": {"CidrBlock": "10.8.0.0/16"}},
        "Group": {"Type": "AWS::EC2::SecurityGroup", "Properties": {
            "GroupDescription": "web", "VpcId": {"Ref": "Vpc"}}},
        "Https": {"Type": "AWS::EC2::SecurityGroupIngress", "Properties": {
            "GroupId": {"Ref": "Group"}, "IpProtocol": "tcp", "FromPort": 443, "ToPort": 443,
            "CidrIp": "10.0.0.0/8", "Description": "https inside"}},
        # AWS::KMS::Key: KeySpec and KeyUsage
        "Signing": {"Type": "AWS::KMS::Key", "Properties": {
            "Description": "signs", "KeySpec": "RSA_2048", "KeyUsage": "SIGN_VERIFY"}},
        "Stream": {"Type": "AWS::Kinesis::Stream",
                   "Properties": {"ShardCount": 2, "RetentionPeriodHours": 48}},
    }}


def test_each_type_is_read_back_after_create_and_what_moto_dropped_is_applied(cfn, cloud) -> None:
    s3 = cloud.client("s3")
    s3.create_bucket(Bucket="layers")
    s3.put_object(Bucket="layers", Key="layer.zip", Body=_layer_zip())
    deployed = cfn.deploy("services", _template("layers"), caps=["CAPABILITY_IAM"])
    failed = [e for e in cfn.events("services") if "FAILED" in e[1]]
    assert deployed["StackStatus"] == "CREATE_COMPLETE", failed
    unverified = [reason for _, _, reason in cfn.events("services") if reason.startswith("Not verified")]
    assert unverified == []  # every type of the template has a reader now

    made = {r["LogicalResourceId"]: r.get("PhysicalResourceId") for r in
            cfn.client.describe_stack_resources(StackName="services")["StackResources"]}
    function = cloud.client("lambda").get_function_configuration(FunctionName=made["Function"])
    assert [layer["Arn"] for layer in function["Layers"]] == [made["Layer"]]
    assert function["Architectures"] == ["arm64"]
    assert function["TracingConfig"] == {"Mode": "Active"}
    assert function["EphemeralStorage"] == {"Size": 1024}

    machine = cloud.client("stepfunctions").describe_state_machine(stateMachineArn=made["Machine"])
    assert machine["type"] == "EXPRESS"
    assert json.loads(machine["definition"])["States"]["Call"]["Resource"] == function["FunctionArn"]
    assert machine["tracingConfiguration"] == {"enabled": True}

    key = cloud.client("kms").describe_key(KeyId=made["Signing"])["KeyMetadata"]
    assert (key["KeySpec"], key["KeyUsage"]) == ("RSA_2048", "SIGN_VERIFY")

    # the delete reads back that each is gone (a layer version moto's model could not delete)
    cfn.client.delete_stack(StackName="services")
    failed = [e for e in cfn.events(deployed["StackId"]) if "FAILED" in e[1]]
    assert failed == [], failed
    assert cloud.client("lambda").list_layer_versions(LayerName="shared")["LayerVersions"] == []


def test_a_property_the_local_cloud_cannot_apply_fails_the_create_naming_it(cfn) -> None:
    # AWS::KMS::Key MultiRegion: a multi-Region primary key (its id starts `mrk-`); moto's model makes a
    # single-Region key, which the read back after create finds
    template = {"Resources": {"Key": {"Type": "AWS::KMS::Key", "Properties": {"MultiRegion": True}}}}
    desc = cfn.change_set("multi", template)
    cfn.client.execute_change_set(ChangeSetName=desc["ChangeSetId"])
    assert cfn.stack("multi")["StackStatus"] == "ROLLBACK_COMPLETE"
    failed = [reason for logical, status, reason in cfn.events("multi")
              if (logical, status) == ("Key", "CREATE_FAILED")]
    assert failed == ["the local cloud cannot create AWS::KMS::Key as the template sets it: read back after "
                      "create, MultiRegion not applied"]


def test_an_ingress_rule_revoked_outside_the_stack_is_deleted_drift(cfn, cloud) -> None:
    # AWS::EC2::SecurityGroupIngress read back as its rule among the group's: revoked, it is DELETED
    # (Detect drift on an entire CloudFormation stack, "DELETED")
    template = {"Resources": {k: v for k, v in _template("unused")["Resources"].items()
                              if k in ("Vpc", "Group", "Https")}}
    cfn.deploy("ingress", template)
    ec2 = cloud.client("ec2")
    group = cfn.resource("ingress", "Group")
    assert cfn.client.detect_stack_resource_drift(StackName="ingress", LogicalResourceId="Https")[
        "StackResourceDrift"]["StackResourceDriftStatus"] == "IN_SYNC"
    ec2.revoke_security_group_ingress(GroupId=group, IpPermissions=[{
        "IpProtocol": "tcp", "FromPort": 443, "ToPort": 443, "IpRanges": [{"CidrIp": "10.0.0.0/8"}]}])
    assert cfn.client.detect_stack_resource_drift(StackName="ingress", LogicalResourceId="Https")[
        "StackResourceDrift"]["StackResourceDriftStatus"] == "DELETED"


def test_an_ingress_rule_from_another_group_keeps_its_description_and_goes_with_the_stack(cfn, cloud) -> None:
    # AWS's sample ECS/FargateLaunchType/clusters/private-vpc.yaml: an all-protocols rule from another
    # group with a Description, standalone and inline; a rule's Description is its group pair's too (EC2 API
    # reference, UserIdGroupPair "Description"). moto gave it to CidrIp rules alone, and the read-back
    # refused the create ("Description not applied").
    template = {"Resources": {
        "Vpc": {"Type": "AWS::EC2::VPC", "Properties": {"CidrBlock": "10.9.0.0/16"}},
        "Balancer": {"Type": "AWS::EC2::SecurityGroup", "Properties": {
            "GroupDescription": "balancer", "VpcId": {"Ref": "Vpc"}}},
        "Containers": {"Type": "AWS::EC2::SecurityGroup", "Properties": {
            "GroupDescription": "containers", "VpcId": {"Ref": "Vpc"}}},
        "Hosts": {"Type": "AWS::EC2::SecurityGroup", "Properties": {
            "GroupDescription": "hosts", "VpcId": {"Ref": "Vpc"}, "SecurityGroupIngress": [{
                "IpProtocol": "tcp", "FromPort": 22, "ToPort": 22,
                "SourceSecurityGroupId": {"Ref": "Balancer"}, "Description": "ssh from the balancer"}]}},
        "FromBalancer": {"Type": "AWS::EC2::SecurityGroupIngress", "Properties": {
            "GroupId": {"Ref": "Containers"}, "IpProtocol": "-1",
            "SourceSecurityGroupId": {"Ref": "Balancer"}, "Description": "Ingress from the public ALB"}}}}
    cfn.deploy("pairs", template)
    assert cfn.stack("pairs")["StackStatus"] == "CREATE_COMPLETE"
    ec2 = cloud.client("ec2")
    balancer = cfn.resource("pairs", "Balancer")
    expected = {"Containers": "Ingress from the public ALB", "Hosts": "ssh from the balancer"}
    for logical, description in expected.items():
        group = cfn.resource("pairs", logical)
        rules = ec2.describe_security_groups(GroupIds=[group])["SecurityGroups"][0]["IpPermissions"]
        pairs = [pair for rule in rules for pair in rule["UserIdGroupPairs"]]
        assert [(p["GroupId"], p.get("Description")) for p in pairs] == [(balancer, description)]
    cfn.client.delete_stack(StackName="pairs")
    assert not ec2.describe_security_groups(
        Filters=[{"Name": "group-id", "Values": [balancer]}])["SecurityGroups"]
