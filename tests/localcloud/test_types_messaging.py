"""An Amazon MQ broker made by a stack, read back with Amazon MQ's own API (issue 30, item 3).

Page (AWS CloudFormation Template Reference): AWS::AmazonMQ::Broker — Ref: the broker id; Arn
(`arn:aws:mq:{region}:{account}:broker:{name}:{id}`), ConfigurationId, IpAddresses, OpenWireEndpoints ...;
BrokerName, EngineType, DeploymentMode create-only; HostInstanceType, EngineVersion, Users "No interruption".
"""

from __future__ import annotations

from tests.localcloud.lifecycle import delete, deploy, drift, with_props

TEMPLATE = {
    "Resources": {
        "Broker": {
            "Type": "AWS::AmazonMQ::Broker",
            "Properties": {
                "BrokerName": "orders",
                "EngineType": "ACTIVEMQ",
                "EngineVersion": "5.17.6",
                "HostInstanceType": "mq.t3.micro",
                "DeploymentMode": "SINGLE_INSTANCE",
                "PubliclyAccessible": False,
                "Users": [{"Username": "app", "Password": "correct-horse-battery"}],
                "Tags": [{"Key": "team", "Value": "orders"}],
            },
        }
    },
    "Outputs": {
        "Id": {"Value": {"Ref": "Broker"}},
        "Arn": {"Value": {"Fn::GetAtt": ["Broker", "Arn"]}},
        "OpenWire": {"Value": {"Fn::Select": [0, {"Fn::GetAtt": ["Broker", "OpenWireEndpoints"]}]}},
        "Config": {"Value": {"Fn::GetAtt": ["Broker", "ConfigurationId"]}},
    },
}


def test_an_activemq_broker(cfn, cloud) -> None:
    mq = cloud.client("mq")
    out = deploy(cfn, "mq", TEMPLATE)
    assert out["Arn"] == f"arn:aws:mq:us-east-1:123456789012:broker:orders:{out['Id']}"
    assert out["OpenWire"].startswith("ssl://") and out["Config"]
    broker = mq.describe_broker(BrokerId=out["Id"])
    assert (broker["BrokerName"], broker["HostInstanceType"], broker["Tags"]["team"]) == (
        "orders",
        "mq.t3.micro",
        "orders",
    )
    assert [u["Username"] for u in mq.list_users(BrokerId=out["Id"])["Users"]] == ["app"]
    assert drift(cfn, "mq", "Broker") == ("IN_SYNC", [])

    bigger = with_props(
        TEMPLATE,
        "Broker",
        HostInstanceType="mq.m5.large",
        Users=[
            {"Username": "app", "Password": "correct-horse-battery"},
            {"Username": "ops", "Password": "staple-battery-x"},
        ],
    )
    assert deploy(cfn, "mq", bigger)["Id"] == out["Id"]  # in place
    assert mq.describe_broker(BrokerId=out["Id"])["HostInstanceType"] == "mq.m5.large"
    assert sorted(u["Username"] for u in mq.list_users(BrokerId=out["Id"])["Users"]) == ["app", "ops"]

    renamed = with_props(bigger, "Broker", BrokerName="orders-2")  # create-only: replaced
    again = deploy(cfn, "mq", renamed)
    assert again["Id"] != out["Id"]
    assert [b["BrokerName"] for b in mq.list_brokers()["BrokerSummaries"]] == ["orders-2"]

    mq.update_broker(BrokerId=again["Id"], HostInstanceType="mq.t3.micro")
    assert drift(cfn, "mq", "Broker") == ("MODIFIED", [("/HostInstanceType", "NOT_EQUAL")])
    delete(cfn, "mq")
    assert mq.list_brokers()["BrokerSummaries"] == []
