"""A host's cfn-init config sets, run the way cfn-init runs them, in a temporary root (test helper).

What cfn-init would do on the instance is done for real (documented cfn-init semantics: config sets in
order, within a config packages → files → commands → services, commands in alphabetical order of their
names, each with its `env` and `cwd`); the real `formwright-run` wrapper and the node's real scripts run
in child processes. Mocked because they cannot run here: the package and service managers (`apt-get`,
`yum`, `systemctl`, `service`), the instance metadata service (`curl`) and `cfn-signal` are recording
shims, and CloudFormation's `Ref`/`Fn::GetAtt` values are rendered as readable stand-ins, except a
WaitCondition's `Data`, which is the JSON object of the signals its handle received, as CloudFormation
makes it from each signal's UniqueId and Data.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

SHIM = '#!/bin/sh\necho "{name} $*" >> "$FW_SHIMS"\n{extra}'
MYSQL = 'echo "mysql-env $DB_HOST $DB_PORT $DB_USER $DB_NAME $MYSQL_PWD" >> "$FW_SHIMS"\ncat >> "$FW_SHIMS"\n'
CFN_SIGNAL = ("#!/usr/bin/env python3\nimport json, os, sys\n"
              "with open(os.environ['FW_SIGNALS'], 'a') as f:\n"
              "    f.write(json.dumps(sys.argv[1:]) + '\\n')\n")


@dataclass
class Host:
    """The temporary root of the instances, the shims, and what they recorded."""

    tmp: Path
    out: Path                        # the transform's artifact folder (files/ holds what S3 would)
    params: dict[str, str]           # parameter values passed at deploy
    template: dict
    root: Path = field(init=False)
    env: dict[str, str] = field(init=False)

    def __post_init__(self) -> None:
        shims = self.tmp / "shims"
        shims.mkdir()
        for name, extra in {"apt-get": "", "yum": "", "service": "", "systemctl": "", "mysql": MYSQL,
                            "curl": "exit 22\n"}.items():
            (shims / name).write_text(SHIM.format(name=name, extra=extra))
            (shims / name).chmod(0o755)
        self.root = self.tmp / "root"
        (self.root / "opt" / "formwright").mkdir(parents=True)
        signal = self.root / "opt" / "aws" / "bin" / "cfn-signal"
        signal.parent.mkdir(parents=True)
        signal.write_text(CFN_SIGNAL)
        signal.chmod(0o755)
        self.env = {"PATH": f"{shims}:{os.environ['PATH']}", "FORMWRIGHT_ROOT": str(self.root),
                    "FW_LOG": str(self.tmp / "run.log"), "FW_SHIMS": str(self.tmp / "shims.log"),
                    "FW_SIGNALS": str(self.tmp / "signals.log"), "HOME": str(self.tmp)}

    def log(self, name: str = "run.log") -> list[str]:
        """The lines a shim (shims.log), the scripts (run.log) or cfn-signal (signals.log) wrote."""
        path = self.tmp / name
        return path.read_text().splitlines() if path.exists() else []

    def signals(self) -> list[list[str]]:
        """The arguments of every cfn-signal call, in order."""
        return [json.loads(line) for line in self.log("signals.log")]

    def wait_data(self, wait: str) -> str:
        """The `Data` of WaitCondition `wait`: {UniqueId: Data} of the success signals to its handle."""
        handle = self.template["Resources"][wait]["Properties"]["Handle"]["Ref"]
        data = {}
        for args in self.signals():
            if args[-1] == f"ref:{handle}" and args[args.index("--success") + 1] == "true":
                data[args[args.index("--id") + 1]] = args[args.index("--data") + 1]
        return json.dumps(data)

    def render(self, value):
        """CloudFormation values as stand-ins: Ref → parameter value (or `ref:X`), GetAtt → `X.Attr`."""
        if isinstance(value, dict) and len(value) == 1:
            ((name, args),) = value.items()
            if name == "Ref":
                return self.params.get(args, f"ref:{args}")
            if name == "Fn::GetAtt" and args[1] == "Data" and \
                    self.template["Resources"][args[0]]["Type"] == "AWS::CloudFormation::WaitCondition":
                return self.wait_data(args[0])
            if name == "Fn::GetAtt":
                return ".".join(args)
            if name == "Fn::Join":
                return args[0].join(str(self.render(a)) for a in args[1])
            if name == "Fn::Sub":
                return re.sub(r"\$\{([^}]+)\}", lambda m: self.params.get(m.group(1), m.group(1)), args)
        return value

    def run(self, instance: dict, check: bool = True) -> list[str]:
        """Apply the instance's default config set the way cfn-init does; return the configs run (a
        failing command stops it, as it stops cfn-init, unless `check`, which raises)."""
        init = instance["Metadata"]["AWS::CloudFormation::Init"]
        done = []
        for name in init["configSets"]["default"]:
            config = init[name]
            for family, packages in config.get("packages", {}).items():
                subprocess.run([f"{family}-get" if family == "apt" else family, "install", "-y", *packages],
                               env=self.env, check=True)
            for path, spec in config.get("files", {}).items():
                target = self.root / path.lstrip("/")
                target.parent.mkdir(parents=True, exist_ok=True)
                if "source" in spec:
                    key = self.render(spec["source"]).split(".amazonaws.com/", 1)[1]
                    shutil.copyfile(self.out / "files" / key, target)
                else:  # cfn-init writes a string as it is and a JSON object as JSON
                    content = self.render(spec["content"])
                    target.write_text(content if isinstance(content, str) else json.dumps(content))
                target.chmod(int(spec["mode"], 8))
            for _, command in sorted(config.get("commands", {}).items()):
                text = command["command"].replace("/opt/formwright", f"{self.root}/opt/formwright")
                run_env = {**self.env, **{k: str(self.render(v)) for k, v in command.get("env", {}).items()}}
                cwd = self.root / command.get("cwd", "/").lstrip("/")
                ran = subprocess.run(["bash", "-c", text], env=run_env, cwd=cwd, check=False, timeout=60,
                                     capture_output=True, text=True)
                if ran.returncode != 0:
                    if check:
                        raise AssertionError(f"{name}: {text} failed: {ran.stderr}")
                    return done
            for services in config.get("services", {}).values():
                for service in services:
                    subprocess.run(["service", service, "start"], env=self.env, check=True)
            done.append(name)
        return done
