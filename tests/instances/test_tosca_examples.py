"""The TOSCA examples, deployed with `local_cloud: {instances: boot}`, answer over HTTP from the host.

Each test copies an example of examples/tosca into a project, runs `formwright deploy` (the transform, the
artifact upload, the stack) and GETs the example's `private_url` output (`formwright outputs`): the web
instance's PrivateIpAddress, from the host. The instance runs the
transform's artifact as EC2 would: cfn-init installs Apache/PHP or Node.js (yum names as Debian's packages,
through the package proxy), runs the TOSCA lifecycle scripts with formwright-run, cfn-signal completes the
CreationPolicy. The MySQL DBMS is the RDS DBInstance of TOSCAna's CloudFormation plugin, served by MariaDB on
its own booted instance (docs/local-cloud.md): the LAMP page shows rows read from it across the bridge, one of
them written by the test itself, so the page is not a canned answer.

Times on this 2-core machine: the packages come from a cached layer of the image per package set
(instances/package_layers.py), built by the first run on a machine (lamp-two 57 s, nodejs 139 s, most of it
apt); later runs 13-16 s each (docs/local-cloud.md, "Packages cfn-init installs").
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pymysql
import pytest

from tests.instances.conftest import get, image_or_skip

pytestmark = [pytest.mark.slow, pytest.mark.cloud]

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "tosca"
PASSWORD = "s3cret-pass"


def _deploy(tmp_path: Path, run_cli, example: str, inputs: str = "") -> None:
    shutil.copytree(EXAMPLES / example, tmp_path / example)
    (tmp_path / "formwright.yaml").write_text(
        f"name: ex\nregion: us-east-1\nlocal_cloud: {{instances: boot}}\n"
        f"stacks:\n  app:\n    tosca: {example}\n{inputs}")
    deployed = run_cli("deploy", str(tmp_path), "-y", "--output", "json", timeout=900)
    assert deployed.code == 0, deployed.err + deployed.out


def _private_url(tmp_path: Path, run_cli) -> str:
    """The example's `private_url` output: the web instance's address, where the host reaches it."""
    shown = run_cli("outputs", str(tmp_path), "app", "PrivateUrl")
    assert shown.code == 0, shown.err
    return shown.out.strip()


def _database(cloud) -> dict:
    return cloud.client("rds").describe_db_instances()["DBInstances"][0]


def _shop_reads_its_database(cloud, url: str, user: str, database: str) -> None:
    assert "product: Teapot" in get(url)  # the row the shop wrote and read back
    endpoint = _database(cloud)["Endpoint"]
    assert endpoint["Address"] not in url and endpoint["Port"] == 3306
    with pymysql.connect(host=endpoint["Address"], user=user, password=PASSWORD, database=database,
                         connect_timeout=10) as connection, connection.cursor() as cursor:
        cursor.execute("INSERT INTO products VALUES (2, 'Written by the test')")
        connection.commit()
    page = get(url)
    assert page.startswith("shop is open\n")
    assert "product: Written by the test" in page


def _delete(tmp_path: Path, run_cli) -> None:
    deleted = run_cli("delete", str(tmp_path), "-y", "--output", "json")
    assert deleted.code == 0, deleted.err + deleted.out


def test_lamp_two_web_and_database_on_two_instances(tmp_path: Path, run_cli, cloud) -> None:
    image_or_skip()
    _deploy(tmp_path, run_cli, "lamp-two", f"    inputs: {{database_password: {PASSWORD}}}\n")
    _shop_reads_its_database(cloud, _private_url(tmp_path, run_cli), "root", "shop")
    _delete(tmp_path, run_cli)
    assert cloud.client("rds").describe_db_instances()["DBInstances"] == []


def test_lamp_single(tmp_path: Path, run_cli, cloud) -> None:
    image_or_skip()
    _deploy(tmp_path, run_cli, "lamp-single", f"    inputs: {{database_password: {PASSWORD}}}\n")
    _shop_reads_its_database(cloud, _private_url(tmp_path, run_cli), "shop", "shop")
    _delete(tmp_path, run_cli)


def test_nodejs_notes_names_its_database(tmp_path: Path, run_cli, cloud) -> None:
    image_or_skip()
    _deploy(tmp_path, run_cli, "nodejs")
    url = _private_url(tmp_path, run_cli)
    assert url.endswith(":3000/")
    page = get(url)
    assert page == f"notes (database {_database(cloud)['Endpoint']['Address']})\n"
    _delete(tmp_path, run_cli)
