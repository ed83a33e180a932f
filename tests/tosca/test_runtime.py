"""The artifact runs the application: each host's cfn-init config sets, run in order in a temporary root
(`harness.Host`: what is real there, and what is a recording shim).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from formwright.transform.cloudformation import transform_tosca

from .harness import Host

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

    host = Host(tmp_path, out, result.parameter_values, template)
    instances = {k: v for k, v in template["Resources"].items() if v["Type"] == "AWS::EC2::Instance"}
    assert len(instances) == 1, list(instances)  # db_host became the RDS instance
    server = next(iter(instances.values()))
    configs = host.run(server)
    root = host.root

    # Order: the wrapper, then per node its files and create → configure → start, hosts before hosted.
    assert configs[0] == "FormwrightRuntime"
    app = [c for c in configs if c.startswith("MyApp")]
    assert app == ["MyAppFiles", "MyAppCreate", "MyAppConfigure", "MyAppStart"]
    assert configs.index("ApacheInstall") < configs.index("MyAppCreate") < configs.index("WorkerStart")

    lines = host.log()
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
    shim_calls = host.log("shims.log")
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
