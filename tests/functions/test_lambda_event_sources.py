"""The event sources the local cloud runs functions for: SQS event source mappings ("Using Lambda with
Amazon SQS") and S3 notifications with a Lambda target ("Amazon S3 Event Notifications", "Event
message structure"). boto3 against the real local cloud; the function records what it got in SSM."""

from __future__ import annotations

import json

from tests.functions.conftest import eventually

RECORDER = '''
import json, boto3

def handler(event, context):
    ssm = boto3.client("ssm")
    for record in event["Records"]:
        if record.get("eventSource") == "aws:sqs":
            name, fail = record["messageId"], "fail" in record["body"]
        else:
            name, fail = record["s3"]["object"]["key"].replace("/", "_"), False
        ssm.put_parameter(Name="/seen/" + name, Value=json.dumps(record), Type="String", Overwrite=True)
        if fail:
            raise RuntimeError("this batch fails")
    count = str(len(event["Records"]))
    ssm.put_parameter(Name="/batch/" + context.aws_request_id, Value=count, Type="String")
    return {"records": len(event["Records"])}
'''


def _queue(sqs, name: str, **attributes: str) -> tuple[str, str]:
    url = sqs.create_queue(QueueName=name, Attributes=attributes)["QueueUrl"]
    return url, sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]


def _counts(sqs, url: str) -> tuple[int, int]:
    """(visible, in flight) messages of a queue."""
    found = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
    return int(found["ApproximateNumberOfMessages"]), int(found["ApproximateNumberOfMessagesNotVisible"])


def _batches(cloud) -> list[int]:
    ssm = cloud.client("ssm")
    found = ssm.describe_parameters(ParameterFilters=[{"Key": "Name", "Option": "BeginsWith",
                                                       "Values": ["/batch/"]}], MaxResults=50)["Parameters"]
    return sorted(int(ssm.get_parameter(Name=p["Name"])["Parameter"]["Value"]) for p in found)


def test_an_sqs_mapping_delivers_queued_messages_in_batches_and_deletes_them(functions, cloud) -> None:
    sqs = cloud.client("sqs")
    functions.create("consumer", {"app.py": RECORDER}, "app.handler", Timeout=30)
    url, arn = _queue(sqs, "work")
    kind = {"kind": {"DataType": "String", "StringValue": "job"}}
    sent = [sqs.send_message(QueueUrl=url, MessageBody=f"job {i}", MessageAttributes=kind)["MessageId"]
            for i in range(5)]
    # messages queued before the mapping exists are delivered too: Lambda polls the queue
    mapping = functions.client.create_event_source_mapping(EventSourceArn=arn, FunctionName="consumer",
                                                           BatchSize=10)
    assert mapping["State"] in ("Creating", "Enabled")
    eventually(lambda: sum(_batches(cloud)) == 5, "all five messages delivered")
    assert len(_batches(cloud)) < 5  # in batches, not one invocation per message
    record = json.loads(functions.parameter(f"/seen/{sent[0]}"))
    assert record["body"] == "job 0"
    assert record["eventSource"] == "aws:sqs" and record["eventSourceARN"] == arn
    assert record["awsRegion"] == "us-east-1"
    assert record["attributes"]["ApproximateReceiveCount"] == "1"
    assert record["messageAttributes"]["kind"]["stringValue"] == "job"
    assert record["messageAttributes"]["kind"]["dataType"] == "String"
    assert record["md5OfBody"] and record["receiptHandle"]
    # "When your function successfully processes a batch, Lambda deletes its messages from the queue"
    eventually(lambda: _counts(sqs, url) == (0, 0), "the batch deleted")
    # a message sent afterwards is delivered as it comes
    later = sqs.send_message(QueueUrl=url, MessageBody="job later")["MessageId"]
    eventually(lambda: functions.parameter(f"/seen/{later}"), "a later message delivered")


def test_a_failing_batch_is_retried_then_sent_to_the_redrive_target(functions, cloud) -> None:
    # a failed batch stays in the queue, comes back after the visibility timeout and is retried; past
    # the RedrivePolicy's maxReceiveCount SQS moves it to the dead-letter queue
    sqs = cloud.client("sqs")
    functions.create("consumer", {"app.py": RECORDER}, "app.handler", Timeout=30)
    dlq_url, dlq_arn = _queue(sqs, "work-dlq")
    url, arn = _queue(sqs, "work", VisibilityTimeout="1",
                      RedrivePolicy=json.dumps({"deadLetterTargetArn": dlq_arn, "maxReceiveCount": "2"}))
    functions.client.create_event_source_mapping(EventSourceArn=arn, FunctionName="consumer", BatchSize=1)
    failing = sqs.send_message(QueueUrl=url, MessageBody="please fail")["MessageId"]
    dead = eventually(lambda: sqs.receive_message(QueueUrl=dlq_url).get("Messages"), "the dead-letter move")
    assert [m["MessageId"] for m in dead] == [failing]
    assert json.loads(functions.parameter(f"/seen/{failing}"))["attributes"]["ApproximateReceiveCount"] == "2"
    assert _batches(cloud) == []  # the function never succeeded with it


def test_a_partial_batch_response_keeps_only_the_failed_messages(functions, cloud) -> None:
    # ReportBatchItemFailures: the messages listed in batchItemFailures stay, the others are deleted
    code = '''
def handler(event, context):
    return {"batchItemFailures": [{"itemIdentifier": r["messageId"]} for r in event["Records"]
                                  if "keep" in r["body"]]}
'''
    sqs = cloud.client("sqs")
    functions.create("partial", {"app.py": code}, "app.handler", Timeout=30)
    url, arn = _queue(sqs, "work", VisibilityTimeout="600")
    for body in ("done 1", "keep me", "done 2"):
        sqs.send_message(QueueUrl=url, MessageBody=body)
    functions.client.create_event_source_mapping(EventSourceArn=arn, FunctionName="partial", BatchSize=10,
                                                 FunctionResponseTypes=["ReportBatchItemFailures"])
    eventually(lambda: _counts(sqs, url) == (0, 1), "two deleted, one kept in flight")


def test_an_s3_notification_invokes_the_function_on_put_object(functions, cloud) -> None:
    s3 = cloud.client("s3")
    function = functions.create("on-upload", {"app.py": RECORDER}, "app.handler", Timeout=30)
    s3.create_bucket(Bucket="uploads")
    functions.client.add_permission(FunctionName="on-upload", StatementId="s3",
                                    Action="lambda:InvokeFunction", Principal="s3.amazonaws.com",
                                    SourceArn="arn:aws:s3:::uploads")
    prefix = {"Key": {"FilterRules": [{"Name": "prefix", "Value": "in/"}]}}
    s3.put_bucket_notification_configuration(Bucket="uploads", NotificationConfiguration={
        "LambdaFunctionConfigurations": [{"Id": "incoming", "LambdaFunctionArn": function["FunctionArn"],
                                          "Events": ["s3:ObjectCreated:*"], "Filter": prefix}]})
    s3.put_object(Bucket="uploads", Key="out/ignored.txt", Body=b"not for the function")
    s3.put_object(Bucket="uploads", Key="in/a photo.jpg", Body=b"12345")
    record = json.loads(eventually(lambda: functions.parameter("/seen/in_a+photo.jpg"), "the notification"))
    # "Event message structure": the key URL-encoded (space as +, / kept), size, eTag, sequencer
    assert record["eventSource"] == "aws:s3" and record["eventName"] == "ObjectCreated:Put"
    assert record["awsRegion"] == "us-east-1" and record["eventVersion"] == "2.1"
    assert record["s3"]["configurationId"] == "incoming"
    assert record["s3"]["bucket"]["name"] == "uploads"
    assert record["s3"]["bucket"]["arn"] == "arn:aws:s3:::uploads"
    assert record["s3"]["object"]["key"] == "in/a+photo.jpg"
    assert record["s3"]["object"]["size"] == 5
    assert record["s3"]["object"]["eTag"] and record["s3"]["object"]["sequencer"]
    assert {"userIdentity", "requestParameters", "responseElements"} <= set(record)
    assert functions.parameter("/seen/out_ignored.txt") is None  # the prefix filter held


def test_both_sources_declared_in_a_template_deliver(functions, cloud) -> None:
    # AWS::S3::Bucket NotificationConfiguration.LambdaConfigurations and AWS::Lambda::EventSourceMapping,
    # as a stack declares them (moto's own bucket model ignored NotificationConfiguration)
    from tests.localcloud.conftest import Cfn

    template = {"Resources": {
        "Role": {"Type": "AWS::IAM::Role", "Properties": {"AssumeRolePolicyDocument": {
            "Version": "2012-10-17", "Statement": []}}},
        "Recorder": {"Type": "AWS::Lambda::Function", "Properties": {
            "Runtime": "python3.12", "Handler": "index.handler", "Timeout": 30,
            "Role": {"Fn::GetAtt": ["Role", "Arn"]}, "Code": {"ZipFile": RECORDER}}},
        "Allow": {"Type": "AWS::Lambda::Permission", "Properties": {
            "FunctionName": {"Ref": "Recorder"}, "Action": "lambda:InvokeFunction",
            "Principal": "s3.amazonaws.com"}},
        "Uploads": {"Type": "AWS::S3::Bucket", "DependsOn": "Allow", "Properties": {
            "BucketName": "declared-uploads", "NotificationConfiguration": {"LambdaConfigurations": [{
                "Event": "s3:ObjectCreated:*", "Function": {"Fn::GetAtt": ["Recorder", "Arn"]},
                "Filter": {"S3Key": {"Rules": [{"Name": "suffix", "Value": ".csv"}]}}}]}}},
        "Work": {"Type": "AWS::SQS::Queue"},
        "Mapping": {"Type": "AWS::Lambda::EventSourceMapping", "Properties": {
            "EventSourceArn": {"Fn::GetAtt": ["Work", "Arn"]}, "FunctionName": {"Ref": "Recorder"},
            "BatchSize": 5}}}}
    stack = Cfn(cloud).deploy("sources", template, caps=["CAPABILITY_IAM"])
    assert stack["StackStatus"] == "CREATE_COMPLETE"
    s3, sqs = cloud.client("s3"), cloud.client("sqs")
    s3.put_object(Bucket="declared-uploads", Key="data/table.csv", Body=b"a,b")
    s3.put_object(Bucket="declared-uploads", Key="data/notes.txt", Body=b"not csv")
    record = json.loads(eventually(lambda: functions.parameter("/seen/data_table.csv"), "the notification"))
    assert record["s3"]["bucket"]["name"] == "declared-uploads"
    assert functions.parameter("/seen/data_notes.txt") is None  # the suffix filter held
    url = sqs.get_queue_url(QueueName=Cfn(cloud).resource("sources", "Work").rsplit("/", 1)[-1])["QueueUrl"]
    sent = sqs.send_message(QueueUrl=url, MessageBody="declared")["MessageId"]
    eventually(lambda: functions.parameter(f"/seen/{sent}"), "the mapping's delivery")
