"""Valid templates of AWS's sample repository and of public SAM applications that the local cloud refused or
made wrong for reasons of its own, found by bench/types_coverage.py --deploy (issue 30, item 3). Each test
names the sample, what went wrong, and the AWS page of the behaviour.
"""

from __future__ import annotations

import json

from tests.localcloud.lifecycle import delete, deploy, drift

SECONDARY = "SecondaryPrivateIpAddresses"


def test_a_network_interface_gets_its_groups_secondary_addresses_and_source_dest_check(cfn, cloud) -> None:
    # AWS's EC2/SingleENIwithMultipleEIPs: Fn::GetAtt ENI.SecondaryPrivateIpAddresses failed (moto's model
    # dropped SecondaryPrivateIpAddressCount, and its GroupSet and SourceDestCheck too).
    # AWS::EC2::NetworkInterface (Template Reference): "Return values" SecondaryPrivateIpAddresses,
    # PrimaryPrivateIpAddress; EC2 API CreateNetworkInterface.
    template = {
        "Resources": {
            "Vpc": {"Type": "AWS::EC2::VPC", "Properties": {"CidrBlock": "10.4.0.0/16"}},
            "Subnet": {"Type": "AWS::EC2::Subnet", "Properties": {"VpcId": {"Ref": "Vpc"},
                                                                  "CidrBlock": "10.4.1.0/24"}},
            "Group": {"Type": "AWS::EC2::SecurityGroup", "Properties": {
                "GroupDescription": "eni", "VpcId": {"Ref": "Vpc"}}},
            "Eni": {"Type": "AWS::EC2::NetworkInterface", "Properties": {
                "SubnetId": {"Ref": "Subnet"}, "GroupSet": [{"Ref": "Group"}], "Description": "two addresses",
                "SecondaryPrivateIpAddressCount": 2, "SourceDestCheck": False}},
            "Address": {"Type": "AWS::EC2::EIP", "Properties": {"Domain": "vpc"}},
            "Association": {"Type": "AWS::EC2::EIPAssociation", "Properties": {
                "AllocationId": {"Fn::GetAtt": ["Address", "AllocationId"]},
                "NetworkInterfaceId": {"Ref": "Eni"},
                "PrivateIpAddress": {"Fn::Select": [0, {"Fn::GetAtt": ["Eni", SECONDARY]}]}}},
        },
        "Outputs": {
            "Eni": {"Value": {"Ref": "Eni"}}, "Group": {"Value": {"Ref": "Group"}},
            "Primary": {"Value": {"Fn::GetAtt": ["Eni", "PrimaryPrivateIpAddress"]}},
            "Secondary": {"Value": {"Fn::Join": [",", {"Fn::GetAtt": ["Eni", SECONDARY]}]}},
        },
    }
    out = deploy(cfn, "eni", template)
    found = cloud.client("ec2").describe_network_interfaces(NetworkInterfaceIds=[out["Eni"]])[
        "NetworkInterfaces"][0]
    secondary = [a["PrivateIpAddress"] for a in found["PrivateIpAddresses"] if not a["Primary"]]
    assert out["Secondary"].split(",") == secondary and len(secondary) == 2
    assert out["Primary"] == found["PrivateIpAddress"]
    assert [g["GroupId"] for g in found["Groups"]] == [out["Group"]]
    assert (found["Description"], found["SourceDestCheck"]) == ("two addresses", False)
    # read back after create: a NetworkInterface is no longer "not verified"
    assert not [e for e in cfn.events("eni") if e[0] == "Eni" and "Not verified" in e[2]]


def test_an_elastic_ip_without_a_domain_has_an_allocation_id(cfn, cloud) -> None:
    # AWS's EC2/EIP_With_Association: Fn::GetAtt IPAddress.AllocationId of an EIP without Domain failed
    # (moto made an EC2-Classic "standard" address). EC2-Classic is retired (EC2 User Guide, "Migrate from
    # EC2-Classic to a VPC"): AllocateAddress makes VPC addresses, each with an allocation id.
    template = {"Resources": {"Address": {"Type": "AWS::EC2::EIP"}},
                "Outputs": {"Allocation": {"Value": {"Fn::GetAtt": ["Address", "AllocationId"]}},
                            "Ip": {"Value": {"Ref": "Address"}}}}
    out = deploy(cfn, "address", template)
    found = cloud.client("ec2").describe_addresses(PublicIps=[out["Ip"]])["Addresses"][0]
    assert out["Allocation"].startswith("eipalloc-") and found["AllocationId"] == out["Allocation"]
    assert found["Domain"] == "vpc"


def test_a_db_parameter_group_ref_is_its_name(cfn, cloud) -> None:
    # AWS's RDS/RDS_with_DBParameterGroup: the DB instance got "<moto.rds.models.DBParameterGroup object>"
    # as its DBParameterGroupName. AWS::RDS::DBParameterGroup "Return values": Ref returns its name.
    template = {"Resources": {
        "Params": {"Type": "AWS::RDS::DBParameterGroup", "Properties": {
            "Description": "sample", "Family": "mysql8.0", "Parameters": {"max_connections": "50"}}},
        "Db": {"Type": "AWS::RDS::DBInstance", "Properties": {
            "Engine": "mysql", "DBInstanceClass": "db.t3.micro", "AllocatedStorage": "20",
            "MasterUsername": "admin1", "MasterUserPassword": "Passw0rd1234",
            "DBParameterGroupName": {"Ref": "Params"}}}},
        "Outputs": {"Params": {"Value": {"Ref": "Params"}}, "Db": {"Value": {"Ref": "Db"}}}}
    out = deploy(cfn, "params", template)
    rds = cloud.client("rds")
    assert rds.describe_db_parameter_groups(DBParameterGroupName=out["Params"])["DBParameterGroups"]
    db = rds.describe_db_instances(DBInstanceIdentifier=out["Db"])["DBInstances"][0]
    assert [g["DBParameterGroupName"] for g in db["DBParameterGroups"]] == [out["Params"]]


def test_an_instance_has_a_public_address_as_its_subnet_says_or_fails_the_reference(cfn, cloud) -> None:
    # AWS's EC2/EC2InstanceWithSecurityGroupSample: Outputs PublicDnsName / PublicIp of an instance failed
    # with "moto does not expose". CloudFormation answers them from the instance, and an instance without a
    # public address fails the reference: "Attribute: PublicIp was not found for resource: i-..." (as
    # reported on aws-samples/amazon-ec2-nice-dcv-samples#2 and aws-parallelcluster#1129).
    template = {"Resources": {
        "Vpc": {"Type": "AWS::EC2::VPC", "Properties": {"CidrBlock": "10.5.0.0/16"}},
        "Private": {"Type": "AWS::EC2::Subnet", "Properties": {"VpcId": {"Ref": "Vpc"},
                                                               "CidrBlock": "10.5.1.0/24"}},
        "Host": {"Type": "AWS::EC2::Instance", "Properties": {
            "ImageId": "ami-760aaa0f", "InstanceType": "t3.micro", "SubnetId": {"Ref": "Private"}}}},
        "Outputs": {"Ip": {"Value": {"Fn::GetAtt": ["Host", "PublicIp"]}}}}
    desc = cfn.change_set("private-host", template)
    cfn.client.execute_change_set(ChangeSetName=desc["ChangeSetId"])
    assert cfn.stack("private-host")["StackStatus"] == "ROLLBACK_COMPLETE"
    reasons = " ".join(e[2] for e in cfn.events("private-host"))
    assert "Attribute: PublicIp was not found for resource: i-" in reasons
    # in a subnet that maps public addresses on launch (as the default VPC's do) it has one (VPC User Guide,
    # "Modify the public IPv4 addressing attribute for your subnet"); moto gave none
    public = json.loads(json.dumps(template))
    public["Resources"]["Private"]["Properties"]["MapPublicIpOnLaunch"] = True
    public["Outputs"]["Dns"] = {"Value": {"Fn::GetAtt": ["Host", "PublicDnsName"]}}
    public["Outputs"]["Id"] = {"Value": {"Ref": "Host"}}
    out = deploy(cfn, "public-host", public)
    found = cloud.client("ec2").describe_instances(InstanceIds=[out["Id"]])["Reservations"][0]["Instances"][0]
    assert (out["Ip"], out["Dns"]) == (found["PublicIpAddress"], found["PublicDnsName"])


def test_a_sam_api_with_iam_authorization_calls_its_function_with_the_callers_credentials(cfn, cloud) -> None:
    # serverless-patterns apigw-iam: SAM writes the integration credentials arn:aws:iam::*:user/* for an API
    # whose DefaultAuthorizer is AWS_IAM, and the RestApi failed ("Cross-account pass role is not allowed").
    # API Gateway API reference, PutIntegration credentials: "To require that the caller's identity be passed
    # through from the request, specify the string arn:aws:iam::*:user/*".
    from formwright.macros import MacroRegistry, expand

    sam = {"Transform": "AWS::Serverless-2016-10-31", "Resources": {
        "Api": {"Type": "AWS::Serverless::Api", "Properties": {
            "StageName": "Prod", "Auth": {"DefaultAuthorizer": "AWS_IAM"}}},
        "Fn": {"Type": "AWS::Serverless::Function", "Properties": {
            "Runtime": "python3.12", "Handler": "index.handler",
            "InlineCode": "def handler(event, context):\n    return {'statusCode': 200}\n",
            "Events": {"Get": {"Type": "Api", "Properties": {"RestApiId": {"Ref": "Api"}, "Path": "/",
                                                             "Method": "get"}}}}}},
        "Outputs": {"Api": {"Value": {"Ref": "Api"}}}}
    out = deploy(cfn, "iam-api", expand(sam, registry=MacroRegistry.build()), caps=["CAPABILITY_IAM"])
    apigw = cloud.client("apigateway")
    root = next(r for r in apigw.get_resources(restApiId=out["Api"])["items"] if r["path"] == "/")
    integration = apigw.get_integration(restApiId=out["Api"], resourceId=root["id"], httpMethod="GET")
    assert integration["credentials"] == "arn:aws:iam::*:user/*"


def test_a_function_of_a_runtime_lambda_no_longer_takes_fails_as_lambda_fails_it(cfn) -> None:
    # SAM's examples/apps hello-world (nodejs6.10) and the python2.7 ones reached CREATE_COMPLETE. Lambda
    # Developer Guide, "Runtime deprecation policy": after "Block function create" you can no longer create
    # functions with the runtime; the dates are cfn-lint's (rule E2531).
    template = {"Resources": {
        "Role": {"Type": "AWS::IAM::Role", "Properties": {"AssumeRolePolicyDocument": {
            "Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "sts:AssumeRole",
                                                    "Principal": {"Service": "lambda.amazonaws.com"}}]}}},
        "Old": {"Type": "AWS::Lambda::Function", "Properties": {
            "Runtime": "python2.7", "Handler": "index.handler", "Role": {"Fn::GetAtt": ["Role", "Arn"]},
            "Code": {"ZipFile": "def handler(event, context):\n    return event\n"}}}}}
    desc = cfn.change_set("old-runtime", template, caps=["CAPABILITY_IAM"])
    cfn.client.execute_change_set(ChangeSetName=desc["ChangeSetId"])
    assert cfn.stack("old-runtime")["StackStatus"] == "ROLLBACK_COMPLETE"
    reason = next(e[2] for e in cfn.events("old-runtime") if e[0] == "Old" and e[1] == "CREATE_FAILED")
    assert "The runtime parameter of python2.7 is no longer supported for creating" in reason


def test_an_sns_subscription_is_made_read_back_drifted_and_deleted(cfn, cloud) -> None:
    # AWS's SNS/SNSTopic.yaml and SAM's sns-message apps (an SNS event makes one) were refused by name: moto
    # has no model of AWS::SNS::Subscription. Its page: Ref the subscription ARN; FilterPolicy,
    # RawMessageDelivery, ... through SetSubscriptionAttributes; Unsubscribe on delete.
    template = {"Resources": {
        "Topic": {"Type": "AWS::SNS::Topic"},
        "Queue": {"Type": "AWS::SQS::Queue"},
        "Sub": {"Type": "AWS::SNS::Subscription", "Properties": {
            "TopicArn": {"Ref": "Topic"}, "Protocol": "sqs", "Endpoint": {"Fn::GetAtt": ["Queue", "Arn"]},
            "RawMessageDelivery": True, "FilterPolicy": {"kind": ["order"]}}}},
        "Outputs": {"Sub": {"Value": {"Ref": "Sub"}}, "Topic": {"Value": {"Ref": "Topic"}}}}
    out = deploy(cfn, "subscribed", template)
    sns = cloud.client("sns")
    attributes = sns.get_subscription_attributes(SubscriptionArn=out["Sub"])["Attributes"]
    assert (attributes["RawMessageDelivery"], json.loads(attributes["FilterPolicy"])) == (
        "true", {"kind": ["order"]})
    assert drift(cfn, "subscribed", "Sub")[0] == "IN_SYNC"
    sns.set_subscription_attributes(SubscriptionArn=out["Sub"], AttributeName="RawMessageDelivery",
                                    AttributeValue="false")
    assert drift(cfn, "subscribed", "Sub") == ("MODIFIED", [("/RawMessageDelivery", "NOT_EQUAL")])
    cfn.client.delete_stack(StackName="subscribed")
    assert out["Sub"] not in [s["SubscriptionArn"] for s in sns.list_subscriptions()["Subscriptions"]]


def test_a_network_load_balancer_takes_its_subnets_and_type_from_subnet_mappings(cfn, cloud) -> None:
    # AWS's ElasticLoadBalancing/NetworkLoadBalancerWithEIPs: a load balancer given its subnets by
    # SubnetMappings failed "The specified subnet does not exist" (moto's model read Subnets alone, and
    # dropped Type). AWS::ElasticLoadBalancingV2::LoadBalancer (Template Reference): "SubnetMappings: The IDs
    # of the subnets ... You can specify subnets or subnet mappings, but not both"; Type "network".
    template = {
        "Resources": {
            "Vpc": {"Type": "AWS::EC2::VPC", "Properties": {"CidrBlock": "10.6.0.0/16"}},
            "SubnetA": {"Type": "AWS::EC2::Subnet", "Properties": {
                "VpcId": {"Ref": "Vpc"}, "CidrBlock": "10.6.1.0/24", "AvailabilityZone": "us-east-1a"}},
            "SubnetB": {"Type": "AWS::EC2::Subnet", "Properties": {
                "VpcId": {"Ref": "Vpc"}, "CidrBlock": "10.6.2.0/24", "AvailabilityZone": "us-east-1b"}},
            "AddressA": {"Type": "AWS::EC2::EIP", "Properties": {"Domain": "vpc"}},
            "AddressB": {"Type": "AWS::EC2::EIP", "Properties": {"Domain": "vpc"}},
            "Balancer": {"Type": "AWS::ElasticLoadBalancingV2::LoadBalancer", "Properties": {
                "Type": "network", "SubnetMappings": [
                    {"SubnetId": {"Ref": f"Subnet{z}"},
                     "AllocationId": {"Fn::GetAtt": [f"Address{z}", "AllocationId"]}} for z in "AB"]}},
        },
        "Outputs": {"Arn": {"Value": {"Ref": "Balancer"}},
                    "Dns": {"Value": {"Fn::GetAtt": ["Balancer", "DNSName"]}},
                    "Name": {"Value": {"Fn::GetAtt": ["Balancer", "LoadBalancerName"]}}},
    }
    out = deploy(cfn, "nlb", template)
    found = cloud.client("elbv2").describe_load_balancers(LoadBalancerArns=[out["Arn"]])["LoadBalancers"][0]
    assert found["Type"] == "network" and found["DNSName"] == out["Dns"]
    assert len(found["AvailabilityZones"]) == 2
    # CloudFormation's generated name: <stack>-<logical>-<suffix>, at most 32 characters
    assert out["Name"].startswith("nlb-Balancer-") and len(out["Name"]) <= 32


def test_a_flow_log_takes_its_aggregation_interval_written_as_a_string(cfn, cloud) -> None:
    # AWS's VPCFlowLogs/VPCFlowLogsCloudWatch.cfn.yaml gives MaxAggregationInterval from a String parameter
    # (AllowedValues 60, 600): moto compared "600" with 600 and refused "Invalid Flow Log Max Aggregation
    # Interval". AWS::EC2::FlowLog (Template Reference): MaxAggregationInterval, Type: Integer, 60 | 600;
    # CloudFormation converts a parameter's string to the property's type.
    template = {
        "Parameters": {"Interval": {"Type": "String", "AllowedValues": ["60", "600"], "Default": "600"}},
        "Resources": {
            "Vpc": {"Type": "AWS::EC2::VPC", "Properties": {"CidrBlock": "10.7.0.0/16"}},
            "Logs": {"Type": "AWS::Logs::LogGroup"},
            "Role": {"Type": "AWS::IAM::Role", "Properties": {"AssumeRolePolicyDocument": {
                "Version": "2012-10-17", "Statement": [{
                    "Effect": "Allow", "Action": "sts:AssumeRole",
                    "Principal": {"Service": "vpc-flow-logs.amazonaws.com"}}]}}},
            "Flow": {"Type": "AWS::EC2::FlowLog", "Properties": {
                "ResourceId": {"Ref": "Vpc"}, "ResourceType": "VPC", "TrafficType": "REJECT",
                "LogDestinationType": "cloud-watch-logs", "LogGroupName": {"Ref": "Logs"},
                "DeliverLogsPermissionArn": {"Fn::GetAtt": ["Role", "Arn"]},
                "MaxAggregationInterval": {"Ref": "Interval"}}},
        },
        "Outputs": {"Flow": {"Value": {"Ref": "Flow"}}},
    }
    out = deploy(cfn, "flowlog", template, caps=["CAPABILITY_IAM"])
    found = cloud.client("ec2").describe_flow_logs(FlowLogIds=[out["Flow"]])["FlowLogs"][0]
    assert found["MaxAggregationInterval"] == 600


def test_an_aurora_cluster_keeps_its_data_api_endpoint(cfn, cloud) -> None:
    # AWS's RDS/aurora-postgres sets EnableHttpEndpoint on a provisioned Aurora PostgreSQL cluster: moto
    # kept it for Serverless v1 alone and dropped it, so the read-back failed the create. RDS User Guide,
    # "Using the Amazon RDS Data API" (Aurora PostgreSQL and MySQL, provisioned and Serverless v2);
    # AWS::RDS::DBCluster EnableHttpEndpoint.
    template = {"Resources": {"Cluster": {"Type": "AWS::RDS::DBCluster", "Properties": {
        "Engine": "aurora-postgresql", "MasterUsername": "admin1", "MasterUserPassword": "Passw0rd1234",
        "EnableHttpEndpoint": True}}},
        "Outputs": {"Cluster": {"Value": {"Ref": "Cluster"}}}}
    out = deploy(cfn, "dataapi", template)
    found = cloud.client("rds").describe_db_clusters(DBClusterIdentifier=out["Cluster"])["DBClusters"][0]
    assert found["HttpEndpointEnabled"] is True


def test_an_api_gateway_account_sets_the_logging_role_read_back_drifted_and_kept(cfn, cloud) -> None:
    # serverless-patterns apigw-execution-logs was refused by name: moto has no model of
    # AWS::ApiGateway::Account. Its page: Ref and Id "such as mysta-accou-01234b567890example";
    # CloudWatchRoleArn in place; "When you delete a stack containing this resource, API Gateway can still
    # assume the provided IAM role" (the delete leaves the account's role).
    role = {"Type": "AWS::IAM::Role", "Properties": {"AssumeRolePolicyDocument": {
        "Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "sts:AssumeRole",
                                                "Principal": {"Service": "apigateway.amazonaws.com"}}]}}}
    template = {"Resources": {
        "Role": role, "Account": {"Type": "AWS::ApiGateway::Account", "Properties": {
            "CloudWatchRoleArn": {"Fn::GetAtt": ["Role", "Arn"]}}}},
        "Outputs": {"Ref": {"Value": {"Ref": "Account"}}, "Id": {"Value": {"Fn::GetAtt": ["Account", "Id"]}},
                    "Role": {"Value": {"Fn::GetAtt": ["Role", "Arn"]}}}}
    out = deploy(cfn, "apiaccount", template, caps=["CAPABILITY_IAM"])
    apigateway = cloud.client("apigateway")
    assert apigateway.get_account()["cloudwatchRoleArn"] == out["Role"]
    assert out["Ref"] == out["Id"] and out["Ref"].startswith("apiaccount-Account-")
    assert drift(cfn, "apiaccount", "Account")[0] == "IN_SYNC"
    other = "arn:aws:iam::123456789012:role/other"
    apigateway.update_account(
        patchOperations=[{"op": "replace", "path": "/cloudwatchRoleArn", "value": other}])
    assert drift(cfn, "apiaccount", "Account") == ("MODIFIED", [("/CloudWatchRoleArn", "NOT_EQUAL")])
    delete(cfn, "apiaccount")
    assert apigateway.get_account()["cloudwatchRoleArn"] == other
