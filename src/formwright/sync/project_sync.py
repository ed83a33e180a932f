"""projectPath objects: a whole formwright project deployed (and deleted) through StackGroup."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError
from botocore.parsers import ResponseParserError

from formwright.cloud.errors import translate
from formwright.errors import FormwrightError
from formwright.sandbox import Sandbox, confined
from formwright.sync.objects import StackObject
from formwright.sync.passes import Outcome, PassSteps, backoff
from formwright.sync.source import Artifact, resolve_inside
from formwright.sync.status_store import FALSE, TRUE, Status


class ProjectSteps(PassSteps):
    """Deploys a projectPath object's project and keeps a copy of what was deployed, for deletion."""

    state_dir: Path
    macros_dir: Path | None

    def _reconcile_project(self, obj: StackObject, generation: int, st: Status, artifact: Artifact,
                           force: bool) -> Outcome:
        """projectPath: deploy the formwright project at this revision through StackGroup."""
        from formwright.engine.group import StackGroup
        from formwright.engine.resolve import commands_allowed
        from formwright.engine.stack import prepare_stacks
        from formwright.model.project import load_project

        spec = obj.spec
        if not force and st.is_ready and st.last_applied_revision == artifact.revision \
                and st.observed_generation == generation:
            return Outcome(st, spec.interval)
        try:
            folder = resolve_inside(artifact.path, str(spec.project_path), what="projectPath",
                                    revision=artifact.revision)
            self._link_state(obj, folder)
            project = load_project(folder)
        except FormwrightError as err:
            st.last_attempted_revision = artifact.revision
            return self._not_ready(st, obj, "ArtifactFailed", str(err))
        target = self._project_target(project)
        st.last_attempted_revision = artifact.revision
        allowed = commands_allowed.set(spec.allow_commands)  # `!cmd`: only on the object's opt-in
        try:
            stacks = prepare_stacks(project, target=target, macros_dir=self.macros_dir)
            group = StackGroup(project, stacks, target, max_concurrency=4, counter=self.counter)
        except FormwrightError as err:
            return self._not_ready(st, obj, "ArtifactFailed", str(err))
        finally:
            commands_allowed.reset(allowed)
        # what deletion will delete: this revision's project, kept before anything of it is applied
        self._keep_project(obj.key, artifact, str(spec.project_path))
        results = group.deploy()
        failed = [r for r in results.values() if not r.ok]
        summary = ", ".join(f"{n} {r.outcome}" for n, r in sorted(results.items()))
        if failed:
            return self._change_set_failed(st, obj, "; ".join(r.error or r.name for r in failed))
        st.failures, st.phase = 0, ""
        st.observed_generation = generation
        st.last_applied_revision = artifact.revision
        st.set_ready(TRUE, "Succeeded", f"Applied revision: {artifact.revision} ({summary})")
        applied = any(r.outcome in ("created", "updated") for r in results.values())
        return Outcome(st, spec.interval, applied=applied)

    def _project_target(self, project: Any) -> Any:
        """The reconciler's target, in the project's own region when it names one."""
        target = self.target
        if project.region and project.region != target.region:
            target = type(target)(target.kind, project.region, target.endpoint)
        return target

    def _project_state(self, key: str) -> Path:
        """The project's `.formwright/` (applied cache, build, generated secrets), kept across revisions."""
        return self.state_dir / "projects" / _safe(key)

    def _project_snapshot(self, key: str) -> Path:
        """A copy of the checkout last deployed for `key`: what deletion deletes once the object is gone."""
        return self.state_dir / "project-snapshots" / _safe(key)

    def _link_state(self, obj: StackObject, folder: Path) -> None:
        """The project's `.formwright/` points at a folder kept across revisions (its applied cache)."""
        _link(folder, self._project_state(obj.key))

    def _keep_project(self, key: str, artifact: Artifact, project_path: str) -> None:
        """Copy this revision's checkout aside (once per revision) for deletion to load later."""
        snapshot = self._project_snapshot(key)
        meta = snapshot / "snapshot.json"
        try:
            if json.loads(meta.read_text())["revision"] == artifact.revision:
                return
        except (OSError, ValueError, KeyError):
            pass
        tmp = snapshot.with_name(snapshot.name + ".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        shutil.copytree(artifact.path, tmp / "checkout", symlinks=True,
                        ignore=shutil.ignore_patterns(".formwright"))
        (tmp / "snapshot.json").write_text(json.dumps({"revision": artifact.revision,
                                                       "projectPath": project_path}))
        old = snapshot.with_name(snapshot.name + ".old")
        shutil.rmtree(old, ignore_errors=True)
        if snapshot.exists():
            snapshot.rename(old)
        tmp.rename(snapshot)
        shutil.rmtree(old, ignore_errors=True)

    def delete_project(self, key: str, project_path: str, destroy: bool, status: Status, *,
                       artifact: Artifact | None = None) -> Outcome:
        """A projectPath object is gone: with `destroy`, delete its project's stacks through
        StackGroup.delete() (reverse dependency order), from the copy of the revision last deployed;
        else leave them.

        `artifact` (the source's current checkout) is used only when no copy was kept (say, state lost).
        Blocks until the stacks are deleted, as the project's deploy does. requeue None = finished.
        """
        from formwright.engine.group import StackGroup
        from formwright.engine.stack import prepare_stacks
        from formwright.model.project import load_project

        st = Status.from_json(status.to_json())
        snapshot = self._project_snapshot(key)
        if not destroy:
            self._forget_project(key)
            return Outcome(st, None)
        try:
            meta = json.loads((snapshot / "snapshot.json").read_text())
            root, project_path, revision = (
                snapshot / "checkout",
                str(meta.get("projectPath") or project_path),
                str(meta.get("revision", "")),
            )
        except (OSError, ValueError):
            if artifact is None:
                if not st.last_applied_revision and st.phase != "deleting":
                    # no copy is kept before the first deploy starts: nothing of it reached the cloud
                    st.set_ready(TRUE, "Succeeded", "nothing was deployed")
                    return Outcome(st, None)
                st.failures += 1
                st.set_ready(FALSE, "ArtifactFailed", f"cannot delete the stacks of {key}: the project "
                             f"deployed at {st.last_applied_revision or st.last_attempted_revision} was not "
                             "kept here and its source is unavailable")
                return Outcome(st, backoff(st.failures, 1.0, 60.0))
            root, revision = artifact.path, artifact.revision
        st.phase = "deleting"
        self.save_status(key, st)
        try:
            with confined(Sandbox(root)):
                folder = resolve_inside(root, project_path, what="projectPath", revision=revision)
                _link(folder, self._project_state(key))
                project = load_project(folder)
                target = self._project_target(project)
                stacks = prepare_stacks(project, target=target, macros_dir=self.macros_dir, resolve=False)
                group = StackGroup(project, stacks, target, max_concurrency=4, counter=self.counter)
                results = group.delete()
        except FormwrightError as err:
            st.failures += 1
            st.set_ready(FALSE, "ArtifactFailed", f"cannot delete the stacks of {key}: {err}")
            return Outcome(st, backoff(st.failures, 1.0, 60.0))
        except (ClientError, BotoCoreError, ResponseParserError) as err:
            st.failures += 1
            st.set_ready(FALSE, "CloudFormationApiCallFailed", str(translate(err)))
            return Outcome(st, backoff(st.failures, 1.0, 60.0))
        failed = [r for r in results.values() if not r.ok]
        if failed:
            st.failures += 1
            st.set_ready(FALSE, "CloudFormationApiCallFailed",
                         "; ".join(r.error or f"{r.name} {r.outcome}" for r in failed))
            return Outcome(st, backoff(st.failures, 1.0, 60.0))
        st.phase = ""
        summary = ", ".join(f"{r.stack_name} {r.outcome}" for _, r in sorted(results.items()))
        st.set_ready(TRUE, "Succeeded", f"stacks deleted: {summary}")
        self._forget_project(key)
        return Outcome(st, None)

    def has_project_snapshot(self, key: str) -> bool:
        """True when a copy of the project last deployed for `key` is kept."""
        return (self._project_snapshot(key) / "snapshot.json").is_file()

    def _forget_project(self, key: str) -> None:
        """Drop what was kept for a deleted projectPath object."""
        shutil.rmtree(self._project_snapshot(key), ignore_errors=True)
        shutil.rmtree(self._project_state(key), ignore_errors=True)


def _safe(key: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", key)


def _link(folder: Path, keep: Path) -> None:
    """`folder/.formwright` as a symlink to `keep`."""
    keep.mkdir(parents=True, exist_ok=True)
    link = folder / ".formwright"
    if link.is_symlink() or not link.exists():
        link.unlink(missing_ok=True)
        link.symlink_to(keep, target_is_directory=True)
