"""The transformation lifecycle every target plugin follows.

check model → prepare → transform → write artifact → cleanup. The artifact is written into a
temporary folder next to OUT and moved into place only when every phase succeeded, so a failed
transform leaves OUT untouched. OUT is never a folder of the user's: an existing OUT must be empty or
a previous artifact (it holds the MARKER file), and a previous artifact is replaced only when asked.
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


MARKER = ".formwright-artifact"


def check_output(out: Path, force: bool) -> None:
    """Refuse an OUT that exists and is not an empty folder or (with `force`) a previous artifact."""
    if not out.exists() and not out.is_symlink():
        return
    if out.is_symlink() or not out.is_dir():
        raise InputError("the output path exists and is not a folder", file=str(out),
                         hint="name a new folder with -o")
    if (out / MARKER).is_file():
        if not force:
            raise InputError("the output folder holds a previous artifact", file=str(out),
                             hint="add --force to replace it, or name a new folder with -o")
        return
    if any(out.iterdir()):
        raise InputError(f"the output folder is not empty and was not written by formwright (no {MARKER})",
                         file=str(out), hint="name a new or empty folder with -o; nothing was changed")


def replace_folder(staging: Path, out: Path, force: bool = False) -> None:
    """Move `staging` to `out`, replacing an earlier artifact there (kept until the move succeeded)."""
    backup = None
    check_output(out, force)
    if out.exists():
        holder = Path(tempfile.mkdtemp(prefix=f".{out.name}.old.", dir=out.parent))  # a fresh name, ours
        backup = holder / out.name
        out.rename(backup)
    try:
        staging.rename(out)
    except OSError:
        if backup is not None:
            backup.rename(out)
            shutil.rmtree(backup.parent, ignore_errors=True)
        raise
    if backup is not None:
        shutil.rmtree(backup.parent, ignore_errors=True)


def run_plugin(plugin: Plugin, out: Path | None, force: bool = False) -> None:
    """Run every phase of `plugin`; with `out`, write the artifact there atomically (see `check_output`)."""
    staging = None
    if out is not None:
        check_output(out, force)
    try:
        plugin.check_model()
        plugin.prepare()
        plugin.transform()
        if out is not None:
            out = out.resolve()
            out.parent.mkdir(parents=True, exist_ok=True)
            staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
            plugin.write_artifact(staging)
            (staging / MARKER).write_text("written by formwright transform; replaced by --force\n",
                                          encoding="utf-8")
            replace_folder(staging, out, force)
            staging = None
    finally:
        if staging is not None:
            shutil.rmtree(staging, ignore_errors=True)
        plugin.cleanup()
