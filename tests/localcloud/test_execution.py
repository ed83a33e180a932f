"""Execution, rollback and attributes as CloudFormation runs them (issue 9, items 2, 3, 5)."""

from __future__ import annotations

import re

NETWORK = {
    "Resources": {
        "Vpc": {"Type": "AWS::EC2::VPC",
                "Properties": {"CidrBlock": "10.0.0.0/16", "EnableDnsSupport": True}},
        "Subnet": {"Type": "AWS::EC2::Subnet",
                   "Properties": {"VpcId": {"Ref": "Vpc"}, "CidrBlock": "10.0.1.0/24"}},
        "Group": {"Type": "AWS::EC2::SecurityGroup",
                  "Properties": {"GroupDescription": "g", "VpcId": {"Ref": "Vpc"}}},
        "Queue": {"Type": "AWS::SQS::Queue"},
        "Topic": {"Type": "AWS::SNS::Topic"},
    },
    "Outputs": {
        "QueueUrl": {"Value": {"Fn::GetAtt": ["Queue", "QueueUrl"]}},
        "TopicArn": {"Value": {"Fn::GetAtt": ["Topic", "TopicArn"]}},
        "SubnetId": {"Value": {"Fn::GetAtt": ["Subnet", "SubnetId"]}},
        "SubnetVpc": {"Value": {"Fn::GetAtt": ["Subnet", "VpcId"]}},
        "SubnetCidr": {"Value": {"Fn::GetAtt": ["Subnet", "CidrBlock"]}},
        "GroupVpc": {"Value": {"Fn::GetAtt": ["Group", "VpcId"]}},
        "Acl": {"Value": {"Fn::GetAtt": ["Vpc", "DefaultNetworkAcl"]}},
    },
}


def test_schema_attributes_resolve_to_the_live_values(cfn) -> None:
    # "Fn::GetAtt" return values of AWS::SQS::Queue, AWS::SNS::Topic, AWS::EC2::Subnet/SecurityGroup/VPC
    stack = cfn.deploy("net", NETWORK, tags={"team": "blue"})
    assert stack["StackStatus"] == "CREATE_COMPLETE", cfn.events("net")[:3]
    out = cfn.outputs("net")
    vpc = cfn.resource("net", "Vpc")
    assert out["QueueUrl"] == cfn.resource("net", "Queue")
    assert out["TopicArn"] == cfn.resource("net", "Topic")
    assert out["SubnetId"] == cfn.resource("net", "Subnet")
    assert (out["SubnetVpc"], out["GroupVpc"], out["SubnetCidr"]) == (vpc, vpc, "10.0.1.0/24")
    acls = cfn.target.client("ec2").describe_network_acls(
        Filters=[{"Name": "vpc-id", "Values": [vpc]}, {"Name": "default", "Values": ["true"]}])["NetworkAcls"]
    assert out["Acl"] == acls[0]["NetworkAclId"]
    # "Resource tag": stack tags and the aws:cloudformation:* tags reach the resources
    tags = {t["Key"]: t["Value"] for t in cfn.target.client("ec2").describe_tags(
        Filters=[{"Name": "resource-id", "Values": [vpc]}])["Tags"]}
    assert tags["team"] == "blue"
    assert (tags["aws:cloudformation:stack-name"], tags["aws:cloudformation:logical-id"]) == ("net", "Vpc")
    queue_tags = cfn.target.client("sqs").list_queue_tags(QueueUrl=out["QueueUrl"]).get("Tags", {})
    assert queue_tags.get("team") == "blue"


def test_a_vpc_attribute_flip_updates_in_place_and_keeps_the_outputs(cfn) -> None:
    # AWS::EC2::VPC EnableDnsSupport "Update requires: No interruption"
    cfn.deploy("net", NETWORK)
    before = cfn.outputs("net")
    changed = {**NETWORK, "Resources": {**NETWORK["Resources"], "Vpc": {
        "Type": "AWS::EC2::VPC", "Properties": {"CidrBlock": "10.0.0.0/16", "EnableDnsSupport": False}}}}
    assert cfn.deploy("net", changed)["StackStatus"] == "UPDATE_COMPLETE"
    assert cfn.outputs("net") == before
    vpc = cfn.resource("net", "Vpc")
    attribute = cfn.target.client("ec2").describe_vpc_attribute(VpcId=vpc, Attribute="enableDnsSupport")
    assert attribute["EnableDnsSupport"]["Value"] is False


def test_retain_policies_keep_the_resources(cfn) -> None:
    # "DeletionPolicy attribute" and "UpdateReplacePolicy attribute"
    template = {"Parameters": {"Name": {"Type": "String"}},
                "Resources": {"Kept": {"Type": "AWS::SQS::Queue", "DeletionPolicy": "Retain",
                                       "Properties": {"QueueName": "kept"}},
                              "Swapped": {"Type": "AWS::SQS::Queue", "UpdateReplacePolicy": "Retain",
                                          "Properties": {"QueueName": {"Ref": "Name"}}}}}
    cfn.deploy("s", template, {"Name": "first"})
    only_swapped = {**template, "Resources": {"Swapped": template["Resources"]["Swapped"]}}
    cfn.deploy("s", only_swapped, {"Name": "second"})
    assert cfn.stack("s")["StackStatus"] == "UPDATE_COMPLETE"
    names = sorted(u.rsplit("/", 1)[1] for u in cfn.target.client("sqs").list_queues()["QueueUrls"])
    assert names == ["first", "kept", "second"]
    assert ("Kept", "DELETE_SKIPPED", "") in cfn.events("s")


def test_a_failed_create_rolls_back_everything_it_made(cfn) -> None:
    # "Stack failure options": on a failed create the stack ends ROLLBACK_COMPLETE with nothing left.
    # The reason is worded as CloudFormation words a failed handler, with a HandlerErrorCode of the
    # resource provider contract (aws-cloudformation/cloudformation-cli) and its AlreadyExists message:
    # 'Resource handler returned message: "Resource of type 'X' with identifier 'Y' already exists."
    # (RequestToken: ..., HandlerErrorCode: AlreadyExists)', as real stacks report it
    template = {"Resources": {
        "Queue": {"Type": "AWS::SQS::Queue"},
        "First": {"Type": "AWS::SSM::Parameter",
                  "Properties": {"Name": "/dup", "Type": "String", "Value": "a"}},
        "Second": {"Type": "AWS::SSM::Parameter", "DependsOn": "First",
                   "Properties": {"Name": "/dup", "Type": "String", "Value": "b"}}}}
    assert cfn.deploy("s", template)["StackStatus"] == "ROLLBACK_COMPLETE"
    events = cfn.events("s")
    failed = [e for e in events if e[1] == "CREATE_FAILED"]
    assert failed[0][0] == "Second"
    assert re.fullmatch(r'Resource handler returned message: "Resource of type \'AWS::SSM::Parameter\' with '
                        r'identifier \'/dup\' already exists\." \(RequestToken: [0-9a-f-]{36}, '
                        r'HandlerErrorCode: AlreadyExists\)', failed[0][2]), failed[0][2]
    assert ("s", "ROLLBACK_IN_PROGRESS",
            "The following resource(s) failed to create: [Second]. Rollback requested by user.") in events
    assert cfn.target.client("sqs").list_queues().get("QueueUrls", []) == []
    assert cfn.target.client("ssm").describe_parameters()["Parameters"] == []
    assert events[0][:2] == ("s", "ROLLBACK_COMPLETE")  # newest first


def test_a_failed_update_converges_to_the_old_state(cfn) -> None:
    # "Stack failure options": UPDATE_ROLLBACK_COMPLETE restores what the update changed
    template = {"Resources": {"Queue": {"Type": "AWS::SQS::Queue", "Properties": {"VisibilityTimeout": 30}},
                              "First": {"Type": "AWS::SSM::Parameter",
                                        "Properties": {"Name": "/dup", "Type": "String", "Value": "a"}}},
                "Outputs": {"Url": {"Value": {"Ref": "Queue"}}}}
    cfn.deploy("s", template)
    broken = {**template, "Resources": {
        **template["Resources"],
        "Queue": {"Type": "AWS::SQS::Queue", "Properties": {"VisibilityTimeout": 90}},
        "Second": {"Type": "AWS::SSM::Parameter", "DependsOn": "Queue",
                   "Properties": {"Name": "/dup", "Type": "String", "Value": "b"}}}}
    assert cfn.deploy("s", broken)["StackStatus"] == "UPDATE_ROLLBACK_COMPLETE"
    url = cfn.outputs("s")["Url"]
    attrs = cfn.target.client("sqs").get_queue_attributes(QueueUrl=url, AttributeNames=["VisibilityTimeout"])
    assert attrs["Attributes"]["VisibilityTimeout"] == "30"
    assert cfn.target.client("ssm").get_parameter(Name="/dup")["Parameter"]["Value"] == "a"
    # the stack can be updated again afterwards
    assert cfn.deploy("s", {**template, "Outputs": {}})["StackStatus"] == "UPDATE_COMPLETE"


def test_an_update_moto_cannot_apply_fails_the_change_set_with_the_reason(cfn) -> None:
    # a DynamoDB table's BillingMode is updatable on CloudFormation; moto has no update: said, not faked
    table = {"Type": "AWS::DynamoDB::Table", "Properties": {
        "AttributeDefinitions": [{"AttributeName": "id", "AttributeType": "S"}],
        "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}], "BillingMode": "PAY_PER_REQUEST"}}
    cfn.deploy("s", {"Resources": {"Table": table}})
    table["Properties"]["BillingMode"] = "PROVISIONED"
    table["Properties"]["ProvisionedThroughput"] = {"ReadCapacityUnits": 1, "WriteCapacityUnits": 1}
    desc = cfn.change_set("s", {"Resources": {"Table": table}})
    assert desc["Status"] == "FAILED"
    assert desc["StatusReason"].startswith(
        "The local cloud cannot update Table (AWS::DynamoDB::Table) in place")
    assert cfn.stack("s")["StackStatus"] == "CREATE_COMPLETE"


def test_an_sqs_update_applies_every_attribute(cfn) -> None:
    # AWS::SQS::Queue: DelaySeconds, MaximumMessageSize, MessageRetentionPeriod are "Update requires: No
    # interruption" (moto's own update sets only VisibilityTimeout and ReceiveMessageWaitTimeSeconds);
    # a property the template drops goes back to the queue's default
    queue = {"Type": "AWS::SQS::Queue", "Properties": {"DelaySeconds": 2, "MessageRetentionPeriod": 600}}
    cfn.deploy("s", {"Resources": {"Queue": queue}})
    queue["Properties"] = {"MaximumMessageSize": 2048, "MessageRetentionPeriod": 1200}
    assert cfn.deploy("s", {"Resources": {"Queue": queue}})["StackStatus"] == "UPDATE_COMPLETE"
    attrs = cfn.target.client("sqs").get_queue_attributes(QueueUrl=cfn.resource("s", "Queue"),
                                                          AttributeNames=["All"])["Attributes"]
    assert (attrs["DelaySeconds"], attrs["MaximumMessageSize"], attrs["MessageRetentionPeriod"]) == (
        "0", "2048", "1200")


def test_an_update_moto_ignores_is_never_reported_complete(cfn) -> None:
    # AWS::IAM::Role MaxSessionDuration / AssumeRolePolicyDocument are "Update requires: No interruption"
    # on CloudFormation; moto's role update ignores both. The local cloud reads the role back after the
    # update (as drift detection would) and fails it, with a rollback, rather than say UPDATE_COMPLETE.
    # Inline Policies, which nothing reads back, fail the change set before it runs.
    role = {"Type": "AWS::IAM::Role", "Properties": {
        "AssumeRolePolicyDocument": {"Version": "2012-10-17", "Statement": [{
            "Effect": "Allow", "Principal": {"Service": "ec2.amazonaws.com"}, "Action": "sts:AssumeRole"}]},
        "MaxSessionDuration": 3600}}
    cfn.deploy("s", {"Resources": {"Role": role}}, caps=["CAPABILITY_IAM"])
    role["Properties"]["MaxSessionDuration"] = 7200
    assert cfn.deploy("s", {"Resources": {"Role": role}}, caps=["CAPABILITY_IAM"])["StackStatus"] == (
        "UPDATE_ROLLBACK_COMPLETE")
    assert ("Role", "UPDATE_FAILED", "the local cloud cannot update AWS::IAM::Role in place: moto's update "
            "did not apply MaxSessionDuration") in cfn.events("s")
    name = cfn.resource("s", "Role")
    assert cfn.target.client("iam").get_role(RoleName=name)["Role"]["MaxSessionDuration"] == 3600
    role["Properties"]["MaxSessionDuration"] = 3600
    statement = {"Effect": "Allow", "Action": "sqs:*", "Resource": "*"}
    role["Properties"]["Policies"] = [{"PolicyName": "p", "PolicyDocument": {"Version": "2012-10-17",
                                                                            "Statement": [statement]}}]
    desc = cfn.change_set("s", {"Resources": {"Role": role}}, caps=["CAPABILITY_IAM"])
    assert desc["Status"] == "FAILED"
    assert desc["StatusReason"].startswith(
        "The local cloud cannot update Role (AWS::IAM::Role) in place: moto has no update for Policies")


def test_a_bucket_property_moto_does_not_update_fails_the_change_set(cfn) -> None:
    # AWS::S3::Bucket CorsConfiguration is "Update requires: No interruption"; moto's bucket update
    # applies BucketEncryption and Tags only, so anything else is refused before it runs, not faked
    bucket = {"Type": "AWS::S3::Bucket", "Properties": {}}
    cfn.deploy("s", {"Resources": {"Bucket": bucket}})
    bucket["Properties"]["CorsConfiguration"] = {"CorsRules": [{"AllowedMethods": ["GET"],
                                                                "AllowedOrigins": ["*"]}]}
    desc = cfn.change_set("s", {"Resources": {"Bucket": bucket}})
    assert desc["Status"] == "FAILED"
    assert desc["StatusReason"].startswith("The local cloud cannot update Bucket (AWS::S3::Bucket) in place: "
                                           "moto has no update for CorsConfiguration")
    bucket["Properties"] = {"Tags": [{"Key": "team", "Value": "blue"}]}
    assert cfn.deploy("s", {"Resources": {"Bucket": bucket}})["StackStatus"] == "UPDATE_COMPLETE"


def test_attributes_are_template_values_or_a_named_failure(cfn) -> None:
    # AWS::EC2::VPC "Return values": CidrBlockAssociations is a list of association ids; an ECR repository
    # without RepositoryName gets a generated (lower-case) name, RepositoryUri from it. An attribute the
    # local cloud cannot tell (Ipv4IpamPoolId of a VPC made without IPAM) fails the execution by name and
    # rolls back, never an HTTP 500 ("Fn::GetAtt" reference; issue 9, item 5)
    template = {"Resources": {"Vpc": {"Type": "AWS::EC2::VPC", "Properties": {"CidrBlock": "10.0.0.0/16"}},
                              "Repo": {"Type": "AWS::ECR::Repository"}},
                "Outputs": {"Assoc": {"Value": {"Fn::Select": [
                                0, {"Fn::GetAtt": ["Vpc", "CidrBlockAssociations"]}]}},
                            "Uri": {"Value": {"Fn::GetAtt": ["Repo", "RepositoryUri"]}}}}
    assert cfn.deploy("s", template)["StackStatus"] == "CREATE_COMPLETE", cfn.events("s")[:3]
    vpc = cfn.resource("s", "Vpc")
    described = cfn.target.client("ec2").describe_vpcs(VpcIds=[vpc])["Vpcs"][0]["CidrBlockAssociationSet"]
    repo = cfn.resource("s", "Repo")
    assert cfn.outputs("s") == {"Assoc": described[0]["AssociationId"],
                                "Uri": f"123456789012.dkr.ecr.us-east-1.amazonaws.com/{repo}"}
    assert repo == repo.lower()
    template["Outputs"]["Pool"] = {"Value": {"Fn::GetAtt": ["Vpc", "Ipv4IpamPoolId"]}}
    assert cfn.deploy("s", template)["StackStatus"] == "UPDATE_ROLLBACK_COMPLETE"
    reason = ("Output Pool: the local cloud cannot resolve Fn::GetAtt Vpc.Ipv4IpamPoolId: moto does not "
              "expose AWS::EC2::VPC attribute Ipv4IpamPoolId")
    assert ("s", "UPDATE_ROLLBACK_IN_PROGRESS", reason) in cfn.events("s")


def test_a_generated_rds_identifier_is_valid_whatever_the_stack_name(cfn) -> None:
    # "Name type": CloudFormation's generated names "begin with a letter; contain only ASCII letters, digits,
    # and hyphens; and not end with a hyphen or contain two consecutive hyphens"; CreateDBInstance caps the
    # identifier at 63 characters. moto's `<stack>-<logical>-<suffix>` broke both for a long stack name.
    stack = "c07-oasis-tosca-community-contributions--mysql-app"
    template = {"Resources": {"MysqlDb": {"Type": "AWS::RDS::DBInstance", "Properties": {
        "Engine": "mysql", "DBInstanceClass": "db.t3.micro", "AllocatedStorage": "20",
        "MasterUsername": "root", "MasterUserPassword": "passw0rd1"}}}}
    assert cfn.deploy(stack, template)["StackStatus"] == "CREATE_COMPLETE", cfn.events(stack)[:3]
    identifier = cfn.resource(stack, "MysqlDb")
    assert len(identifier) <= 63 and identifier[0].isalpha() and "--" not in identifier
    assert identifier.startswith("c07-oasis-tosca-community-contributions-mysql-")
    described = cfn.target.client("rds").describe_db_instances(DBInstanceIdentifier=identifier)
    assert described["DBInstances"][0]["Engine"] == "mysql"


def test_a_log_group_retention_updates_in_place(cfn) -> None:
    # AWS::Logs::LogGroup RetentionInDays "Update requires: No interruption" (moto has no update for the
    # type: the local cloud sets it through the Logs backend, and clears it when the template drops it)
    template = {"Resources": {"Logs": {"Type": "AWS::Logs::LogGroup", "Properties": {"RetentionInDays": 7}}}}
    cfn.deploy("s", template)
    name = cfn.resource("s", "Logs")

    def retention() -> int | None:
        groups = cfn.target.client("logs").describe_log_groups(logGroupNamePrefix=name)["logGroups"]
        return groups[0].get("retentionInDays")

    template["Resources"]["Logs"]["Properties"]["RetentionInDays"] = 14
    assert cfn.deploy("s", template)["StackStatus"] == "UPDATE_COMPLETE"
    assert (cfn.resource("s", "Logs"), retention()) == (name, 14)
    template["Resources"]["Logs"]["Properties"] = {}
    assert cfn.deploy("s", template)["StackStatus"] == "UPDATE_COMPLETE"
    assert retention() is None


def test_fn_cidr_splits_the_vpc_block(cfn) -> None:
    # "Fn::Cidr" (intrinsic function reference): [ipBlock, count, cidrBits], here of a GetAtt known only
    # once the VPC exists: 10.0.0.0/16 with 8 host bits gives 10.0.0.0/24, 10.0.1.0/24, ...
    template = {"Resources": {
        "Vpc": {"Type": "AWS::EC2::VPC", "Properties": {"CidrBlock": "10.0.0.0/16"}},
        "Second": {"Type": "AWS::EC2::Subnet", "Properties": {"VpcId": {"Ref": "Vpc"}, "CidrBlock": {
            "Fn::Select": [1, {"Fn::Cidr": [{"Fn::GetAtt": ["Vpc", "CidrBlock"]}, 3, 8]}]}}}},
        "Outputs": {"Blocks": {"Value": {"Fn::Join": [" ", {"Fn::Cidr": ["192.168.0.0/24", 2, 6]}]}}}}
    assert cfn.deploy("s", template)["StackStatus"] == "CREATE_COMPLETE", cfn.events("s")[:3]
    subnet = cfn.target.client("ec2").describe_subnets(SubnetIds=[cfn.resource("s", "Second")])["Subnets"][0]
    assert subnet["CidrBlock"] == "10.0.1.0/24"
    assert cfn.outputs("s") == {"Blocks": "192.168.0.0/26 192.168.0.64/26"}


def test_the_clean_up_deletes_old_resources_dependents_first(cfn) -> None:
    # "Update behaviors of stack resources": the old resources of replacements go in the clean-up phase;
    # like a stack deletion it goes in reverse dependency order, so the old subnet goes before the old
    # VPC it is in and both are deleted (the other way round, the VPC "has dependencies")
    template = {"Parameters": {"Cidr": {"Type": "String"}},
                "Resources": {
                    "Vpc": {"Type": "AWS::EC2::VPC",
                            "Properties": {"CidrBlock": {"Fn::Sub": "${Cidr}.0.0/16"}}},
                    "Subnet": {"Type": "AWS::EC2::Subnet", "Properties": {
                        "VpcId": {"Ref": "Vpc"}, "CidrBlock": {"Fn::Sub": "${Cidr}.1.0/24"}}}}}
    cfn.deploy("s", template, {"Cidr": "10.1"})
    old_vpc, old_subnet = cfn.resource("s", "Vpc"), cfn.resource("s", "Subnet")
    assert cfn.deploy("s", template, {"Cidr": "10.2"})["StackStatus"] == "UPDATE_COMPLETE"
    cleanup = [(logical, status) for logical, status, _ in reversed(cfn.events("s"))
               if status.startswith("DELETE_")]
    assert cleanup == [("Subnet", "DELETE_IN_PROGRESS"), ("Subnet", "DELETE_COMPLETE"),
                       ("Vpc", "DELETE_IN_PROGRESS"), ("Vpc", "DELETE_COMPLETE")]
    ec2 = cfn.target.client("ec2")
    assert old_vpc not in [v["VpcId"] for v in ec2.describe_vpcs()["Vpcs"]]
    assert old_subnet not in [n["SubnetId"] for n in ec2.describe_subnets()["Subnets"]]


def test_a_group_ingress_update_keeps_the_group_and_the_rules_others_added(cfn) -> None:
    # AWS::EC2::SecurityGroup SecurityGroupIngress "Update requires: No interruption": the same group
    # (moto's own update deletes it and makes another, under a new id), its template rules changed, the
    # rule an AWS::EC2::SecurityGroupIngress of the stack adds left alone and that resource not replaced.
    # The group is read back after the update: the other rule is not one the update failed to apply
    rule = {"IpProtocol": "tcp", "FromPort": 80, "ToPort": 80, "CidrIp": "0.0.0.0/0"}
    template = {"Resources": {
        "Vpc": {"Type": "AWS::EC2::VPC", "Properties": {"CidrBlock": "10.0.0.0/16"}},
        "Group": {"Type": "AWS::EC2::SecurityGroup", "Properties": {
            "GroupDescription": "web", "VpcId": {"Ref": "Vpc"}, "SecurityGroupIngress": [rule]}},
        "Extra": {"Type": "AWS::EC2::SecurityGroupIngress", "Properties": {
            "GroupId": {"Fn::GetAtt": ["Group", "GroupId"]}, "IpProtocol": "tcp", "FromPort": 22,
            "ToPort": 22, "CidrIp": "10.0.0.0/8"}}}}
    cfn.deploy("s", template)
    group_id = cfn.resource("s", "Group")
    template["Resources"]["Group"]["Properties"]["SecurityGroupIngress"] = [{**rule, "FromPort": 443,
                                                                             "ToPort": 443}]
    assert cfn.deploy("s", template)["StackStatus"] == "UPDATE_COMPLETE", cfn.events("s")[:4]
    assert cfn.resource("s", "Group") == group_id
    group = cfn.target.client("ec2").describe_security_groups(GroupIds=[group_id])
    ports = sorted(p["FromPort"] for p in group["SecurityGroups"][0]["IpPermissions"])
    assert ports == [22, 443]
    assert not [e for e in cfn.events("s") if e[0] == "Extra" and e[1].startswith(("UPDATE", "DELETE"))]


def test_egress_rules_replace_the_default_and_update_in_place(cfn) -> None:
    # AWS::EC2::SecurityGroup SecurityGroupEgress: "When you specify an egress rule, CloudFormation
    # removes the default rule" (allow all); "Update requires: No interruption" (moto's create ignores
    # the property, so the local cloud applies it)
    egress = {"IpProtocol": "tcp", "FromPort": 443, "ToPort": 443, "CidrIp": "10.0.0.0/8"}
    template = {"Resources": {
        "Vpc": {"Type": "AWS::EC2::VPC", "Properties": {"CidrBlock": "10.0.0.0/16"}},
        "Group": {"Type": "AWS::EC2::SecurityGroup", "Properties": {
            "GroupDescription": "out", "VpcId": {"Ref": "Vpc"}, "SecurityGroupEgress": [egress]}}}}
    cfn.deploy("s", template)
    ec2 = cfn.target.client("ec2")

    def rules() -> list[tuple]:
        group = ec2.describe_security_groups(GroupIds=[cfn.resource("s", "Group")])["SecurityGroups"][0]
        return sorted((p["IpProtocol"], p.get("FromPort"), p["IpRanges"][0]["CidrIp"])
                      for p in group["IpPermissionsEgress"])

    assert rules() == [("tcp", 443, "10.0.0.0/8")]
    template["Resources"]["Group"]["Properties"]["SecurityGroupEgress"] = [{**egress, "FromPort": 80,
                                                                            "ToPort": 80}]
    assert cfn.deploy("s", template)["StackStatus"] == "UPDATE_COMPLETE"
    assert rules() == [("tcp", 80, "10.0.0.0/8")]
    del template["Resources"]["Group"]["Properties"]["SecurityGroupEgress"]
    assert cfn.deploy("s", template)["StackStatus"] == "UPDATE_COMPLETE"
    assert rules() == [("-1", None, "0.0.0.0/0")]
