"""The Python client's failover policy (zeromesh.failover.decide) by protocol/failover-table.json,
the table the Node client's tests read too (test/unit/failover-decide.test.js): the two clients
decide alike, case by case."""
import json

from conftest import ROOT
from zeromesh.errors import ZeromeshError
from zeromesh.failover import Call, decide

TABLE = json.loads((ROOT / "protocol" / "failover-table.json").read_text())


def test_each_case_of_the_shared_table():
    assert len(TABLE["cases"]) >= 20
    assert {c["outcome"] for c in TABLE["cases"]} == {"refused", "lost", "attempt-timeout", "thread-ended"}  # every outcome has cases
    peer_error = ZeromeshError("worker exited with code 3")
    for c in TABLE["cases"]:
        last, k = c["lastError"], c["call"]
        call = Call(attempts=k["attempts"], idempotent=k["idempotent"], method="m", losses=k["losses"], ended_thread=k["endedThread"],
                    last_error=None if last is None else ZeromeshError(last["code"], code=last["code"], retryable=last["retryable"]))
        d = decide(call, c["outcome"], max_attempts=TABLE["maxAttempts"], budget_left=c["budgetLeft"], random=lambda: TABLE["random"],
                   endpoint="tcp://127.0.0.1:1", error=peer_error)
        got = {"action": d.action}
        if d.action == "retry":
            got["delay"] = d.delay
        if d.action == "fail":
            got["code"] = "PEER" if d.error is peer_error else d.error.code
        if d.spend:
            got["spend"] = True
        if d.budget_spent:
            got["budgetSpent"] = True
        assert got == c["want"], c["why"]
