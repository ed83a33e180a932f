"""The CloudFormation helper scripts put into a booting instance's root (not into the cached image).

`/opt/aws/bin/cfn-init`, `cfn-signal` and `cfn-hup` (where Amazon Linux has them; also on PATH in
/usr/local/bin, where `pip install aws-cfn-bootstrap` puts them elsewhere) run `cfn_bootstrap` (copied to
/opt/aws/lib) on the instance's python3; /opt/aws/etc/formwright-cloud.json tells them the local cloud's
endpoint on the instance network and the stack's region. `/usr/local/bin/systemctl` is the local cloud's own
(`cfn_bootstrap/systemctl.py`): no init system runs in the instance.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from formwright.cloud.instances.refusals import YUM_TO_APT

PACKAGE = Path(__file__).with_name("cfn_bootstrap")
COMMANDS = {"cfn-init": "init", "cfn-signal": "send_signal", "cfn-hup": "hup"}
WRAPPER = """#!/usr/bin/python3
# {name}: as the formwright local cloud gives it (docs/local-cloud.md)
import sys
sys.path.insert(0, "/opt/aws/lib")
from cfn_bootstrap.{module} import main
sys.exit(main(sys.argv[1:]))
"""


def inject(root: Path, endpoint: str, region: str) -> None:
    """Put the helpers and the local cloud's address into the instance's root."""
    library = root / "opt/aws/lib/cfn_bootstrap"
    library.parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(PACKAGE, library, ignore=shutil.ignore_patterns("__pycache__"), dirs_exist_ok=True)
    (root / "opt/aws/etc").mkdir(parents=True, exist_ok=True)
    settings = {"url": endpoint, "region": region, "yum_to_apt": YUM_TO_APT}
    (root / "opt/aws/etc/formwright-cloud.json").write_text(json.dumps(settings))
    (root / "opt/aws/bin").mkdir(parents=True, exist_ok=True)
    (root / "usr/local/bin").mkdir(parents=True, exist_ok=True)
    for name, module in COMMANDS.items():
        command = root / "opt/aws/bin" / name
        command.write_text(WRAPPER.format(name=name, module=module))
        command.chmod(0o755)
        link = root / "usr/local/bin" / name
        link.unlink(missing_ok=True)
        link.symlink_to(f"/opt/aws/bin/{name}")
    systemctl = root / "usr/local/bin/systemctl"  # no init system runs: the local cloud's (systemctl.py)
    systemctl.write_text(WRAPPER.format(name="systemctl", module="systemctl"))
    systemctl.chmod(0o755)
