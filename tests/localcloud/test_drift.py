"""Drift detection reads the live resource of the types the examples use (issue 9, item 6).

Follows "Detect unmanaged configuration changes to stacks and resources with drift detection" (AWS
CloudFormation User Guide): only properties the template sets are compared, "this does not include
default values for resource properties"; differences are NOT_EQUAL, REMOVE or ADD; a deleted
resource is DELETED; a type that is not checked is NOT_CHECKED.
"""

from __future__ import annotations

from tests.localcloud.test_tags import ROLE_DOC

TEMPLATE = {"Resources": {
    "Table": {"Type": "AWS::DynamoDB::Table", "Properties": {
        "AttributeDefinitions": [{"AttributeName": "id", "AttributeType": "S"}],
        "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}],
        "ProvisionedThroughput": {"ReadCapacityUnits": 1, "WriteCapacityUnits": 1},
        "Tags": [{"Key": "team", "Value": "a"}]}},
    "Vpc": {"Type": "AWS::EC2::VPC", "Properties": {"CidrBlock": "10.0.0.0/16", "EnableDnsHostnames": True}},
    "Subnet": {"Type": "AWS::EC2::Subnet", "Properties": {
        "VpcId": {"Ref": "Vpc"}, "CidrBlock": "10.0.1.0/24", "MapPublicIpOnLaunch": False}},
    "Group": {"Type": "AWS::EC2::SecurityGroup", "Properties": {
        "GroupDescription": "web", "VpcId": {"Ref": "Vpc"},
        "SecurityGroupIngress": [{"IpProtocol": "tcp", "FromPort": 443, "ToPort": 443,
                                  "CidrIp": "0.0.0.0/0"}]}},
    # a rule attached from another resource of the stack is not drift (CloudFormation analyses attachments)
    "Http": {"Type": "AWS::EC2::SecurityGroupIngress", "Properties": {
        "GroupId": {"Ref": "Group"}, "IpProtocol": "tcp", "FromPort": 80, "ToPort": 80,
        "CidrIp": "0.0.0.0/0"}},
    "Bucket": {"Type": "AWS::S3::Bucket", "Properties": {"VersioningConfiguration": {"Status": "Enabled"}}},
    "Images": {"Type": "AWS::ECR::Repository"},  # a type no reader checks
    "Role": {"Type": "AWS::IAM::Role", "Properties": {"AssumeRolePolicyDocument": ROLE_DOC,
                                                      "Description": "runs the function"}},
    "Function": {"Type": "AWS::Lambda::Function", "Properties": {
        "Runtime": "python3.12", "Handler": "index.handler", "Role": {"Fn::GetAtt": ["Role", "Arn"]},
        "Code": {"ZipFile": "def handler(event, context): pass"}, "Timeout": 10}},
    "Logs": {"Type": "AWS::Logs::LogGroup", "Properties": {"RetentionInDays": 7}},
    "Gateway": {"Type": "AWS::EC2::InternetGateway"},
}}


def detect(cfn, stack: str) -> tuple[str, dict[str, dict]]:
    """Run DetectStackDrift; the stack's drift status and each resource's drift."""
    detection = cfn.client.detect_stack_drift(StackName=stack)["StackDriftDetectionId"]
    status = cfn.client.describe_stack_drift_detection_status(StackDriftDetectionId=detection)
    drifts = cfn.client.describe_stack_resource_drifts(StackName=stack)["StackResourceDrifts"]
    return status["StackDriftStatus"], {d["LogicalResourceId"]: d for d in drifts}


def found(drift: dict) -> list[tuple[str, str, str, str]]:
    """(path, expected, actual, type) of each property difference."""
    return sorted((d["PropertyPath"], d["ExpectedValue"], d["ActualValue"], d["DifferenceType"])
                  for d in drift["PropertyDifferences"])


def test_drift_compares_the_properties_the_template_sets_for_the_common_types(cfn) -> None:
    cfn.deploy("d", TEMPLATE, caps=["CAPABILITY_IAM"], tags={"owner": "ops"})
    status, drifts = detect(cfn, "d")
    assert status == "IN_SYNC", [(k, v["StackResourceDriftStatus"], found(v)) for k, v in drifts.items()
                                 if v["StackResourceDriftStatus"] != "IN_SYNC"]
    # a resource drift detection cannot check is left out of DescribeStackResourceDrifts (API reference:
    # "aren't checked, and so not included"); ListStackResources' DriftInformation says NOT_CHECKED
    assert {k: d["StackResourceDriftStatus"] for k, d in drifts.items()} == {
        k: "IN_SYNC" for k in TEMPLATE["Resources"] if k != "Images"}  # ingress rules are read
    listed = cfn.client.list_stack_resources(StackName="d")["StackResourceSummaries"]
    assert {r["LogicalResourceId"]: r["DriftInformation"]["StackResourceDriftStatus"] for r in listed} == {
        **{k: "IN_SYNC" for k in TEMPLATE["Resources"]}, "Images": "NOT_CHECKED"}

    ids = {k: cfn.resource("d", k) for k in TEMPLATE["Resources"] if k != "Http"}
    client = cfn.target.client
    table_arn = client("dynamodb").describe_table(TableName=ids["Table"])["Table"]["TableArn"]
    client("dynamodb").update_table(TableName=ids["Table"], ProvisionedThroughput={
        "ReadCapacityUnits": 5, "WriteCapacityUnits": 1})
    client("dynamodb").tag_resource(ResourceArn=table_arn, Tags=[{"Key": "team", "Value": "b"},
                                                                 {"Key": "extra", "Value": "x"}])
    client("ec2").modify_vpc_attribute(VpcId=ids["Vpc"], EnableDnsHostnames={"Value": False})
    client("ec2").modify_subnet_attribute(SubnetId=ids["Subnet"], MapPublicIpOnLaunch={"Value": True})
    client("ec2").authorize_security_group_ingress(GroupId=ids["Group"], IpPermissions=[{
        "IpProtocol": "tcp", "FromPort": 22, "ToPort": 22, "IpRanges": [{"CidrIp": "10.0.0.0/8"}]}])
    client("s3").put_bucket_versioning(Bucket=ids["Bucket"], VersioningConfiguration={"Status": "Suspended"})
    client("iam").update_role(RoleName=ids["Role"], Description="changed by hand")
    # MemorySize is not in the template: its change is not drift (defaults are not compared)
    client("lambda").update_function_configuration(FunctionName=ids["Function"], Timeout=20, MemorySize=256)
    client("logs").put_retention_policy(logGroupName=ids["Logs"], retentionInDays=30)

    status, drifts = detect(cfn, "d")
    assert status == "DRIFTED"
    assert found(drifts["Table"]) == [
        ("/ProvisionedThroughput/ReadCapacityUnits", "1", "5", "NOT_EQUAL"),
        ("/Tags/0/Value", "a", "b", "NOT_EQUAL"),
        ("/Tags/1", "", '{"Key": "extra", "Value": "x"}', "ADD")]  # the stack's owner tag is not drift
    assert found(drifts["Vpc"]) == [("/EnableDnsHostnames", "true", "false", "NOT_EQUAL")]
    assert found(drifts["Subnet"]) == [("/MapPublicIpOnLaunch", "false", "true", "NOT_EQUAL")]
    assert found(drifts["Group"]) == [
        ("/SecurityGroupIngress/2", "", '{"CidrIp": "10.0.0.0/8", "FromPort": 22, "IpProtocol": "tcp", '
                                        '"ToPort": 22}', "ADD")]
    assert found(drifts["Bucket"]) == [("/VersioningConfiguration/Status", "Enabled", "Suspended",
                                        "NOT_EQUAL")]
    assert found(drifts["Role"]) == [("/Description", "runs the function", "changed by hand", "NOT_EQUAL")]
    assert found(drifts["Function"]) == [("/Timeout", "10", "20", "NOT_EQUAL")]
    assert found(drifts["Logs"]) == [("/RetentionInDays", "7", "30", "NOT_EQUAL")]
    assert drifts["Gateway"]["StackResourceDriftStatus"] == "IN_SYNC"  # nothing changed on it
    unchanged = ("Gateway", "Images")
    assert all(drifts[k]["StackResourceDriftStatus"] == "MODIFIED" for k in ids if k not in unchanged)


def test_a_resource_deleted_outside_the_stack_is_deleted(cfn) -> None:
    cfn.deploy("d", {"Resources": {"Logs": TEMPLATE["Resources"]["Logs"],
                                   "Bucket": TEMPLATE["Resources"]["Bucket"]}})
    cfn.target.client("logs").delete_log_group(logGroupName=cfn.resource("d", "Logs"))
    status, drifts = detect(cfn, "d")
    statuses = {k: d["StackResourceDriftStatus"] for k, d in drifts.items()}
    assert (status, statuses) == ("DRIFTED", {"Logs": "DELETED", "Bucket": "IN_SYNC"})
