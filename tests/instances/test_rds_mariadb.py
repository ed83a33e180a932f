"""An RDS DBInstance of the mysql engine, with `instances: boot`, is MariaDB on a booted instance.

RDS makes the master user and the initial database (`MasterUsername`, `MasterUserPassword`, `DBName`,
AWS::RDS::DBInstance in the CloudFormation User Guide) and the instance is "available" once it takes
connections; `Endpoint.Address`/`Endpoint.Port` are where clients connect. Here the address is the booting
instance's on the instance network (RDS gives a DNS name: docs/local-cloud.md says why). The client is
pymysql on the host: a real MySQL-protocol connection across the bridge.
"""

from __future__ import annotations

import ipaddress
from pathlib import Path

import pymysql
import pytest

from formwright.cloud.instances import boot
from tests.instances.conftest import image_or_skip, write_project

pytestmark = [pytest.mark.slow, pytest.mark.cloud]

PASSWORD = "it's-a-\\secret"  # a quote and a backslash: the SQL that makes the user escapes them


def test_a_mysql_dbinstance_is_served_at_its_endpoint_replaced_and_stopped_by_delete(
        tmp_path: Path, run_cli, cloud) -> None:
    image_or_skip()
    template = {
        "Resources": {"Db": {"Type": "AWS::RDS::DBInstance", "Properties": {
            "Engine": "mysql", "DBInstanceClass": "db.t3.micro", "AllocatedStorage": "20",
            "MasterUsername": "admin", "MasterUserPassword": PASSWORD, "DBName": "shop"}},
            "Other": {"Type": "AWS::RDS::DBInstance", "Properties": {
                "Engine": "postgres", "DBInstanceClass": "db.t3.micro", "AllocatedStorage": "20",
                "MasterUsername": "admin", "MasterUserPassword": "password1"}}},
        "Outputs": {"Host": {"Value": {"Fn::GetAtt": ["Db", "Endpoint.Address"]}},
                    "Port": {"Value": {"Fn::GetAtt": ["Db", "Endpoint.Port"]}}},
    }
    project = write_project(tmp_path, "rds", template)
    deployed = run_cli("deploy", str(project), "-y", "--output", "json")
    assert deployed.code == 0, deployed.err + deployed.out
    stack = cloud.client("cloudformation").describe_stacks()["Stacks"][0]
    outputs = {o["OutputKey"]: o["OutputValue"] for o in stack["Outputs"]}
    found = {d["Engine"]: d for d in cloud.client("rds").describe_db_instances()["DBInstances"]}
    host = found["mysql"]["Endpoint"]["Address"]
    assert outputs == {"Host": host, "Port": "3306"}
    assert ipaddress.ip_address(host) in boot.NETWORK
    assert found["postgres"]["Endpoint"]["Address"].endswith(".rds.amazonaws.com")  # a record only

    connection = pymysql.connect(host=host, port=3306, user="admin", password=PASSWORD, database="shop",
                                 connect_timeout=10)
    with connection, connection.cursor() as cursor:
        cursor.execute("CREATE TABLE products (name VARCHAR(40))")
        cursor.execute("INSERT INTO products VALUES ('teapot')")
        connection.commit()
        cursor.execute("SELECT name FROM products")
        assert cursor.fetchall() == (("teapot",),)

    # DBName is set at creation only: a new one replaces the DBInstance, served as a new one is, and the
    # old one's instance stops in the clean-up ("Update requires: Replacement", AWS::RDS::DBInstance)
    template["Resources"]["Db"]["Properties"]["DBName"] = "shop2"
    project = write_project(tmp_path, "rds", template)
    updated = run_cli("deploy", str(project), "-y", "--output", "json")
    assert updated.code == 0, updated.err + updated.out
    new_host = next(d for d in cloud.client("rds").describe_db_instances()["DBInstances"]
                    if d["Engine"] == "mysql")["Endpoint"]["Address"]
    assert new_host != host
    pymysql.connect(host=new_host, port=3306, user="admin", password=PASSWORD, database="shop2",
                    connect_timeout=10).close()
    with pytest.raises(pymysql.err.OperationalError):
        pymysql.connect(host=host, port=3306, user="admin", password=PASSWORD, connect_timeout=3)
    host = new_host

    deleted = run_cli("delete", str(project), "-y", "--output", "json")
    assert deleted.code == 0, deleted.err + deleted.out
    with pytest.raises(pymysql.err.OperationalError):
        pymysql.connect(host=host, port=3306, user="admin", password=PASSWORD, connect_timeout=3)
