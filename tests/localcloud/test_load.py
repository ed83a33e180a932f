"""The local cloud under parallel clients (issue 30): 8 clients x 30 rounds of create/update/delete on
40 stacks, with 0 HTTP 500s, 0 stuck names and the final state equal to what the operations said.

`FORMWRIGHT_LOAD_ROUNDS` sets the rounds (default 30); bench/load.py prints the throughput. Before
the state lock, this load failed with HTTP 500s (`RuntimeError: OrderedDict mutated during
iteration` from ExecuteChangeSet dropping a stack's other change sets while another request listed
them) and left names that took no new stack.
"""

from __future__ import annotations

import os

from tests.localcloud import load


def test_parallel_clients_leave_the_state_the_operations_said(cloud) -> None:
    rounds = int(os.environ.get("FORMWRIGHT_LOAD_ROUNDS", "30"))
    outcome = load.run(cloud.endpoint, clients=8, rounds=rounds, stacks=40)
    print(f"{outcome.operations} stack operations, {outcome.calls} calls in {outcome.seconds:.1f} s: "
          f"{outcome.operations / outcome.seconds:.1f} operations/s, {outcome.calls / outcome.seconds:.1f} "
          "calls/s")
    assert outcome.server_errors == []
    assert outcome.failures == []
    assert outcome.operations == 8 * rounds
    assert load.check(cloud.endpoint, outcome) == []
