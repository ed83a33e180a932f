"""Fixtures for sync tests: real git repositories made in the test, object folders, a reconciler."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

QUEUE = """\
AWSTemplateFormatVersion: "2010-09-09"
Parameters:
  Suffix:
    Type: String
    Default: a
Resources:
  Queue:
    Type: AWS::SQS::Queue
    Properties:
      QueueName: !Sub "q-${AWS::StackName}-${Suffix}"
Outputs:
  Url:
    Value: !Ref Queue
"""


class Repo:
    """A git repository on disk, committed to with the git CLI."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.mkdir(parents=True)
        self.git("init", "--quiet", "--initial-branch=main")
        self.git("config", "user.email", "t@example.com")
        self.git("config", "user.name", "t")

    def git(self, *args: str) -> str:
        """Run git in the repository."""
        return subprocess.run(["git", *args], cwd=self.path, check=True, capture_output=True,
                              text=True, timeout=30).stdout.strip()

    def commit(self, files: dict[str, str], message: str = "change") -> str:
        """Write files, commit them, return the commit's sha."""
        for name, text in files.items():
            target = self.path / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)
        self.git("add", "-A")
        self.git("commit", "--quiet", "-m", message)
        return self.git("rev-parse", "HEAD")

    @property
    def url(self) -> str:
        """A file:// URL of the repository."""
        return self.path.as_uri()


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    """An empty git repository with a `main` branch to come."""
    return Repo(tmp_path / "repo")


def objects_yaml(url: str, stacks: list[dict], *, interval: str = "1s") -> str:
    """A GitRepository and CloudFormationStack documents as YAML text."""
    import yaml

    docs = [{"apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "GitRepository",
             "metadata": {"name": "repo", "namespace": "default"},
             "spec": {"url": url, "ref": {"branch": "main"}, "interval": interval}}]
    for stack in stacks:
        name = stack.pop("name")
        spec = {"stackName": f"sync-{name}", "sourceRef": {"kind": "GitRepository", "name": "repo"},
                "interval": interval, "pollInterval": "1s", "retryInterval": "1s", **stack}
        docs.append({"apiVersion": "cloudformation.contrib.fluxcd.io/v1alpha1", "kind": "CloudFormationStack",
                     "metadata": {"name": name, "namespace": "default"}, "spec": spec})
    return yaml.safe_dump_all(docs, sort_keys=False)
