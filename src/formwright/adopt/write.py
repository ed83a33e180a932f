"""The project `adopt` writes: formwright.yaml (each stack's name, region, parameters, tags, capabilities,
termination protection and dependencies as the stack has them) and templates/ (each template as GetTemplate
gave it), and the record that marks each stack applied with exactly these inputs."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from formwright.adopt.infer import Links, capabilities, secret_parameters
from formwright.adopt.live import LiveStack


@dataclass
class Written:
    """What adopt wrote: files, and per stack its NoEcho parameters' variables."""

    files: list[str] = field(default_factory=list)
    secrets: dict[str, dict[str, str]] = field(default_factory=dict)  # stack: {parameter: VARIABLE}


def stack_keys(stacks: list[LiveStack]) -> dict[str, LiveStack]:
    """Each stack by its name in formwright.yaml: its stack name, with the region when two regions hold
    stacks of that name."""
    counts: dict[str, int] = {}
    for live in stacks:
        counts[live.info.name] = counts.get(live.info.name, 0) + 1
    return {(live.info.name if counts[live.info.name] == 1 else f"{live.info.name}-{live.region}"): live
            for live in stacks}


def variable(stack: str, parameter: str) -> str:
    """The environment variable a NoEcho parameter's value comes from: STACK_PARAMETER in capitals."""
    return re.sub(r"[^A-Z0-9]+", "_", f"{stack}_{parameter}".upper()).strip("_")


def project_name(folder: Path) -> str:
    """A project name from the folder's name: letters, digits and hyphens, starting with a letter."""
    name = re.sub(r"[^A-Za-z0-9-]+", "-", folder.resolve().name).strip("-")
    return name if name[:1].isalpha() else f"adopted-{name}".rstrip("-")


def _q(value: str) -> str:
    """A YAML scalar that reads back as exactly this text (JSON's quoting is YAML's double-quoted)."""
    return json.dumps(value, ensure_ascii=False)


def write_project(folder: Path, name: str, region: str, stacks: dict[str, LiveStack],
                  templates: dict[str, dict[str, Any]], found: Links, *, tag: bool,
                  profile: str | None = None) -> Written:
    """Write formwright.yaml and templates/ into `folder` (empty or new)."""
    written = Written()
    (folder / "templates").mkdir(parents=True, exist_ok=True)
    lines = [f"# Written by `formwright adopt` from {len(stacks)} existing stack(s): each template as "
             "GetTemplate gave it,", "# parameters, tags and settings as the stack has them.",
             f"name: {_q(name)}", f"region: {_q(region)}"]
    if profile:
        lines.append(f"profile: {_q(profile)}")
    if not tag:
        lines += ["# the stacks keep their own tags: no formwright:* ownership tags (adopt --tag adds them)",
                  "ownership_tags: false"]
    lines.append("stacks:")
    for key, live in stacks.items():
        text = live.template_text
        suffix = ".json" if text.lstrip().startswith("{") else ".yaml"
        path = folder / "templates" / f"{key}{suffix}"
        path.write_text(text if text.endswith("\n") else text + "\n", encoding="utf-8")
        written.files.append(str(path))
        lines += [f"  {key}:", f"    template: templates/{key}{suffix}",
                  f"    stack_name: {_q(live.info.name)}"]
        if live.region != region:
            lines.append(f"    region: {_q(live.region)}")
        lines += _parameters(key, live, templates[key], found, written)
        tags = {k: v for k, v in sorted(live.info.tags.items()) if not k.startswith("aws:")}
        if tags:
            lines.append("    tags:")
            lines += [f"      {_q(k)}: {_q(v)}" for k, v in tags.items()]
        caps = capabilities(templates[key], live.capabilities)
        if caps:
            lines.append(f"    capabilities: [{', '.join(caps)}]")
        lines.append(f"    termination_protection: {'true' if live.info.termination_protection else 'false'}")
        if found.depends_on.get(key):
            lines.append(f"    depends_on: [{', '.join(sorted(found.depends_on[key]))}]"
                         "  # imports their exports (Fn::ImportValue)")
    (folder / "formwright.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (folder / ".gitignore").write_text(".formwright/\n", encoding="utf-8")
    written.files[:0] = [str(folder / "formwright.yaml"), str(folder / ".gitignore")]
    return written


def _parameters(key: str, live: LiveStack, template: dict[str, Any], found: Links,
                written: Written) -> list[str]:
    params = live.info.parameters
    if not params:
        return []
    lines = ["    parameters:"]
    secrets = secret_parameters(template)
    for param, value in sorted(params.items()):
        if param in secrets:
            var = variable(key, param)
            written.secrets.setdefault(key, {})[param] = var
            lines.append(f"      {param}: \"{{{{ env.{var} }}}}\"  # NoEcho: CloudFormation never shows the "
                         f"value; set {var} to it")
        elif param in found.refs.get(key, {}):
            other, output = found.refs[key][param]
            lines.append(f"      {param}: !ref {other}.outputs.{output}")
        else:
            lines.append(f"      {param}: {_q(value)}")
    return lines
