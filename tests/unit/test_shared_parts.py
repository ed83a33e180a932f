"""Parts the stacks' threads share, made once however many threads ask at once: a target's runner (its
CloudFormation client, shared listing and learned durations), lazily made clients, the account id.
A Barrier starts the threads together; the stand-ins' short sleeps widen the window a race would need
(they time nothing)."""

from __future__ import annotations

import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from types import SimpleNamespace

from formwright.cloud.session import LazyClient, Target
from formwright.engine.group import StackGroup
from formwright.engine.stack import prepare_stacks
from formwright.model import load_project

THREADS = 16


def together(work, threads: int = THREADS) -> list:
    barrier = threading.Barrier(threads)

    def run(_):
        barrier.wait()
        return work()

    with ThreadPoolExecutor(threads) as pool:
        return list(pool.map(run, range(threads)))


class SlowTarget:
    """An aws-kind target whose clients take a moment to make, as botocore's do (~0.05 s)."""

    kind, region = "aws", "us-east-1"

    def __init__(self) -> None:
        self.made = 0
        self._lock = threading.Lock()

    def client(self, _service: str, max_attempts: int = 8):
        time.sleep(0.01)
        with self._lock:
            self.made += 1
        return SimpleNamespace(meta=SimpleNamespace(endpoint_url="https://cloudformation.example"))

    def account_id(self) -> str:
        return "123456789012"


def test_one_runner_per_target_however_many_threads_ask(tmp_path) -> None:
    (tmp_path / "t.json").write_text(json.dumps({"Resources": {"T": {"Type": "AWS::SNS::Topic"}}}))
    (tmp_path / "formwright.yaml").write_text("name: r\nstacks:\n  a: {template: t.json}\n")
    project = load_project(tmp_path)
    target = SlowTarget()
    group = StackGroup(project, prepare_stacks(project), target)
    runners = together(lambda: group.runner_of(target))
    assert len({id(r) for r in runners}) == 1  # one listing and one record of durations for the target
    assert runners[0].cfn.watch is not None


def test_a_lazy_client_is_made_once_on_first_use() -> None:
    made: list[int] = []

    def make():
        time.sleep(0.01)
        made.append(1)
        return SimpleNamespace(describe_stacks=lambda: "answer")

    client = LazyClient(make)
    assert made == []  # nothing made until used
    assert together(lambda: client.describe_stacks()) == ["answer"] * THREADS
    assert made == [1]


def test_the_account_id_is_asked_once_while_a_prefetch_runs() -> None:
    asked: list[int] = []

    class Sts:
        def get_caller_identity(self):
            time.sleep(0.01)
            asked.append(1)
            return {"Account": "210987654321"}

    target = Target("aws", "us-east-1")
    target._clients[("sts", 8)] = Sts()  # the STS client a real target would make
    target.prefetch_account()
    assert together(target.account_id) == ["210987654321"] * THREADS
    assert asked == [1]
