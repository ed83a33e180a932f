"""Shared fixtures: a real local cloud (moto's server on 127.0.0.1) per test session.

The server is started once per pytest worker on a free port, in a private FORMWRIGHT_HOME, and
stopped at the end. `cloud` hands a test a clean target: moto's state is reset before it runs.
"""

from __future__ import annotations

import os
import signal
import threading
import urllib.request
from pathlib import Path

import pytest

from formwright.cloud import local
from formwright.cloud.session import Target


def _one_loader_per_data_path() -> None:
    """Every botocore session of a test process reads AWS's service models through one loader (per
    AWS_DATA_PATH): a test's Target makes a new session, whose first clients would otherwise parse the
    same JSON models again (~0.1 s of CPU per session). The models and the code reading them are unchanged;
    a loader caches what it loaded within one session already."""
    import functools

    import botocore.session

    botocore.session.create_loader = functools.lru_cache(maxsize=None)(botocore.session.create_loader)


_one_loader_per_data_path()


def _ctrl_c_as_at_a_terminal() -> None:
    """SIGINT handled as a terminal starts a program (Python's KeyboardInterrupt), in this process and so in
    every `formwright` it starts.

    A non-interactive shell starts a background job with SIGINT ignored (POSIX, "Asynchronous Lists"), and
    `make test &` or a CI runner may do so. SIG_IGN survives fork and exec, and Python leaves an ignored
    SIGINT ignored, so each child formwright of the Ctrl-C tests would never see its Ctrl-C (this failed
    three of them in a background `make test`). A handler, unlike SIG_IGN, is reset to the default at exec."""
    if threading.current_thread() is threading.main_thread() \
            and signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


_ctrl_c_as_at_a_terminal()


@pytest.fixture(autouse=True)
def _signal_state_kept():
    """Each test leaves the worker's SIGINT/SIGTERM dispositions and signal mask as it found them.

    SIG_IGN and a blocked mask survive fork and exec, so one left behind by an in-process test (a daemon's
    handlers, a library masking signals) would reach every later child process of the worker: a Ctrl-C
    test's `formwright` would never see its SIGINT (a terminal starts programs with it default, unblocked)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    watched = (signal.SIGINT, signal.SIGTERM)
    handlers = {number: signal.getsignal(number) for number in watched}
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, [])
    yield
    for number, handler in handlers.items():
        if handler is not None and signal.getsignal(number) is not handler:
            signal.signal(number, handler)
    if signal.pthread_sigmask(signal.SIG_BLOCK, []) != mask:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)


@pytest.fixture(scope="session")
def local_cloud(tmp_path_factory: pytest.TempPathFactory):
    """A running local cloud for the whole session; its record lives in a private home."""
    home = tmp_path_factory.mktemp("formwright-home")
    old = os.environ.get("FORMWRIGHT_HOME")
    os.environ["FORMWRIGHT_HOME"] = str(home)
    os.environ["FORMWRIGHT_TARGET"] = "local"
    record, _ = local.start()
    yield record
    local.stop()
    if old is None:
        os.environ.pop("FORMWRIGHT_HOME", None)
    else:
        os.environ["FORMWRIGHT_HOME"] = old


def reset_cloud(endpoint: str) -> None:
    """Forget every resource in the local cloud (moto's reset API)."""
    request = urllib.request.Request(f"{endpoint}/moto-api/reset", method="POST", data=b"")
    urllib.request.urlopen(request, timeout=10).read()


@pytest.fixture
def cloud(local_cloud) -> Target:
    """A clean local-cloud target for one test."""
    reset_cloud(local_cloud.endpoint)
    return Target("local", "us-east-1", local_cloud.endpoint)


@pytest.fixture
def project_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty folder to build a project in; the test runs from it."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


class CliResult:
    """What one `formwright` child process did."""

    def __init__(self, proc) -> None:
        self.code = proc.returncode
        self.out = proc.stdout
        self.err = proc.stderr

    def json(self):
        import json

        return json.loads(self.out)


@pytest.fixture(scope="session")
def warm_cli():
    """The warm `formwright` of this worker (tests/warm_cli.py), started on first use;
    FORMWRIGHT_TEST_COLD_CLI=1 runs every call in a new interpreter instead."""
    if os.environ.get("FORMWRIGHT_TEST_COLD_CLI") == "1":
        yield None
        return
    from tests.warm_cli import WarmCli

    warm = WarmCli()
    yield warm
    warm.close()


@pytest.fixture
def run_cli(local_cloud, warm_cli):
    """Run the real `formwright` program as a child process against the session's local cloud (forked warm,
    tests/warm_cli.py says what that keeps and skips)."""
    import subprocess
    import sys

    def run(*args: str, cwd: Path | None = None, env: dict | None = None, timeout: float = 300) -> CliResult:
        full_env = {**os.environ, **(env or {})}
        if warm_cli is not None and warm_cli.serves(full_env):
            return CliResult(warm_cli.run(list(args), full_env, cwd, timeout))
        proc = subprocess.run([sys.executable, "-m", "formwright", *args], cwd=cwd, env=full_env,
                              capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
        return CliResult(proc)

    return run


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The longest tests first (`slow`: booted instances, sceptre; `k8s`: a real API server and operator
    replicas), the rest in file order: under `-n 2 --dist worksteal` a worker that runs out steals from the
    end of the other's queue, which then holds short tests, so the two end close together."""
    items.sort(key=lambda item: 0 if item.get_closest_marker("slow") or item.get_closest_marker("k8s") else 1)
