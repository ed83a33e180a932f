"""An Aurora cluster made by a stack, read back with RDS's own API (issue 30, item 3).

Page (AWS CloudFormation Template Reference): AWS::RDS::DBCluster — Ref: the cluster identifier; Fn::GetAtt
Endpoint.Address (`{id}.cluster-{hash}.{region}.rds.amazonaws.com`), Endpoint.Port, ReadEndpoint.Address
(`{id}.cluster-ro-...`), DBClusterArn; DBClusterIdentifier, DatabaseName, StorageEncrypted create-only,
BackupRetentionPeriod and DeletionProtection "No interruption". AWS::RDS::DBInstance with
DBClusterIdentifier: an instance of that cluster (issue 30: "RDS::DBInstance in a cluster").
"""

from __future__ import annotations

import re

from tests.localcloud.lifecycle import delete, deploy, drift, with_props

TEMPLATE = {
    "Resources": {
        "Cluster": {
            "Type": "AWS::RDS::DBCluster",
            "Properties": {
                "Engine": "aurora-postgresql",
                "MasterUsername": "admin",
                "MasterUserPassword": "correct-horse-battery",
                "DatabaseName": "orders",
                "BackupRetentionPeriod": 7,
                "Tags": [{"Key": "team", "Value": "db"}],
            },
        },
        "Writer": {
            "Type": "AWS::RDS::DBInstance",
            "Properties": {
                "Engine": "aurora-postgresql",
                "DBClusterIdentifier": {"Ref": "Cluster"},
                "DBInstanceClass": "db.r6g.large",
            },
        },
    },
    "Outputs": {
        "Cluster": {"Value": {"Ref": "Cluster"}},
        "Endpoint": {"Value": {"Fn::GetAtt": ["Cluster", "Endpoint.Address"]}},
        "Port": {"Value": {"Fn::GetAtt": ["Cluster", "Endpoint.Port"]}},
        "Reader": {"Value": {"Fn::GetAtt": ["Cluster", "ReadEndpoint.Address"]}},
        "Arn": {"Value": {"Fn::GetAtt": ["Cluster", "DBClusterArn"]}},
    },
}


def _cluster(rds, name: str) -> dict:
    return rds.describe_db_clusters(DBClusterIdentifier=name)["DBClusters"][0]


def test_an_aurora_cluster_with_an_instance(cfn, cloud) -> None:
    rds = cloud.client("rds")
    out = deploy(cfn, "db", TEMPLATE)
    assert re.fullmatch(r"db-cluster-[a-z0-9]+", out["Cluster"])
    assert re.fullmatch(rf"{out['Cluster']}\.cluster-\w+\.us-east-1\.rds\.amazonaws\.com", out["Endpoint"])
    assert out["Reader"].startswith(f"{out['Cluster']}.cluster-ro-") and out["Port"] == "5432"
    assert out["Arn"] == f"arn:aws:rds:us-east-1:123456789012:cluster:{out['Cluster']}"
    cluster = _cluster(rds, out["Cluster"])
    assert (cluster["Engine"], cluster["DatabaseName"], cluster["BackupRetentionPeriod"]) == (
        "aurora-postgresql",
        "orders",
        7,
    )
    assert [m["DBInstanceIdentifier"] for m in cluster["DBClusterMembers"]] == [cfn.resource("db", "Writer")]
    assert {t["Key"]: t["Value"] for t in cluster["TagList"]}["team"] == "db"
    assert drift(cfn, "db", "Cluster") == ("IN_SYNC", [])

    kept = with_props(TEMPLATE, "Cluster", BackupRetentionPeriod=14)
    assert deploy(cfn, "db", kept)["Cluster"] == out["Cluster"]  # in place
    assert _cluster(rds, out["Cluster"])["BackupRetentionPeriod"] == 14

    renamed = with_props(kept, "Cluster", DatabaseName="sales")  # create-only: a new cluster and instance
    again = deploy(cfn, "db", renamed)
    assert again["Cluster"] != out["Cluster"]
    assert [c["DatabaseName"] for c in rds.describe_db_clusters()["DBClusters"]] == ["sales"]

    rds.modify_db_cluster(
        DBClusterIdentifier=again["Cluster"], BackupRetentionPeriod=1, ApplyImmediately=True
    )
    assert drift(cfn, "db", "Cluster") == ("MODIFIED", [("/BackupRetentionPeriod", "NOT_EQUAL")])
    delete(cfn, "db")
    assert rds.describe_db_clusters()["DBClusters"] == []
