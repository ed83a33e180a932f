"""CloudWatch alarms made by a stack, read back with CloudWatch's own API (issue 30, item 3).

Page (AWS CloudFormation Template Reference): AWS::CloudWatch::Alarm — Ref: the alarm's name; Fn::GetAtt
Arn: `arn:aws:cloudwatch:{region}:{account}:alarm:{name}`; AlarmName create-only ("Update requires:
Replacement"), the other properties "No interruption".
"""

from __future__ import annotations

from tests.localcloud.lifecycle import delete, deploy, drift, with_props

TEMPLATE = {
    "Resources": {
        "Topic": {"Type": "AWS::SNS::Topic"},
        "Alarm": {
            "Type": "AWS::CloudWatch::Alarm",
            "Properties": {
                "Namespace": "AWS/SQS",
                "MetricName": "ApproximateNumberOfMessagesVisible",
                "Statistic": "Sum",
                "Period": 60,
                "EvaluationPeriods": 2,
                "Threshold": 100,
                "ComparisonOperator": "GreaterThanThreshold",
                "Dimensions": [{"Name": "QueueName", "Value": "orders"}],
                "AlarmActions": [{"Ref": "Topic"}],
                "Tags": [{"Key": "team", "Value": "orders"}],
            },
        },
    },
    "Outputs": {
        "Name": {"Value": {"Ref": "Alarm"}},
        "Arn": {"Value": {"Fn::GetAtt": ["Alarm", "Arn"]}},
        "Topic": {"Value": {"Ref": "Topic"}},
    },
}


def test_an_alarm_is_put_changed_replaced_and_deleted(cfn, cloud) -> None:
    cloudwatch = cloud.client("cloudwatch")
    out = deploy(cfn, "al", TEMPLATE)
    assert out["Name"].startswith("al-Alarm-")
    assert out["Arn"] == f"arn:aws:cloudwatch:us-east-1:123456789012:alarm:{out['Name']}"
    alarm = cloudwatch.describe_alarms(AlarmNames=[out["Name"]])["MetricAlarms"][0]
    assert (alarm["Threshold"], alarm["Period"], alarm["AlarmActions"]) == (100.0, 60, [out["Topic"]])
    assert alarm["Dimensions"] == [{"Name": "QueueName", "Value": "orders"}]
    tags = {t["Key"]: t["Value"] for t in cloudwatch.list_tags_for_resource(ResourceARN=out["Arn"])["Tags"]}
    assert tags["team"] == "orders" and tags["aws:cloudformation:stack-name"] == "al"
    assert drift(cfn, "al", "Alarm") == ("IN_SYNC", [])

    raised = with_props(
        TEMPLATE,
        "Alarm",
        Threshold=500,
        AlarmDescription="too many orders waiting",
        Tags=[{"Key": "team", "Value": "ops"}],
    )
    assert deploy(cfn, "al", raised)["Name"] == out["Name"]
    alarm = cloudwatch.describe_alarms(AlarmNames=[out["Name"]])["MetricAlarms"][0]
    assert (alarm["Threshold"], alarm["AlarmDescription"]) == (500.0, "too many orders waiting")
    tags = {t["Key"]: t["Value"] for t in cloudwatch.list_tags_for_resource(ResourceARN=out["Arn"])["Tags"]}
    assert tags["team"] == "ops" and "aws:cloudformation:logical-id" in tags

    named = with_props(raised, "Alarm", AlarmName="orders-backlog")  # create-only: replaced
    again = deploy(cfn, "al", named)
    assert again["Name"] == "orders-backlog"
    assert [a["AlarmName"] for a in cloudwatch.describe_alarms()["MetricAlarms"]] == ["orders-backlog"]

    cloudwatch.put_metric_alarm(
        AlarmName="orders-backlog",
        Namespace="AWS/SQS",
        MetricName="ApproximateNumberOfMessagesVisible",
        Statistic="Sum",
        Period=60,
        EvaluationPeriods=2,
        Threshold=1,
        ComparisonOperator="GreaterThanThreshold",
        Dimensions=[{"Name": "QueueName", "Value": "orders"}],
        AlarmActions=[out["Topic"]],
    )
    assert drift(cfn, "al", "Alarm") == (
        "MODIFIED",
        [("/AlarmDescription", "REMOVE"), ("/Threshold", "NOT_EQUAL")],
    )
    delete(cfn, "al")
    assert cloudwatch.describe_alarms()["MetricAlarms"] == []


def test_a_metric_math_alarm(cfn, cloud) -> None:
    # AWS::CloudWatch::Alarm, Metrics: "An array that enables you to create an alarm based on the result of a
    # metric math expression"; MetricName and Metrics are exclusive
    template = {
        "Resources": {
            "Alarm": {
                "Type": "AWS::CloudWatch::Alarm",
                "Properties": {
                    "EvaluationPeriods": 1,
                    "Threshold": 5,
                    "ComparisonOperator": "GreaterThanThreshold",
                    "Metrics": [
                        {
                            "Id": "errors",
                            "ReturnData": False,
                            "MetricStat": {
                                "Metric": {"Namespace": "AWS/Lambda", "MetricName": "Errors"},
                                "Period": 60,
                                "Stat": "Sum",
                            },
                        },
                        {
                            "Id": "rate",
                            "Expression": "errors * 100",
                            "Label": "error rate",
                            "ReturnData": True,
                        },
                    ],
                },
            }
        },
        "Outputs": {"Name": {"Value": {"Ref": "Alarm"}}},
    }
    name = deploy(cfn, "math", template)["Name"]
    alarm = cloud.client("cloudwatch").describe_alarms(AlarmNames=[name])["MetricAlarms"][0]
    assert [m["Id"] for m in alarm["Metrics"]] == ["errors", "rate"]
    assert alarm["Metrics"][1]["Expression"] == "errors * 100"
    delete(cfn, "math")


QUERY = {
    "Resources": {
        "Query": {
            "Type": "AWS::Logs::QueryDefinition",
            "Properties": {
                "Name": "errors",
                "QueryString": "fields @message | filter @message like /ERROR/",
                "LogGroupNames": ["/app/api"],
            },
        }
    },
    "Outputs": {
        "Id": {"Value": {"Ref": "Query"}},
        "Att": {"Value": {"Fn::GetAtt": ["Query", "QueryDefinitionId"]}},
    },
}


def test_a_saved_logs_insights_query(cfn, cloud) -> None:
    # AWS::Logs::QueryDefinition: Ref and QueryDefinitionId the query's id; every property "No interruption".
    # moto has no saved queries: the local cloud keeps them and answers DescribeQueryDefinitions itself
    logs = cloud.client("logs")
    out = deploy(cfn, "q", QUERY)
    assert out["Id"] == out["Att"] and len(out["Id"]) == 36
    found = logs.describe_query_definitions()["queryDefinitions"]
    assert [(d["queryDefinitionId"], d["name"], d["logGroupNames"]) for d in found] == [
        (out["Id"], "errors", ["/app/api"])
    ]
    assert drift(cfn, "q", "Query") == ("IN_SYNC", [])

    renamed = with_props(QUERY, "Query", Name="api-errors", LogGroupNames=["/app/api", "/app/worker"])
    assert deploy(cfn, "q", renamed)["Id"] == out["Id"]  # in place
    found = logs.describe_query_definitions(queryDefinitionNamePrefix="api-")["queryDefinitions"]
    assert [d["logGroupNames"] for d in found] == [["/app/api", "/app/worker"]]

    logs.put_query_definition(
        queryDefinitionId=out["Id"],
        name="api-errors",
        queryString="fields @timestamp",
        logGroupNames=["/app/api", "/app/worker"],
    )
    assert drift(cfn, "q", "Query") == ("MODIFIED", [("/QueryString", "NOT_EQUAL")])
    assert logs.delete_query_definition(queryDefinitionId=out["Id"])["success"] is True
    assert drift(cfn, "q", "Query")[0] == "DELETED"
    delete(cfn, "q")
