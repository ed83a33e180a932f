"""An RDS DBInstance of a MySQL or MariaDB engine, backed by a booted instance running MariaDB.

With `local_cloud: {instances: boot}`, an `AWS::RDS::DBInstance` whose Engine is `mysql` or `mariadb` boots,
after moto records it, an instance of the cached image with the MariaDB layer (`variants.py`): MariaDB listens
on the instance network at the DBInstance's Port, its master user (`MasterUsername`@'%', `MasterUserPassword`,
every privilege WITH GRANT OPTION) and `DBName` made, and the resource is CREATE_COMPLETE only once it takes
connections (as RDS makes an instance "available"). DescribeDBInstances' `Endpoint.Address` and
`Fn::GetAtt Endpoint.Address` are then its address on the instance network (RDS gives a DNS name; nothing
resolves names here), `Endpoint.Port` its port. Deleting the DBInstance (a stack deletion, a rollback,
DeleteDBInstance) stops it and removes its root. Other engines (postgres, oracle, sqlserver, aurora) stay
moto's record, as in the stub mode (docs/local-cloud.md).
"""

from __future__ import annotations

import base64
import hashlib
import socket
import threading
import time
from pathlib import Path
from typing import Any

from formwright.cloud.instances import addresses, hooks, variants
from formwright.cloud.instances import boot as booting

ENGINES = ("mysql", "mariadb")
LAYER = "mariadb"
STATE = "var/lib/formwright-rds"
READY_WITHIN = 300.0  # seconds for MariaDB to take connections after the boot
BACKED: dict[str, str] = {}  # DBInstance ARN -> the booted instance's id (hooks.BOOTED)
_lock = threading.Lock()

BOOT_SCRIPT = """#!/bin/sh
# The local cloud's RDS instance: MariaDB on the instance network (instances/databases.py)
mkdir -p /run/mysqld && chown mysql:mysql /run/mysqld
/usr/sbin/mariadbd --user=mysql --bind-address=0.0.0.0 --port={port} --skip-name-resolve \\
    >>/var/log/mariadb.log 2>&1 &
tries=0
until mariadb-admin --protocol=socket ping >/dev/null 2>&1; do
    tries=$((tries + 1))
    if [ "$tries" -gt 1200 ]; then echo "MariaDB did not start" > /{state}/failed; exit 1; fi
    sleep 0.2
done
if mariadb --protocol=socket < /{state}/setup.sql >>/var/log/mariadb.log 2>&1; then
    touch /{state}/available
else
    echo "the master user or database could not be made" > /{state}/failed
fi
rm -f /{state}/setup.sql
"""


def runs(engine: str | None) -> bool:
    """Whether the local cloud runs this RDS engine on a booted instance."""
    return str(engine or "").lower() in ENGINES


def _text(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _name(value: str) -> str:
    return "`" + value.replace("`", "``") + "`"


def setup_sql(user: str, password: str, database: str | None) -> str:
    """The SQL that makes the master user (from anywhere, every privilege) and the initial database."""
    lines = [f"CREATE DATABASE IF NOT EXISTS {_name(database)};"] if database else []
    account = f"{_text(user)}@'%'"
    lines += [f"CREATE USER IF NOT EXISTS {account} IDENTIFIED BY {_text(password)};",
              f"ALTER USER {account} IDENTIFIED BY {_text(password)};",
              f"GRANT ALL PRIVILEGES ON *.* TO {account} WITH GRANT OPTION;",
              "FLUSH PRIVILEGES;"]
    return "\n".join(lines) + "\n"


def _subnet(db: Any) -> Any:
    """The subnet the instance takes its address from: its DB subnet group's first on the instance network,
    else the default subnet of its zone (RDS puts an instance without a subnet group in the default VPC)."""
    group = getattr(db, "db_subnet_group", None)
    for subnet in getattr(group, "subnets", None) or []:
        if addresses.on_instance_network(subnet.cidr):
            return subnet
    from moto.ec2.models import ec2_backends

    ec2 = ec2_backends[db.account_id][db.region]
    subnets = ec2.get_default_subnets()
    return subnets.get(db.availability_zone) or next(iter(subnets.values()), None)


def boot_database(logical: str, db: Any, props: dict[str, Any]) -> None:
    """Boot the instance that serves DBInstance `db` and wait until it takes connections; a failure fails
    the resource with its reason."""
    from formwright.cloud.emulator.resources import ResourceFailure
    from formwright.cloud.local import instances_home

    user, password = props.get("MasterUsername"), props.get("MasterUserPassword")
    if not user or not password:
        raise ResourceFailure(logical, "The local cloud's MariaDB needs MasterUsername and "
                                       "MasterUserPassword (a password RDS manages in Secrets Manager is not "
                                       "served here)")
    instance_id = "rds-" + hashlib.sha1(db.db_instance_arn.encode()).hexdigest()[:12]  # noqa: S324 - a name
    subnet = _subnet(db)
    address = subnet and addresses.free_address(subnet.cidr, set(subnet._subnet_ips))
    try:
        if not address:
            raise booting.BootRefused("no free address in its subnets on the instance network "
                                      f"{booting.NETWORK} (its DB subnet group's or the default VPC's)")
        subnet._subnet_ips[address] = db  # EC2 hands it to no instance
        layer = variants.ensure(LAYER)

        def prepare(root: Path) -> None:
            state = root / STATE
            state.mkdir(parents=True)
            (state / "setup.sql").write_text(setup_sql(str(user), str(password), props.get("DBName")))
            (state / "setup.sql").chmod(0o600)

        script = BOOT_SCRIPT.format(port=int(db.port), state=STATE)
        booted = booting.boot(instance_id, address, base64.b64encode(script.encode()).decode(),
                              instances_home(), prepare=prepare, below=(layer,))
    except booting.BootRefused as refused:
        if address:
            subnet._subnet_ips.pop(address, None)
        raise ResourceFailure(logical, f"The local cloud cannot run DBInstance {db.db_instance_identifier}: "
                                       f"{refused}") from None
    hooks.keep(booted)
    with _lock:
        BACKED[db.db_instance_arn] = instance_id
    from formwright.cloud.emulator import locking

    with locking.released():  # MariaDB may take a minute: the local cloud answers others meanwhile (signals)
        failure = _await_available(booted, int(db.port))
    if failure:
        stop_database(db)
        raise ResourceFailure(logical, "The local cloud's MariaDB for DBInstance "
                                       f"{db.db_instance_identifier} did not become available: {failure}")


def _await_available(booted: booting.Booted, port: int) -> str | None:
    state = booted.root / STATE
    deadline = time.monotonic() + READY_WITHIN
    while time.monotonic() < deadline:
        if (state / "failed").exists():
            return _log_tail(booted, (state / "failed").read_text().strip())
        if (state / "available").exists():
            try:
                socket.create_connection((booted.address, port), timeout=2).close()
                return None
            except OSError as err:
                return f"it does not answer on {booted.address}:{port} ({err})"
        if booted.process.poll() is not None:
            return _log_tail(booted, "the instance stopped")
        time.sleep(0.2)
    return _log_tail(booted, f"not within {READY_WITHIN:.0f} s")


def _log_tail(booted: booting.Booted, reason: str) -> str:
    try:
        lines = (booted.root / "var/log/mariadb.log").read_text().strip().splitlines()[-2:]
    except OSError:
        lines = []
    return reason + (f" (var/log/mariadb.log: {' | '.join(lines)})" if lines else "")


def address_of(db: Any) -> str | None:
    """The address of the instance serving `db`, or None when none does."""
    instance_id = BACKED.get(getattr(db, "db_instance_arn", ""))
    booted = hooks.BOOTED.get(instance_id) if instance_id else None
    return booted.address if booted is not None else None


def stop_database(db: Any) -> None:
    """Stop the instance serving `db` (nothing when none does) and free its address."""
    with _lock:
        instance_id = BACKED.pop(db.db_instance_arn, None)
    if instance_id is None:
        return
    booted = hooks.BOOTED.get(instance_id)
    hooks.stop_instance(instance_id)
    subnet = _subnet(db) if booted is not None else None
    if subnet is not None:
        subnet._subnet_ips.pop(booted.address, None)  # type: ignore[union-attr]


def install() -> None:
    """Patch moto: a served DBInstance's endpoint is its instance's address; deleting it stops that."""
    from moto.rds.models import DBInstance, RDSBackend

    record_address = DBInstance.address

    def address(self: Any) -> str:
        return address_of(self) or record_address.fget(self)  # type: ignore[attr-defined]

    DBInstance.address = property(address)  # type: ignore[assignment,method-assign]  # moto has no hook
    delete = RDSBackend.delete_db_instance

    def delete_and_stop(self: Any, db_instance_identifier: str, *args: Any, **kwargs: Any) -> Any:
        db = self.databases.get(db_instance_identifier)
        if db is not None:
            stop_database(db)
        return delete(self, db_instance_identifier, *args, **kwargs)

    RDSBackend.delete_db_instance = delete_and_stop  # type: ignore[method-assign]  # moto has no hook
