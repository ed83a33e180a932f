"""The artifact runs the application: each host's cfn-init config sets, run in order in a temporary root.

What cfn-init would do on the instance is done here for real (documented cfn-init semantics: config sets
in order, within a config packages → files → commands → services, commands in alphabetical order of
their names, each with its `env` and `cwd`); the real `formwright-run` wrapper and the node's real
scripts run in child processes. Mocked because they cannot run here: the package and service managers
(`apt-get`, `yum`, `systemctl`, `service`) and the instance metadata service (`curl`) are recording
shims on PATH, and CloudFormation's `Ref`/`Fn::GetAtt` values are rendered as readable stand-ins.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from formwright.transform.cloudformation import transform_tosca

pytestmark = pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")

SERVICE = """\
tosca_definitions_version: tosca_simple_yaml_1_1
artifact_types:
  SQL:
    derived_from: tosca.artifacts.Implementation
topology_template:
  inputs:
    db_password:
      type: string
  node_templates:
    server:
      type: tosca.nodes.Compute
      capabilities:
        os:
          properties: {type: linux, distribution: ubuntu, version: "22.04"}
    apache:
      type: tosca.nodes.WebServer.Apache
      requirements:
        - host: server
    my_app:
      type: tosca.nodes.WebApplication
      requirements:
        - host: apache
        - database_endpoint: my_db
      interfaces:
        Standard:
          create:
            implementation:
              primary: my_app/create.sh
              dependencies: [my_app/index.php]
          configure:
            implementation: my_app/configure.sh
            inputs:
              db_name: { get_property: [ my_db, name ] }
              db_password: { get_property: [ my_db, password ] }
              db_host: { get_attribute: [ my_db, private_address ] }
          start:
            inputs:
              greeting: hello world
    worker:
      type: tosca.nodes.SoftwareComponent
      requirements:
        - host: server
        - dependency: my_app
      interfaces:
        Standard:
          start: worker/bin/run.sh
    db_server:
      type: tosca.nodes.DBMS.MySQL
      properties:
        root_password: { get_input: db_password }
      requirements:
        - host: db_host
    my_db:
      type: tosca.nodes.Database.MySQL
      properties:
        name: shop
        password: { get_input: db_password }
      requirements:
        - host: db_server
      artifacts:
        schema:
          file: my_db/schema.sql
          type: SQL
    db_host:
      type: tosca.nodes.Compute
"""

SCRIPTS = {
    "my_app/create.sh": 'echo "create cwd=$(pwd)" >> "$FW_LOG"\nmv index.php moved.php\n',
    "my_app/index.php": "<?php echo 'hi';\n",
    "my_app/configure.sh": 'echo "configure cwd=$(pwd) db_name=$db_name db_password=$db_password '
                           'db_host=$db_host" >> "$FW_LOG"\n',
    "worker/bin/run.sh": 'echo "worker started" >> "$FW_LOG"\nexec sleep 3600\n',
    "my_db/schema.sql": "CREATE TABLE orders (id INT);\n",
}
SHIM = '#!/bin/sh\necho "{name} $*" >> "$FW_SHIMS"\n{extra}'


def _render(value, params: dict[str, str]):
    """CloudFormation values as stand-ins: Ref → parameter value (or `ref:X`), GetAtt → `X.Attr`."""
    if isinstance(value, dict) and len(value) == 1:
        ((name, args),) = value.items()
        if name == "Ref":
            return params.get(args, f"ref:{args}")
        if name == "Fn::GetAtt":
            return ".".join(args)
        if name == "Fn::Join":
            return args[0].join(str(_render(a, params)) for a in args[1])
        if name == "Fn::Sub":
            return re.sub(r"\$\{([^}]+)\}", lambda m: params.get(m.group(1), m.group(1)), args)
    return value


def _run_host(instance: dict, out: Path, root: Path, env: dict[str, str],
              params: dict[str, str]) -> list[str]:
    """Apply the instance's default config set the way cfn-init does; return the configs run."""
    init = instance["Metadata"]["AWS::CloudFormation::Init"]
    done = []
    for name in init["configSets"]["default"]:
        config = init[name]
        for family, packages in config.get("packages", {}).items():
            subprocess.run([f"{family}-get" if family == "apt" else family, "install", "-y", *packages],
                           env=env, check=True)
        for path, spec in config.get("files", {}).items():
            key = _render(spec["source"], {}).split(".amazonaws.com/", 1)[1]
            target = root / path.lstrip("/")
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(out / "files" / key, target)
            target.chmod(int(spec["mode"], 8))
        for _, command in sorted(config.get("commands", {}).items()):
            text = command["command"].replace("/opt/formwright", f"{root}/opt/formwright")
            run_env = {**env, **{k: str(_render(v, params)) for k, v in command.get("env", {}).items()}}
            cwd = root / command.get("cwd", "/").lstrip("/")
            subprocess.run(["bash", "-c", text], env=run_env, cwd=cwd, check=True, timeout=60)
        for services in config.get("services", {}).values():
            for service in services:
                subprocess.run(["service", service, "start"], env=env, check=True)
        done.append(name)
    return done


def test_each_host_runs_its_configs_in_order(tmp_path: Path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "service.yaml").write_text(SERVICE)
    for relative, text in SCRIPTS.items():
        (src / relative).parent.mkdir(parents=True, exist_ok=True)
        (src / relative).write_text(("#!/bin/bash\nset -eu\n" if relative.endswith(".sh") else "") + text)
    out = tmp_path / "out"
    result = transform_tosca(src / "service.yaml", out, inputs={"db_password": "s3cret-password"})
    template = result.template

    shims = tmp_path / "shims"
    shims.mkdir()
    mysql = ('echo "mysql-env $DB_HOST $DB_PORT $DB_USER $DB_NAME $MYSQL_PWD" >> "$FW_SHIMS"\n'
             'cat >> "$FW_SHIMS"\n')
    for name, extra in {"apt-get": "", "yum": "", "service": "", "systemctl": "", "mysql": mysql,
                        "curl": "exit 22\n"}.items():
        (shims / name).write_text(SHIM.format(name=name, extra=extra))
        (shims / name).chmod(0o755)
    root = tmp_path / "root"
    log, shim_log = tmp_path / "run.log", tmp_path / "shims.log"
    env = {"PATH": f"{shims}:{os.environ['PATH']}", "FORMWRIGHT_ROOT": str(root), "FW_LOG": str(log),
           "FW_SHIMS": str(shim_log), "HOME": str(tmp_path)}
    (root / "opt" / "formwright").mkdir(parents=True)

    instances = {k: v for k, v in template["Resources"].items() if v["Type"] == "AWS::EC2::Instance"}
    assert len(instances) == 1, list(instances)  # db_host became the RDS instance
    server = next(iter(instances.values()))
    configs = _run_host(server, out, root, env, result.parameter_values)

    # Order: the wrapper, then per node its files and create → configure → start, hosts before hosted.
    assert configs[0] == "FormwrightRuntime"
    app = [c for c in configs if c.startswith("MyApp")]
    assert app == ["MyAppFiles", "MyAppCreate", "MyAppConfigure", "MyAppStart"]
    assert configs.index("ApacheInstall") < configs.index("MyAppCreate") < configs.index("WorkerStart")

    lines = log.read_text().splitlines()
    app_dir = root / "opt" / "formwright" / "my_app" / "my_app"
    # Each script runs in its own folder (the `mv index.php` next to it worked) ...
    assert lines[0] == f"create cwd={app_dir}"
    assert (app_dir / "moved.php").is_file() and not (app_dir / "index.php").exists()
    # ... with its inputs: the database password every reference sees is the one RDS gets.
    (rds_id,) = [k for k, v in template["Resources"].items() if v["Type"] == "AWS::RDS::DBInstance"]
    rds = template["Resources"][rds_id]["Properties"]
    assert rds["MasterUserPassword"] == {"Ref": "DbPassword"}
    assert lines[1] == (f"configure cwd={app_dir} db_name=shop db_password=s3cret-password "
                        f"db_host={rds_id}.Endpoint.Address")
    # Start inputs are the node's environment although start has no script.
    assert (root / "etc" / "formwright" / "my_app.env").read_text() == "greeting=hello world\n"
    # A start script runs as a systemd unit from its folder, so a foreground process does not block.
    unit = (root / "etc" / "systemd" / "system" / "formwright-worker.service").read_text()
    worker_dir = root / "opt" / "formwright" / "worker" / "worker" / "bin"
    assert f"WorkingDirectory={worker_dir}" in unit and "KillMode=process" in unit
    assert f"ExecStart=/bin/bash {worker_dir}/run.sh" in unit
    shim_calls = shim_log.read_text().splitlines()
    assert "apt-get install -y apache2 php libapache2-mod-php php-mysql" in shim_calls
    assert "systemctl enable --now formwright-worker.service" in shim_calls
    assert "worker started" not in lines  # systemd (a shim here) runs it, not cfn-init
    # The database's SQL artifact is applied to RDS (with the MySQL client) before the app is created.
    assert configs.index("MyDbSql") < configs.index("MyAppCreate")
    assert "apt-get install -y default-mysql-client" in shim_calls
    address, port = f"{rds_id}.Endpoint.Address", f"{rds_id}.Endpoint.Port"
    assert f"mysql-env {address} {port} root shop s3cret-password" in shim_calls
    assert "CREATE TABLE orders (id INT);" in shim_calls
    assert rds_id in server["DependsOn"]


SHORT_PASSWORD = """\
tosca_definitions_version: tosca_simple_yaml_1_2
topology_template:
  inputs:
    db_password:
      type: string
  node_templates:
    web:
      type: tosca.nodes.Compute
      capabilities:
        os:
          properties: {type: linux, distribution: debian, version: "12", architecture: arm64}
    app:
      type: tosca.nodes.SoftwareComponent
      requirements:
        - host: web
        - dependency: db
      interfaces:
        Standard:
          configure:
            implementation: configure.sh
            inputs:
              password: { get_input: db_password }
    cache:
      type: tosca.nodes.DBMS
      properties:
        port: 6379
      requirements:
        - host: cache_host
    cache_host:
      type: tosca.nodes.Compute
    mysql:
      type: tosca.nodes.DBMS.MySQL
      properties:
        root_password: { get_input: db_password }
      requirements:
        - host: db_host
    db:
      type: tosca.nodes.Database.MySQL
      properties:
        name: shop
      requirements:
        - host: mysql
    db_host:
      type: tosca.nodes.Compute
    client:
      type: tosca.nodes.SoftwareComponent
      requirements:
        - host: web
        - redis:
            node: cache
            relationship: tosca.relationships.ConnectsTo
  outputs:
    password:
      value: { get_input: db_password }
"""


def test_one_password_everywhere_ports_opened_and_the_image_of_the_os(tmp_path: Path):
    (tmp_path / "service.yaml").write_text(SHORT_PASSWORD)
    (tmp_path / "configure.sh").write_text("#!/bin/sh\necho configured\n")
    result = transform_tosca(tmp_path / "service.yaml", None, inputs={"db_password": "short"})
    resources, parameters = result.template["Resources"], result.template["Parameters"]
    # A password RDS would refuse is replaced by a generated one, and every reference sees that one.
    (rds,) = [r for r in resources.values() if r["Type"] == "AWS::RDS::DBInstance"]
    generated = rds["Properties"]["MasterUserPassword"]["Ref"]
    assert generated in result.generated_secrets and parameters[generated]["NoEcho"] is True
    configure = [c for r in resources.values() if r["Type"] == "AWS::EC2::Instance"
                 for name, c in r["Metadata"]["AWS::CloudFormation::Init"].items() if name == "AppConfigure"]
    assert configure[0]["commands"]["run"]["env"]["password"] == {"Ref": generated}
    assert any("fewer than 8 characters" in str(w) for w in result.warnings)
    # The port of a DBMS on an instance is opened to the instance of the node that connects to it.
    ingress = [r["Properties"] for r in resources.values() if r["Type"] == "AWS::EC2::SecurityGroupIngress"]
    assert any(i["FromPort"] == 6379 for i in ingress), ingress
    # Debian 12 on arm64: Debian's public SSM parameter, read by CloudFormation at deploy time.
    assert parameters["ImageIdDebian12Arm"] == {
        "Type": "AWS::SSM::Parameter::Value<AWS::EC2::Image::Id>",
        "Default": "/aws/service/debian/release/12/latest/arm64",
        "Description": "Image of the Debian 12 instances (an SSM parameter path).",
    }
    assert "KeyName" in parameters and "HasKeyName" in result.template["Conditions"]
