"""The Python client's failover policy (zeromesh.failover.decide) by protocol/failover-table.json,
the table the Node client's tests read too (test/unit/failover-table.test.js): the two clients
decide alike, case by case."""
import json

from conftest import ROOT
from zeromesh.errors import ZeromeshError
from zeromesh.failover import Call, decide

TABLE = json.loads((ROOT / "protocol" / "failover-table.json").read_text())


class Budget:
    def __init__(self, left):
        self.left = left

    def withdraw(self):
        if self.left <= 0:
            return False
        self.left -= 1
        return True


def test_each_case_of_the_shared_table():
    assert len(TABLE["cases"]) >= 20
    for c in TABLE["cases"]:
        last = c.get("last")
        call = Call(attempts=c["attempts"], idempotent=c["idempotent"], method="m", losses=c.get("losses", 0), ended_thread=c.get("endedThread", False),
                    last_error=None if last is None else ZeromeshError(last["code"], code=last["code"], retryable=last["retryable"]))
        peer_error = ZeromeshError("worker exited with code 3", code="peer")
        d = decide(call, c["outcome"], max_attempts=TABLE["maxAttempts"], withdraw=Budget(c["budget"]).withdraw, random=lambda: TABLE["random"],
                   endpoint="tcp://127.0.0.1:1", error=peer_error)
        got = {"action": d.action}
        if d.action == "retry":
            got["delay"] = d.delay
        if d.action == "fail":
            got["code"] = d.error.code
        if d.budget_spent:
            got["budgetSpent"] = True
        assert got == c["want"], c["why"]
