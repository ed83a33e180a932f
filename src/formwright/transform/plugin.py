"""The transformation lifecycle every target plugin follows.

check model → prepare → transform → write artifact → cleanup. The artifact is written into a
temporary folder next to OUT and moved into place only when every phase succeeded, so a failed
transform leaves OUT untouched.
"""

from __future__ import annotations

import abc
import shutil
import tempfile
from pathlib import Path

from formwright.errors import InputError
from formwright.tosca.model import EffectiveModel


class Plugin(abc.ABC):
    """A target of the transformation; one instance per run."""

    name: str = "plugin"

    def __init__(self, model: EffectiveModel) -> None:
        self.model = model

    @abc.abstractmethod
    def check_model(self) -> None:
        """Fail (listing every problem) when the model uses what this target cannot express."""

    @abc.abstractmethod
    def prepare(self) -> None:
        """Decide how nodes map onto the target (names, placement, address references)."""

    @abc.abstractmethod
    def transform(self) -> None:
        """Build the target's description of the topology in memory."""

    @abc.abstractmethod
    def write_artifact(self, folder: Path) -> None:
        """Write the artifact (templates, files, scripts, README) into the empty `folder`."""

    def cleanup(self) -> None:  # noqa: B027 - an optional hook: most plugins hold nothing
        """Release whatever the run held (temporary files); always called."""


def replace_folder(staging: Path, out: Path) -> None:
    """Move `staging` to `out`, replacing an earlier artifact there (kept until the move succeeded)."""
    backup = None
    if out.exists():
        if not out.is_dir():
            raise InputError("the output path exists and is not a folder", file=str(out))
        backup = out.with_name(f".{out.name}.old")
        shutil.rmtree(backup, ignore_errors=True)
        out.rename(backup)
    try:
        staging.rename(out)
    except OSError:
        if backup is not None:
            backup.rename(out)
        raise
    if backup is not None:
        shutil.rmtree(backup, ignore_errors=True)


def run_plugin(plugin: Plugin, out: Path | None) -> None:
    """Run every phase of `plugin`; with `out`, write the artifact there atomically."""
    staging = None
    try:
        plugin.check_model()
        plugin.prepare()
        plugin.transform()
        if out is not None:
            out = out.resolve()
            out.parent.mkdir(parents=True, exist_ok=True)
            staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
            plugin.write_artifact(staging)
            replace_folder(staging, out)
            staging = None
    finally:
        if staging is not None:
            shutil.rmtree(staging, ignore_errors=True)
        plugin.cleanup()
