"""What the command-conventions test runs every command against: a deployed one-stack project, a lifecycle
project with an instance, a git repository with sync objects, each made on first use."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

QUEUE = """\
AWSTemplateFormatVersion: "2010-09-09"
Resources:
  Queue:
    Type: AWS::SQS::Queue
Outputs:
  QueueName:
    Value: !GetAtt Queue.QueueName
"""
# a day-2 operation that fails once while its marker file exists (then `instance retry` resumes it)
FLAKY = """\
import json, pathlib, sys
json.load(sys.stdin)
marker = pathlib.Path({marker!r})
if marker.exists():
    marker.unlink()
    sys.exit("failing once, as asked")
"""


class Workspace:
    """Folders for one test; `run` is the run_cli fixture."""

    def __init__(self, root: Path, run) -> None:
        self.root = root
        self.run = run
        self.made: set[str] = set()
        self.counter = 0

    def fresh(self, prefix: str) -> str:
        """A name not used before in this workspace."""
        self.counter += 1
        return f"{prefix}{self.counter}"

    def must(self, *args: str, cwd: Path | None = None) -> None:
        """Run a formwright command that has to succeed."""
        done = self.run(*args, cwd=cwd)
        assert done.code == 0, f"formwright {' '.join(args)}: {done.out}{done.err}"

    # ---- a plain project ----------------------------------------------------------------------------
    @property
    def project(self) -> Path:
        """A one-queue project with a version (for `package`) and a subfolder to run from."""
        folder = self.root / "tiny"
        if "project" not in self.made:
            (folder / "templates").mkdir(parents=True)
            (folder / "templates" / "queue.yaml").write_text(QUEUE)
            (folder / "formwright.yaml").write_text(
                'name: tiny\nversion: "1.0"\nregion: us-east-1\nstacks:\n'
                "  queue:\n    template: templates/queue.yaml\n")
            self.made.add("project")
        return folder

    def deployed(self) -> Path:
        """The project, deployed (again if a delete removed it)."""
        self.must("deploy", str(self.project), "-y")
        return self.project

    @property
    def importable(self) -> Path:
        """A project whose stack `store` is a bucket made outside it (with boto3), to import: a new stack made
        by an IMPORT change set holds only imported resources."""
        folder = self.root / "importable"
        if "importable" not in self.made:
            (folder / "templates").mkdir(parents=True)
            (folder / "templates" / "store.yaml").write_text(
                "Resources:\n  Bucket:\n    Type: AWS::S3::Bucket\n    DeletionPolicy: Retain\n"
                "    Properties: {BucketName: conv-imported}\n")
            (folder / "formwright.yaml").write_text(
                "name: importable\nregion: us-east-1\nstacks:\n"
                "  store:\n    template: templates/store.yaml\n")
            from formwright.cloud import local
            from formwright.cloud.session import Target

            Target("local", "us-east-1", local.require().endpoint).client("s3").create_bucket(
                Bucket="conv-imported")
            self.made.add("importable")
        return folder

    @property
    def broken(self) -> Path:
        """A project whose stack names a template that is not there."""
        folder = self.root / "broken"
        if "broken" not in self.made:
            folder.mkdir()
            (folder / "formwright.yaml").write_text("name: broken\nstacks:\n  a: {template: missing.yaml}\n")
            self.made.add("broken")
        return folder

    # ---- a lifecycle project with instances ---------------------------------------------------------
    @property
    def life(self) -> Path:
        """A project whose stacks are named per instance, with a day-2 operation that can fail once."""
        folder = self.root / "life"
        if "life" not in self.made:
            (folder / "templates").mkdir(parents=True)
            (folder / "templates" / "queue.yaml").write_text(QUEUE)
            (folder / "flaky.py").write_text(FLAKY.format(marker=str(folder / "fail-once")))
            (folder / "formwright.yaml").write_text(
                'name: life\nversion: "1.0"\nregion: us-east-1\npolicies:\n  multiple_instances: true\n'
                f"operations:\n  poke:\n    action: [{sys.executable}, flaky.py]\n"
                'stacks:\n  queue:\n    template: templates/queue.yaml\n'
                '    stack_name: "{{ instance.name }}-queue"\n')
            self.made.add("life")
        return folder

    def saved_plan(self) -> Path:
        """A plan of the project saved by `plan -o`."""
        path = self.root / "saved-plan.json"
        if not path.is_file():
            self.must("plan", str(self.project), "-o", str(path))
        return path

    def instance(self, name: str = "demo") -> str:
        """An instance of `life`, created once."""
        if f"instance {name}" not in self.made:
            self.must("instance", "create", name, str(self.life))
            self.made.add(f"instance {name}")
        return name

    def failed_operation(self) -> str:
        """An instance whose last operation failed (a day-2 operation that fails once)."""
        name = self.instance(self.fresh("flaky"))
        (self.life / "fail-once").write_text("")
        failed = self.run("instance", "run", name, "poke", str(self.life))
        assert failed.code == 1, failed.out + failed.err
        return name

    # ---- sync objects -------------------------------------------------------------------------------
    @property
    def objects(self) -> Path:
        """A folder with a GitRepository (a local repository holding the template) and one
        CloudFormationStack `app`."""
        folder = self.root / "objects"
        if "objects" not in self.made:
            repo = self.root / "repo"
            repo.mkdir()
            (repo / "template.yaml").write_text(QUEUE)
            for args in (["init", "-q", "--initial-branch=main"], ["add", "-A"],
                         ["-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-qm", "one"]):
                subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, timeout=60)
            folder.mkdir()
            (folder / "app.yaml").write_text(
                "apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\n"
                f"metadata: {{name: repo, namespace: default}}\n"
                f"spec: {{url: {repo.as_uri()}, ref: {{branch: main}}, interval: 1m}}\n---\n"
                "apiVersion: cloudformation.contrib.fluxcd.io/v1alpha1\nkind: CloudFormationStack\n"
                "metadata: {name: app, namespace: default}\n"
                "spec: {stackName: conv-app, templatePath: template.yaml, interval: 1m,\n"
                "       sourceRef: {kind: GitRepository, name: repo}}\n")
            self.made.add("objects")
        return folder

    @property
    def bad_objects(self) -> Path:
        """A CloudFormationStack without its sourceRef (bad input at file:line)."""
        folder = self.root / "bad-objects"
        if "bad-objects" not in self.made:
            folder.mkdir()
            (folder / "bad.yaml").write_text(
                "apiVersion: cloudformation.contrib.fluxcd.io/v1alpha1\n"
                "kind: CloudFormationStack\nmetadata: {name: x}\nspec: {interval: 1s}\n")
            self.made.add("bad-objects")
        return folder
