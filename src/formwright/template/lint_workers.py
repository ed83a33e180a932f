"""cfn-lint in child processes started before their work is known.

Importing cfn-lint and loading its rules takes ~1.5 s, longer than loading and expanding a project of
thirty stacks. `LintWorkers.start()` forks a worker that does it at once, so that it overlaps with the
project's preparation; `run()` then lints each template in a worker (more workers, up to the CPU count,
when there are enough templates to repay their loading) and returns the findings in template order.

Workers are daemonic: a command that fails before linting exits without waiting for them.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import traceback
from collections.abc import Callable
from multiprocessing.connection import Connection, wait
from typing import Any

from formwright.template.lint import LintFinding

Job = tuple[str, str, str]  # (text, file, region)
READY = "ready"  # what a worker says once cfn-lint is loaded
#: Fewer templates than this are linted by the first worker alone: another would spend ~1.5 s loading
#: cfn-lint for work the first one finishes sooner.
MORE_WORKERS_FROM = 4


def _serve(conn: Connection) -> None:
    """A worker: load cfn-lint's rules, then lint each job received until None arrives."""
    from formwright.template.lint import lint, rules

    with contextlib.suppress(Exception):  # a failure shows again, with its reason, in the first lint()
        rules()
    conn.send(READY)
    while True:
        try:
            job = conn.recv()
        except EOFError:
            return
        if job is None:
            return
        index, (text, file, region) = job
        try:
            conn.send((index, lint(None, file=file, regions=[region], text=text), None))
        except Exception as err:  # noqa: BLE001 - the parent raises it
            conn.send((index, None, f"{type(err).__name__}: {err}\n{traceback.format_exc()}"))


class _Worker:
    def __init__(self, context: Any) -> None:
        self.conn, child = context.Pipe()
        self.process = context.Process(target=_serve, args=(child,), daemon=True, name="formwright-lint")
        self.process.start()
        child.close()
        self.busy = False
        self.ready = False  # cfn-lint loaded: only then is it given work


class LintWorkers:
    """Child processes that lint templates with cfn-lint; the first one starts warming up at once."""

    def __init__(self) -> None:
        methods = multiprocessing.get_all_start_methods()
        # fork: the child has formwright's modules already; elsewhere the default method
        self._context = multiprocessing.get_context("fork" if "fork" in methods else None)
        self._workers: list[_Worker] = []

    def start(self) -> LintWorkers:
        """Fork the first worker (it imports cfn-lint and loads its rules while the caller works)."""
        if not self._workers:
            self._workers.append(_Worker(self._context))
        return self

    def run(self, jobs: list[Job], progress: Callable[[int], None] | None = None) -> list[list[LintFinding]]:
        """The findings of each job, in order; `progress(done)` after each. A job goes to the first worker
        that is ready and free (a worker still loading cfn-lint takes none). A worker's exception is raised
        here as a RuntimeError with its traceback."""
        self.start()
        wanted = min(len(jobs), os.cpu_count() or 1) if len(jobs) >= MORE_WORKERS_FROM else 1
        while len(self._workers) < wanted:
            self._workers.append(_Worker(self._context))
        results: dict[int, list[LintFinding]] = {}
        todo = list(enumerate(jobs))
        while len(results) < len(jobs):
            for worker in self._workers:
                if worker.ready and not worker.busy and todo:
                    worker.conn.send(todo.pop(0))
                    worker.busy = True
            waiting = [worker for worker in self._workers if worker.busy or not worker.ready]
            by_conn = {worker.conn: worker for worker in waiting}
            by_sentinel = {worker.process.sentinel: worker for worker in waiting}
            for ready in wait([*by_conn, *by_sentinel]):
                worker = by_conn.get(ready) or by_sentinel[ready]  # type: ignore[call-overload]
                try:
                    if ready in by_sentinel and not worker.conn.poll():
                        raise EOFError
                    message = worker.conn.recv()
                except EOFError:
                    worker.process.join()
                    code = worker.process.exitcode
                    raise RuntimeError(f"a cfn-lint worker died (exit code {code})") from None
                if message == READY:
                    worker.ready = True
                    continue
                index, findings, error = message
                worker.busy = False
                if error is not None:
                    raise RuntimeError(f"cfn-lint failed: {error}")
                results[index] = findings
                if progress is not None:
                    progress(len(results))
        return [results[i] for i in range(len(jobs))]

    def close(self) -> None:
        """Stop the workers at once (they keep nothing worth waiting for)."""
        for worker in self._workers:
            worker.process.terminate()
            worker.process.join()
            worker.conn.close()
        self._workers = []
