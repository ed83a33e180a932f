"""Firehose delivery streams, AppSync GraphQL APIs and CodeBuild projects made by a stack, read back with each
service's own API (issue 30, item 3).

Pages (AWS CloudFormation Template Reference): AWS::KinesisFirehose::DeliveryStream (Ref: the stream's name;
Arn; DeliveryStreamName and DeliveryStreamType create-only, destination configurations "No interruption"),
AWS::AppSync::GraphQLApi (Ref: the API's ARN; ApiId, GraphQLUrl `https://{id}.appsync-api.{region}.amazonaws.com/graphql`),
AWS::CodeBuild::Project (Ref: the project's name; Arn; Name create-only).
"""

from __future__ import annotations

from tests.localcloud.lifecycle import delete, deploy, drift, with_props

ROLE = "arn:aws:iam::123456789012:role/delivery"

FIREHOSE = {
    "Resources": {
        "Bucket": {"Type": "AWS::S3::Bucket"},
        "Stream": {
            "Type": "AWS::KinesisFirehose::DeliveryStream",
            "Properties": {
                "DeliveryStreamType": "DirectPut",
                "Tags": [{"Key": "team", "Value": "data"}],
                "ExtendedS3DestinationConfiguration": {
                    "BucketARN": {"Fn::GetAtt": ["Bucket", "Arn"]},
                    "RoleARN": ROLE,
                    "Prefix": "raw/",
                    "BufferingHints": {"IntervalInSeconds": 60, "SizeInMBs": 5},
                },
            },
        },
    },
    "Outputs": {"Stream": {"Value": {"Ref": "Stream"}}, "Arn": {"Value": {"Fn::GetAtt": ["Stream", "Arn"]}}},
}


def test_a_firehose_delivery_stream_to_s3(cfn, cloud) -> None:
    firehose = cloud.client("firehose")
    out = deploy(cfn, "fh", FIREHOSE)
    assert out["Arn"] == f"arn:aws:firehose:us-east-1:123456789012:deliverystream/{out['Stream']}"
    described = firehose.describe_delivery_stream(DeliveryStreamName=out["Stream"])[
        "DeliveryStreamDescription"
    ]
    destination = described["Destinations"][0]["ExtendedS3DestinationDescription"]
    assert destination["Prefix"] == "raw/" and destination["RoleARN"] == ROLE
    tags = {
        t["Key"]: t["Value"]
        for t in firehose.list_tags_for_delivery_stream(DeliveryStreamName=out["Stream"])["Tags"]
    }
    assert tags["team"] == "data" and tags["aws:cloudformation:logical-id"] == "Stream"
    assert drift(cfn, "fh", "Stream") == ("IN_SYNC", [])

    changed = with_props(
        FIREHOSE,
        "Stream",
        ExtendedS3DestinationConfiguration={
            **FIREHOSE["Resources"]["Stream"]["Properties"]["ExtendedS3DestinationConfiguration"],
            "Prefix": "curated/",
        },
    )
    assert deploy(cfn, "fh", changed)["Arn"] == out["Arn"]  # in place: the same stream
    described = firehose.describe_delivery_stream(DeliveryStreamName=out["Stream"])[
        "DeliveryStreamDescription"
    ]
    assert described["Destinations"][0]["ExtendedS3DestinationDescription"]["Prefix"] == "curated/"
    assert described["VersionId"] == "2"

    named = with_props(changed, "Stream", DeliveryStreamName="clicks")  # create-only: replaced
    assert deploy(cfn, "fh", named)["Stream"] == "clicks"
    assert firehose.list_delivery_streams()["DeliveryStreamNames"] == ["clicks"]
    firehose.delete_delivery_stream(DeliveryStreamName="clicks")
    assert drift(cfn, "fh", "Stream")[0] == "DELETED"
    delete(cfn, "fh")


GRAPHQL = {
    "Resources": {
        "Api": {
            "Type": "AWS::AppSync::GraphQLApi",
            "Properties": {
                "Name": "orders",
                "AuthenticationType": "API_KEY",
                "Tags": [{"Key": "team", "Value": "orders"}],
            },
        }
    },
    "Outputs": {
        "Ref": {"Value": {"Ref": "Api"}},
        "Id": {"Value": {"Fn::GetAtt": ["Api", "ApiId"]}},
        "Url": {"Value": {"Fn::GetAtt": ["Api", "GraphQLUrl"]}},
    },
}


def test_an_appsync_graphql_api(cfn, cloud) -> None:
    appsync = cloud.client("appsync")
    out = deploy(cfn, "gql", GRAPHQL)
    assert out["Ref"] == f"arn:aws:appsync:us-east-1:123456789012:apis/{out['Id']}"
    assert out["Url"] == f"https://{out['Id']}.appsync-api.us-east-1.amazonaws.com/graphql"
    api = appsync.get_graphql_api(apiId=out["Id"])["graphqlApi"]
    assert (api["name"], api["authenticationType"]) == ("orders", "API_KEY")
    assert api["tags"]["team"] == "orders"
    assert drift(cfn, "gql", "Api") == ("IN_SYNC", [])

    changed = with_props(GRAPHQL, "Api", Name="orders-v2", AuthenticationType="AWS_IAM", XrayEnabled=True)
    assert deploy(cfn, "gql", changed)["Id"] == out["Id"]  # every property changes in place
    api = appsync.get_graphql_api(apiId=out["Id"])["graphqlApi"]
    assert (api["name"], api["authenticationType"], api["xrayEnabled"]) == ("orders-v2", "AWS_IAM", True)

    appsync.update_graphql_api(
        apiId=out["Id"], name="by-hand", authenticationType="AWS_IAM", xrayEnabled=True
    )
    assert drift(cfn, "gql", "Api") == ("MODIFIED", [("/Name", "NOT_EQUAL")])
    delete(cfn, "gql")
    assert appsync.list_graphql_apis()["graphqlApis"] == []


PROJECT = {
    "Resources": {
        "Build": {
            "Type": "AWS::CodeBuild::Project",
            "Properties": {
                "ServiceRole": ROLE,
                "Artifacts": {"Type": "NO_ARTIFACTS"},
                "Source": {
                    "Type": "NO_SOURCE",
                    "BuildSpec": "version: 0.2\nphases:\n  build:\n    commands: [make]\n",
                },
                "Environment": {
                    "Type": "LINUX_CONTAINER",
                    "ComputeType": "BUILD_GENERAL1_SMALL",
                    "Image": "aws/codebuild/standard:7.0",
                    "EnvironmentVariables": [{"Name": "STAGE", "Value": "dev"}],
                },
            },
        }
    },
    "Outputs": {"Name": {"Value": {"Ref": "Build"}}, "Arn": {"Value": {"Fn::GetAtt": ["Build", "Arn"]}}},
}


def test_a_codebuild_project(cfn, cloud) -> None:
    codebuild = cloud.client("codebuild")
    out = deploy(cfn, "cb", PROJECT)
    assert out["Arn"] == f"arn:aws:codebuild:us-east-1:123456789012:project/{out['Name']}"
    project = codebuild.batch_get_projects(names=[out["Name"]])["projects"][0]
    assert project["source"]["buildspec"].startswith("version: 0.2")
    assert project["environment"]["environmentVariables"] == [{"name": "STAGE", "value": "dev"}]
    assert drift(cfn, "cb", "Build") == ("IN_SYNC", [])

    changed = with_props(PROJECT, "Build", TimeoutInMinutes=15, Description="builds the app")
    assert deploy(cfn, "cb", changed)["Arn"] == out["Arn"]  # in place
    project = codebuild.batch_get_projects(names=[out["Name"]])["projects"][0]
    assert (project["timeoutInMinutes"], project["description"]) == (15, "builds the app")

    named = with_props(changed, "Build", Name="app-build")  # create-only: replaced
    assert deploy(cfn, "cb", named)["Name"] == "app-build"
    assert codebuild.list_projects()["projects"] == ["app-build"]
    codebuild.delete_project(name="app-build")
    assert drift(cfn, "cb", "Build")[0] == "DELETED"
    delete(cfn, "cb")
