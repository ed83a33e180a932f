"""The packages cfn-init will install in a booting instance, cached as a layer of the image (a baked AMI).

Before an instance boots, the local cloud reads its UserData for the `cfn-init` commands that apply its own
resource's AWS::CloudFormation::Init (`--resource` its logical id), expands the config sets they name as
cfn-init does (`cfn_bootstrap.init.configs`) and gathers those configs' packages under the Debian names
cfn-init installs (a yum name through `YUM_TO_APT`, an apt one as given, `name=version` when pinned). The set
(sorted) names a layer of the image with exactly those packages installed (`variants.ensure`, built once per
machine through the package proxy, beside the image); the instance boots over it.

Nothing in the instance is skipped: cfn-init still runs its packages step and finds every package installed
(dpkg says so, as on an AMI baked with them: "apt packages already installed"), then goes on with the rest.
What is cached is what `apt-get install` made, a snapshot of Debian's registry when the layer was built.
A layer that cannot be built (Debian's registry unreachable, an unknown name) is not used: cfn-init then
installs the packages itself in the instance, or fails saying why, as it would without the cache.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import hashlib
import io
import shlex
from pathlib import Path
from typing import Any

from formwright.cloud.instances import boot, variants
from formwright.cloud.instances.cfn_bootstrap import init as cfn_init
from formwright.cloud.instances.cfn_bootstrap.sections import InitError
from formwright.cloud.instances.refusals import YUM_TO_APT


def wanted(logical: str, metadata: Any, user_data: str | None) -> tuple[str, ...]:
    """The Debian packages (sorted) cfn-init will install in instance `logical` booting with `user_data`
    (base64, as EC2 holds it) and its resource's `metadata`; empty when it installs none."""
    init = metadata.get(cfn_init.INIT) if isinstance(metadata, dict) else None
    if not isinstance(init, dict) or not user_data:
        return ()
    try:
        script = base64.b64decode(user_data).decode("utf-8", "replace")
    except (ValueError, binascii.Error):
        return ()
    names: set[str] = set()
    for configsets in _invocations(script, logical):
        try:
            chosen = cfn_init.configs(init, configsets)
        except InitError:
            continue  # cfn-init will say so in the instance
        for config in chosen:
            names.update(_apt_names(init.get(config)))
    return tuple(sorted(names))


def _invocations(script: str, logical: str) -> list[str | None]:
    """The --configsets of each `cfn-init` command in the script that applies `logical`'s metadata."""
    found: list[str | None] = []
    for line in script.replace("\\\n", " ").splitlines():
        try:
            words = shlex.split(line, comments=True)
        except ValueError:
            continue
        starts = [i for i, word in enumerate(words) if word.rsplit("/", 1)[-1] == "cfn-init"]
        if not starts:
            continue
        with contextlib.redirect_stderr(io.StringIO()), contextlib.suppress(SystemExit):
            options, _ = cfn_init.parser().parse_known_args(words[starts[0] + 1:])
            if options.resource == logical:
                found.append(options.configsets)
    return found


def _apt_names(config: Any) -> set[str]:
    section = config.get("packages") if isinstance(config, dict) else None
    if not isinstance(section, dict):
        return set()
    names = {str(YUM_TO_APT.get(name, name)) for name in section.get("yum") or {}}
    for name, versions in (section.get("apt") or {}).items():
        pinned = versions if isinstance(versions, list) else [versions] if versions else []
        names.add(f"{name}={pinned[0]}" if pinned else str(name))
    return names


def layer_name(packages: tuple[str, ...]) -> str:
    """The layer's name: a digest of the sorted package set (the folder beside the image: variants.py)."""
    return "apt-" + hashlib.sha256("\n".join(packages).encode()).hexdigest()[:16]


def layer(packages: tuple[str, ...], proxy: str) -> Path | None:
    """The layer with `packages` installed (built on first need, downloading through the package proxy at
    `proxy`), or None when there are none or it cannot be built (cfn-init in the instance then installs them
    itself, or says why not)."""
    if not packages:
        return None
    try:
        return variants.ensure(layer_name(packages), packages, proxy)
    except boot.BootRefused:
        return None
