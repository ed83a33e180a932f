"""Valid templates that moto's own models failed on with a Python error (reported as the local cloud's
InternalFailure) now do what CloudFormation does with them (issue 30, item 3, "no InternalFailure on a valid
template"). RestApi with Body and no Name: test_types_apigateway.py; DBInstance in a cluster:
test_types_databases.py.
"""

from __future__ import annotations

import json

from tests.localcloud.lifecycle import deploy


def test_an_all_protocols_ingress_rule_needs_no_ports(cfn, cloud) -> None:
    # AWS::EC2::SecurityGroup Ingress: FromPort/ToPort "Required: Conditional"; IpProtocol -1 is all
    # protocols and all ports
    template = {
        "Resources": {
            "Vpc": {"Type": "AWS::EC2::VPC", "Properties": {"CidrBlock": "10.0.0.0/16"}},
            "Group": {
                "Type": "AWS::EC2::SecurityGroup",
                "Properties": {
                    "GroupDescription": "internal",
                    "VpcId": {"Ref": "Vpc"},
                    "SecurityGroupIngress": [{"IpProtocol": "-1", "CidrIp": "10.0.0.0/8"}],
                },
            },
        },
        "Outputs": {"Group": {"Value": {"Ref": "Group"}}},
    }
    group = deploy(cfn, "sg", template)["Group"]
    rules = cloud.client("ec2").describe_security_groups(GroupIds=[group])["SecurityGroups"][0][
        "IpPermissions"
    ]
    assert [(r["IpProtocol"], r["IpRanges"][0]["CidrIp"]) for r in rules] == [("-1", "10.0.0.0/8")]


def test_a_kms_key_without_a_key_policy_gets_the_default_one(cfn, cloud) -> None:
    # AWS::KMS::Key KeyPolicy: "If you don't specify a key policy, AWS KMS uses the default key policy"
    # (AWS KMS Developer Guide, "Default key policy": the account's root may do kms:*)
    key = deploy(
        cfn,
        "kms",
        {
            "Resources": {"Key": {"Type": "AWS::KMS::Key", "Properties": {"Description": "data"}}},
            "Outputs": {"Key": {"Value": {"Ref": "Key"}}},
        },
    )["Key"]
    policy = json.loads(cloud.client("kms").get_key_policy(KeyId=key, PolicyName="default")["Policy"])
    assert policy["Statement"][0]["Principal"] == {"AWS": "arn:aws:iam::123456789012:root"}
    assert policy["Statement"][0]["Action"] == "kms:*"


def test_a_kms_key_with_tags(cfn, cloud) -> None:
    # AWS::KMS::Key Tags are CloudFormation's Key/Value pairs ("Tag"); the KMS API's are TagKey/TagValue
    # (ListResourceTags, AWS KMS API Reference). AWS's sample CreateHanaBackupSecureBackut.yaml failed with
    # the local cloud's InternalFailure (KeyError: 'TagKey').
    key = deploy(
        cfn,
        "kmstags",
        {
            "Resources": {
                "Key": {"Type": "AWS::KMS::Key", "Properties": {"Tags": [{"Key": "team", "Value": "db"}]}}
            },
            "Outputs": {"Key": {"Value": {"Ref": "Key"}}},
        },
    )["Key"]
    tags = cloud.client("kms").list_resource_tags(KeyId=key)["Tags"]
    assert {"TagKey": "team", "TagValue": "db"} in tags


def test_an_ssm_document_without_a_document_format_is_json(cfn, cloud) -> None:
    # AWS::SSM::Document DocumentFormat: not required, "Default: JSON" (CloudFormation template reference;
    # SSM CreateDocument: "JSON is the default format"). AWS's sample EC2-Domain-Join.yaml was refused with
    # "Invalid document format None".
    content = {
        "schemaVersion": "2.2",
        "description": "say hello",
        "mainSteps": [
            {"action": "aws:runShellScript", "name": "hello", "inputs": {"runCommand": ["echo hi"]}}
        ],
    }
    name = deploy(
        cfn,
        "ssmdoc",
        {
            "Resources": {
                "Doc": {
                    "Type": "AWS::SSM::Document",
                    "Properties": {"DocumentType": "Command", "Content": content},
                }
            },
            "Outputs": {"Doc": {"Value": {"Ref": "Doc"}}},
        },
    )["Doc"]
    document = cloud.client("ssm").get_document(Name=name)
    assert document["DocumentFormat"] == "JSON"
    assert json.loads(document["Content"])["mainSteps"][0]["name"] == "hello"


def test_an_instance_store_block_device_mapping(cfn, cloud) -> None:
    # AWS::EC2::Instance BlockDeviceMapping: VirtualName `ephemeralN` for an instance store volume, no Ebs;
    # DescribeInstances lists the EBS volumes only
    template = {
        "Resources": {
            "Box": {
                "Type": "AWS::EC2::Instance",
                "Properties": {
                    "ImageId": "ami-12c6146b",
                    "InstanceType": "m3.medium",
                    "BlockDeviceMappings": [
                        {"DeviceName": "/dev/sdc", "VirtualName": "ephemeral0"},
                        {"DeviceName": "/dev/sdf", "Ebs": {"VolumeSize": 20}},
                    ],
                },
            }
        },
        "Outputs": {"Box": {"Value": {"Ref": "Box"}}},
    }
    box = deploy(cfn, "box", template)["Box"]
    instance = cloud.client("ec2").describe_instances(InstanceIds=[box])["Reservations"][0]["Instances"][0]
    devices = {m["DeviceName"] for m in instance["BlockDeviceMappings"]}
    assert "/dev/sdf" in devices and "/dev/sdc" not in devices


def test_an_emr_cluster_keeps_its_tags(cfn, cloud) -> None:
    # AWS::EMR::Cluster Tags; CloudFormation adds its aws:cloudformation:* tags ("Resource tag")
    template = {
        "Resources": {
            "Cluster": {
                "Type": "AWS::EMR::Cluster",
                "Properties": {
                    "Name": "analytics",
                    "JobFlowRole": "EMR_EC2_DefaultRole",
                    "ServiceRole": "EMR_DefaultRole",
                    "ReleaseLabel": "emr-6.10.0",
                    "Tags": [{"Key": "team", "Value": "data"}],
                    "Instances": {"MasterInstanceGroup": {"InstanceCount": 1, "InstanceType": "m5.xlarge"}},
                },
            }
        },
        "Outputs": {"Cluster": {"Value": {"Ref": "Cluster"}}},
    }
    cluster = deploy(cfn, "emr", template)["Cluster"]
    tags = {
        t["Key"]: t["Value"]
        for t in cloud.client("emr").describe_cluster(ClusterId=cluster)["Cluster"]["Tags"]
    }
    assert tags["team"] == "data" and tags["aws:cloudformation:logical-id"] == "Cluster"


def test_a_nested_stack_parameter_without_a_value_fails_as_cloudformation_says(cfn) -> None:
    # a nested template's parameter with no Default that the parent does not pass: the nested stack fails
    # with CloudFormation's "Parameters: [N] must have values", not an error of the local cloud
    s3 = cfn.target.client("s3")
    s3.create_bucket(Bucket="templates")
    child = {"Parameters": {"N": {"Type": "String"}}, "Resources": {"Q": {"Type": "AWS::SQS::Queue"}}}
    s3.put_object(Bucket="templates", Key="child.json", Body=json.dumps(child).encode())
    parent = {
        "Resources": {
            "Child": {
                "Type": "AWS::CloudFormation::Stack",
                "Properties": {"TemplateURL": "https://s3.amazonaws.com/templates/child.json"},
            }
        }
    }
    assert cfn.deploy("parent", parent)["StackStatus"] == "ROLLBACK_COMPLETE"
    reason = next(r for logical, status, r in cfn.events("parent") if status == "CREATE_FAILED")
    assert "Parameters: [N] must have values" in reason and "InternalFailure" not in reason


def test_a_sub_variable_naming_a_resource_orders_the_creation(cfn, cloud) -> None:
    # Fn::Sub with a variable map ("Fn::Sub", AWS CloudFormation Template Reference): a variable's Ref is a
    # dependency as any other (every SAM API's Lambda permission is written so: `${__ApiId__}`); the
    # parameter is created after the queue it names, whatever their order in the template
    template = {
        "Resources": {
            "Param": {
                "Type": "AWS::SSM::Parameter",
                "Properties": {
                    "Type": "String",
                    "Value": {"Fn::Sub": ["queue ${Url}", {"Url": {"Ref": "Queue"}}]},
                },
            },
            "Queue": {"Type": "AWS::SQS::Queue"},
        },
        "Outputs": {"Param": {"Value": {"Ref": "Param"}}, "Queue": {"Value": {"Ref": "Queue"}}},
    }
    out = deploy(cfn, "sub", template)
    value = cloud.client("ssm").get_parameter(Name=out["Param"])["Parameter"]["Value"]
    assert value == f"queue {out['Queue']}"
