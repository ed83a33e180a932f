"""The parts of a booted instance's services and RDS database that need no instance (fast): systemctl's verbs
on a unit, the Amazon Linux service names, the SQL that makes RDS's master user.

Where the behaviour comes from: systemctl(1) (exit 3 for a unit not active, 5 for a unit not found,
`enable --now` starts it); RDS's MasterUsername/MasterUserPassword/DBName (AWS::RDS::DBInstance).
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

from formwright.cloud.instances import databases, helpers
from formwright.cloud.instances.cfn_bootstrap import services, systemctl


def test_a_service_named_as_amazon_linux_names_it_is_its_debian_packages(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    config = tmp_path / "cloud.json"
    config.write_text(json.dumps({"yum_to_apt": helpers.YUM_TO_APT}))
    monkeypatch.setenv("FORMWRIGHT_CLOUD_CONFIG", str(config))
    here = {"apache2", "notes"}  # the services this image would have
    monkeypatch.setattr(services, "exists", lambda name: name.removesuffix(".service") in here)
    assert services.debian_name("httpd") == "apache2"
    assert services.debian_name("httpd.service") == "apache2"
    assert services.debian_name("notes.service") == "notes"
    assert services.debian_name("mariadb") == "mariadb"  # mapped to mariadb-client, which has no service


def test_systemctl_enables_starts_and_stops_a_unit(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture) -> None:
    name = f"fw-test-{uuid.uuid4().hex[:8]}"  # its log goes to /var/log/NAME.service.log: removed below
    units = tmp_path / "units"
    units.mkdir()
    (units / f"{name}.service").write_text("[Service]\nExecStart=/bin/sleep 60\n")
    monkeypatch.setattr(services, "UNIT_DIRS", (str(units),))
    monkeypatch.setattr(services, "PIDS", tmp_path / "pids")
    monkeypatch.setattr(systemctl, "WANTS", tmp_path / "wants")
    monkeypatch.setattr(services, "_systemd_enable", lambda unit: (tmp_path / "wants").mkdir() or (
        tmp_path / "wants" / f"{unit}.service").touch())
    try:
        assert systemctl.main(["daemon-reload"]) == 0
        assert systemctl.main(["is-active", name]) == 3
        assert systemctl.main(["enable", "--now", f"{name}.service"]) == 0
        assert systemctl.main(["is-active", name]) == 0
        assert systemctl.main(["is-enabled", name]) == 0
        assert systemctl.main(["reload", name]) == 1  # no ExecReload: "Job type reload is not applicable"
        assert systemctl.main(["stop", name]) == 0
        assert systemctl.main(["--quiet", "is-active", name]) == 3
        assert systemctl.main(["start", "no-such-unit"]) == 5
        err = capsys.readouterr().err
        assert "Job type reload is not applicable" in err and "no-such-unit.service could not be found" in err
    finally:
        systemctl.main(["stop", name])
        Path(f"/var/log/{name}.service.log").unlink(missing_ok=True)


def test_the_master_user_sql_quotes_names_and_passwords() -> None:
    sql = databases.setup_sql("o'neil", "a\\b'c", "shop`s")
    assert "CREATE DATABASE IF NOT EXISTS `shop``s`;" in sql
    assert "CREATE USER IF NOT EXISTS 'o\\'neil'@'%' IDENTIFIED BY 'a\\\\b\\'c';" in sql
    assert "GRANT ALL PRIVILEGES ON *.* TO 'o\\'neil'@'%' WITH GRANT OPTION;" in sql
    assert "CREATE DATABASE" not in databases.setup_sql("admin", "password1", None)  # no DBName: none made
    assert databases.runs("MySQL") and databases.runs("mariadb") and not databases.runs("postgres")
