"""The daemon: in a thread (schedule, dependsOn, commits, deletion) and as a real child process
(`formwright sync run`, SIGKILL mid-way and restart without re-applying, CLI suspend/resume/status,
SIGTERM)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from formwright.engine.cfn import CloudFormation
from formwright.sync.daemon import Daemon
from formwright.sync.status_store import StatusStore, change_set_name_of

from .conftest import QUEUE, objects_yaml
from .harness import wait_for
from .test_reconcile import PROJECT, TWO_QUEUES

pytestmark = pytest.mark.cloud
FORMWRIGHT = str(Path(sys.executable).parent / "formwright")



def status_of(state: Path, key: str):
    store = StatusStore(state)
    try:
        record = store.get(key)
        return record.status if record else None
    finally:
        store.close()


def test_daemon_follows_commits_in_dependency_order_and_deletes(tmp_path, repo, cloud):
    repo.commit({"template.yaml": QUEUE})
    folder = tmp_path / "objects"
    folder.mkdir()
    stacks = [{"name": "db"}, {"name": "web", "dependsOn": [{"name": "db"}], "destroyStackOnDeletion": True},
              {"name": "cache", "destroyStackOnDeletion": False}]
    (folder / "stacks.yaml").write_text(objects_yaml(repo.url, [dict(s) for s in stacks]))
    lines: list[str] = []
    daemon = Daemon(folder, cloud, workers=3, reload_interval=0.2, dependency_requeue=5.0, drift=False,
                    log=lines.append)
    thread = threading.Thread(target=daemon.run_forever, kwargs={"install_signals": False})
    thread.start()
    cfn = CloudFormation(cloud.client("cloudformation"))
    try:
        for name in ("db", "web", "cache"):
            wait_for(lambda n=name: (s := daemon._status_of(f"default/{n}")) and s.is_ready, f"{name} Ready")
        db, web = cfn.describe("sync-db"), cfn.describe("sync-web")
        assert web.updated >= db.updated  # web was created after db was Ready

        sha = repo.commit({"template.yaml": TWO_QUEUES}, "second queue")
        for name in ("db", "web", "cache"):
            wait_for(
                lambda n=name: daemon._status_of(f"default/{n}").last_applied_revision == f"main@sha1:{sha}",
                f"{name} at the new revision",
            )
        # one fetch per source per interval, shared: far fewer fetches than object passes
        assert daemon.sources.fetch_count("default/repo") < daemon.stats.passes

        (folder / "stacks.yaml").write_text(objects_yaml(repo.url, [dict(stacks[0])]))
        wait_for(lambda: cfn.describe("sync-web") is None, "web's stack destroyed")
        wait_for(lambda: daemon.store.get("default/cache") is None, "cache forgotten")
        assert cfn.describe("sync-cache") is not None  # destroyStackOnDeletion: false leaves the stack
    finally:
        daemon.stop()
        thread.join(timeout=30)
    assert not thread.is_alive()


def test_project_deploy_holds_one_worker_while_others_are_served_then_deletion_destroys(
        tmp_path, repo, cloud, monkeypatch):
    """A projectPath deploy blocks the worker running it (StackGroup.deploy() waits for its stacks); with
    workers > 1 the other objects keep being reconciled. Removing the object deletes the project's stacks."""
    from formwright.engine.group import StackGroup

    repo.commit(
        {"template.yaml": QUEUE, "infra/formwright.yaml": PROJECT, "infra/templates/queue.yaml": QUEUE}
    )
    entered, release = threading.Event(), threading.Event()
    real_deploy = StackGroup.deploy

    def held_deploy(self, **kwargs):
        entered.set()
        release.wait(60)  # held until the test has seen another object served meanwhile
        return real_deploy(self, **kwargs)

    monkeypatch.setattr(StackGroup, "deploy", held_deploy)
    folder = tmp_path / "objects"
    folder.mkdir()
    proj = {"name": "proj", "projectPath": "infra", "destroyStackOnDeletion": True}
    (folder / "stacks.yaml").write_text(objects_yaml(repo.url, [dict(proj), {"name": "app"}]))
    daemon = Daemon(folder, cloud, workers=2, reload_interval=0.2, drift=False)
    thread = threading.Thread(target=daemon.run_forever, kwargs={"install_signals": False})
    thread.start()
    cfn = CloudFormation(cloud.client("cloudformation"))
    try:
        assert entered.wait(40), "the project deploy did not start"
        wait_for(
            lambda: (s := daemon._status_of("default/app")) and s.is_ready, "app Ready during the deploy"
        )
        assert (
            not daemon._status_of("default/proj").is_ready and ("object", "default/proj") in daemon._running
        )
        release.set()
        wait_for(lambda: (s := daemon._status_of("default/proj")) and s.is_ready, "proj Ready")
        assert cfn.describe("synced-queue") is not None and cfn.describe("synced-app") is not None

        (folder / "stacks.yaml").write_text(objects_yaml(repo.url, [{"name": "app"}]))
        wait_for(lambda: daemon.store.get("default/proj") is None, "proj forgotten")
        assert cfn.describe("synced-queue") is None and cfn.describe("synced-app") is None
        assert cfn.describe("sync-app") is not None
    finally:
        release.set()
        daemon.stop()
        thread.join(timeout=30)
    assert not thread.is_alive()


def test_broken_sources_fail_only_their_objects_and_the_daemon_reloads_the_fix(tmp_path, repo, cloud):
    """The controller's getSource / artifact checks per object: a missing GitRepository, one that cannot be
    fetched and a Bucket (the daemon reads git only) make their own objects ArtifactFailed; the good one is
    applied, the daemon runs on, and a GitRepository added to the folder later is picked up."""
    import yaml

    repo.commit({"template.yaml": QUEUE})
    folder = tmp_path / "objects"
    folder.mkdir()
    stacks = [{"name": "good"}, {"name": "orphan", "sourceRef": {"kind": "GitRepository", "name": "later"}},
              {"name": "unreachable", "sourceRef": {"kind": "GitRepository", "name": "gone"}},
              {"name": "bucket", "sourceRef": {"kind": "Bucket", "name": "repo"}}]
    text = objects_yaml(repo.url, [dict(s) for s in stacks])

    def source(name: str, url: str) -> str:
        return "---\n" + yaml.safe_dump({
            "apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "GitRepository",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"url": url, "ref": {"branch": "main"}, "interval": "1s"}})

    (folder / "stacks.yaml").write_text(text + source("gone", (tmp_path / "no-such-repo").as_uri()))
    daemon = Daemon(folder, cloud, workers=2, reload_interval=0.2, drift=False)
    thread = threading.Thread(target=daemon.run_forever, kwargs={"install_signals": False})
    thread.start()
    try:
        wait_for(lambda: (s := daemon._status_of("default/good")) and s.is_ready, "good Ready")
        for name in ("orphan", "unreachable", "bucket"):
            wait_for(lambda n=name: (s := daemon._status_of(f"default/{n}")) and s.reason == "ArtifactFailed",
                     f"{name} ArtifactFailed")
        assert daemon._status_of("default/orphan").message == "Source 'GitRepository/later' not found"
        assert daemon._status_of("default/unreachable").message.startswith(
            "Source 'GitRepository/gone' is not ready, artifact not found: ")
        assert "Bucket" in daemon._status_of("default/bucket").message
        (folder / "stacks.yaml").write_text(text + source("gone", (tmp_path / "no-such-repo").as_uri())
                                            + source("later", repo.url))
        wait_for(lambda: daemon._status_of("default/orphan").is_ready, "orphan applied once its source is")
    finally:
        daemon.stop()
        thread.join(timeout=30)
    assert not thread.is_alive()
    assert CloudFormation(cloud.client("cloudformation")).describe("sync-orphan").status == "CREATE_COMPLETE"


def _replace(path, text: str) -> None:
    """Write the objects file as an editor or `git checkout` of a whole file lands (a rename): the daemon
    polls the folder, and a read between a plain write's truncation and its end would see no objects: an
    unsuspended object taken away, which destroyStackOnDeletion then deletes."""
    part = path.with_suffix(".part")
    part.write_text(text)
    part.replace(path)


def test_a_suspended_object_taken_out_of_the_folder_leaves_its_stack(tmp_path, repo, cloud):
    """reconcileDelete: a suspended object's stack is not deleted, even with destroyStackOnDeletion; the
    suspension written in the file (not only through `sync suspend`) counts."""
    repo.commit({"template.yaml": QUEUE})
    folder = tmp_path / "objects"
    folder.mkdir()
    app = {"name": "app", "destroyStackOnDeletion": True}
    _replace(folder / "stacks.yaml", objects_yaml(repo.url, [dict(app)]))
    lines: list[str] = []
    daemon = Daemon(folder, cloud, workers=1, reload_interval=0.2, drift=False, log=lines.append)
    thread = threading.Thread(target=daemon.run_forever, kwargs={"install_signals": False})
    thread.start()
    try:
        wait_for(lambda: (s := daemon._status_of("default/app")) and s.is_ready, "app Ready")
        _replace(folder / "stacks.yaml", objects_yaml(repo.url, [dict(app, suspend=True)]))
        wait_for(lambda: (o := daemon.objects.stacks.get("default/app")) and o.spec.suspend,
                 "the suspension read")
        _replace(folder / "stacks.yaml", objects_yaml(repo.url, []))
        wait_for(lambda: daemon.store.get("default/app") is None, "app forgotten")
    finally:
        daemon.stop()
        thread.join(timeout=30)
    assert CloudFormation(cloud.client("cloudformation")).describe("sync-app").status == "CREATE_COMPLETE"
    assert "default/app: object deleted; stack sync-app left in place (suspended)" in lines


def cli(*args: str, env: dict, check: bool = True) -> subprocess.CompletedProcess:
    done = subprocess.run([FORMWRIGHT, *args], capture_output=True, text=True, env=env, timeout=60)
    if check and done.returncode not in (0,):
        raise AssertionError(f"{args}: {done.returncode}\n{done.stdout}\n{done.stderr}")
    return done


def stack_updates(cfn: CloudFormation, name: str) -> int:
    events = cfn.client.describe_stack_events(StackName=name)["StackEvents"]
    return sum(1 for e in events if e["LogicalResourceId"] == name and e["ResourceStatus"] in
               ("UPDATE_COMPLETE", "CREATE_COMPLETE"))


def test_child_process_killed_mid_way_resumes_without_reapply(tmp_path, repo, cloud):
    repo.commit({"template.yaml": QUEUE})
    folder = tmp_path / "objects"
    folder.mkdir()
    (folder / "stacks.yaml").write_text(objects_yaml(repo.url, [{"name": "app"}]))
    state = folder / ".formwright" / "sync"
    env = dict(os.environ, FORMWRIGHT_TARGET="local")
    cfn = CloudFormation(cloud.client("cloudformation"))

    def start() -> subprocess.Popen:
        return subprocess.Popen([FORMWRIGHT, "sync", "run", str(folder), "--workers", "2", "--no-drift",
                                 "--reload-interval", "200ms"], env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)

    child = start()
    try:
        wait_for(lambda: (s := status_of(state, "default/app")) and s.is_ready, "app Ready")
        assert stack_updates(cfn, "sync-app") == 1
        sha = repo.commit({"template.yaml": TWO_QUEUES}, "second queue")
        wait_for(lambda: status_of(state, "default/app").last_attempted_revision.endswith(sha), "attempt")
        child.send_signal(signal.SIGKILL)  # mid-way: the change set is created, maybe executed
        child.wait(timeout=10)
        killed_at = time.time()
        child = start()
        wait_for(lambda: (s := status_of(state, "default/app")).last_applied_revision.endswith(sha)
                 and s.last_reconcile > killed_at and s.is_ready, "app applied after restart")
        # issue #17: one writer per state folder; a second daemon is refused naming this one
        second = subprocess.run([FORMWRIGHT, "sync", "run", str(folder), "--no-drift"], env=env,
                                capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
        assert second.returncode == 3 and f"pid {child.pid} on" in second.stderr, second.stderr
        passes_after = status_of(state, "default/app").last_reconcile
        wait_for(lambda: status_of(state, "default/app").last_reconcile > passes_after, "another pass")
        assert stack_updates(cfn, "sync-app") == 2  # created once, updated once: nothing applied twice

        # `sync reconcile` waits for the pass that handled its own request (requestedAt), not an earlier one
        ask = ("sync", "reconcile", "app", str(folder), "--output", "json")
        first = json.loads(cli(*ask, env=env).stdout)
        assert first["via"] == "daemon" and first["ready"] == "True" and first["lastHandledReconcileAt"]
        again = json.loads(cli(*ask, env=env).stdout)
        assert again["lastHandledReconcileAt"] > first["lastHandledReconcileAt"]
        # the controller's events, kept for `sync status --events`
        listed = json.loads(cli("sync", "status", str(folder), "--events", "--output", "json",
                                env=env).stdout)["events"]
        created = "Creation of stack 'sync-app' in progress"
        assert any(e["type"] == "Normal" and e["message"].startswith(created) for e in listed), listed
        applied = status_of(state, "default/app").last_applied_change_set
        # an ARN, as the controller's status keeps it, naming the change set flux-<generation>-<revision>
        assert applied.startswith("arn:") and change_set_name_of(applied) == f"flux-1-main-sha1-{sha}"

        # suspend through the CLI while the daemon runs; a commit is then not applied
        cli("sync", "suspend", "app", str(folder), env=env)
        # a pass under way when suspended ends first
        wait_for(lambda: not status_of(state, "default/app").phase, "no pass under way")
        sha3 = repo.commit({"template.yaml": QUEUE}, "back to one queue")
        # as `flux reconcile` on a suspended object: refused, nothing applied
        done = cli("sync", "reconcile", "app", str(folder), env=env, check=False)
        assert done.returncode == 2 and "suspended" in done.stderr, done.stderr
        assert status_of(state, "default/app").last_applied_revision.endswith(sha)
        rows = json.loads(cli("sync", "status", str(folder), "--output", "json", env=env).stdout)
        row = rows["objects"][0]
        assert rows["daemon"] == child.pid and row["suspended"] and row["lastAppliedChangeSet"] == applied

        cli("sync", "resume", "app", str(folder), env=env)
        wait_for(lambda: status_of(state, "default/app").last_applied_revision.endswith(sha3), "resumed")
        assert stack_updates(cfn, "sync-app") == 3
    finally:
        child.send_signal(signal.SIGTERM)
        _out, err = child.communicate(timeout=30)
    assert child.returncode == 0, err
    assert "stopped after" in err
    assert "took over a stale lock of sync run" in err  # the SIGKILLed daemon's lock
    assert "event Normal: Update of stack 'sync-app' in progress (change set arn:" in err  # the daemon's log


def test_cli_bad_input_is_one_line(tmp_path):
    (tmp_path / "bad.yaml").write_text(
        "apiVersion: cloudformation.contrib.fluxcd.io/v1alpha1\n"
        "kind: CloudFormationStack\nmetadata: {name: x}\nspec: {interval: 1s}\n"
    )
    done = cli("sync", "status", str(tmp_path), env=dict(os.environ), check=False)
    assert done.returncode == 2
    assert "bad.yaml:4" in done.stderr and "spec.sourceRef" in done.stderr and "Traceback" not in done.stderr


def test_a_file_caught_mid_rewrite_is_read_once_it_holds_still(tmp_path, repo, cloud):
    """An objects file rewritten in place is empty between its truncation and its write: read then, every
    object would look taken away (and with destroyStackOnDeletion its stack deleted). `reload` reads only
    files that held still through its settle wait; here the writer finishes during that wait."""
    repo.commit({"template.yaml": QUEUE})
    folder = tmp_path / "objects"
    folder.mkdir()
    objects = folder / "stacks.yaml"
    text = objects_yaml(repo.url, [{"name": "app", "destroyStackOnDeletion": True}])
    objects.write_text(text)
    daemon = Daemon(folder, cloud, workers=1, reload_interval=0.2, drift=False, log=lambda line: None)
    assert "default/app" in daemon.objects.stacks
    objects.write_text("")  # truncated: the rewrite has begun
    daemon._pause = lambda seconds: objects.write_text(text + "\n")  # ... and ends while reload waits
    daemon.reload()
    assert "default/app" in daemon.objects.stacks and not daemon._due, "the half-written file was read"
    daemon.reload()  # the next poll reads the finished file: the same object, nothing to do
    assert "default/app" in daemon.objects.stacks and not daemon._due
    objects.write_text(objects_yaml(repo.url, []))  # really taken away, and holding still
    daemon._pause = lambda seconds: None
    daemon.reload()
    assert ("delete", "default/app") in {(kind, key) for kind, key in daemon._due}

