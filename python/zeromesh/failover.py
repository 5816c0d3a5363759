"""The failover policy, written down once, as the Node client's (client/failover.js): when an
attempt ends without an answer, the first rule that matches decides what happens to the call.

  0. refused with an error that says a retry makes no sense (`retryable` False) -> fail with it
  T. the worker running it on the peer ended: an idempotent call that ended none before goes
     to another peer at once, within max_attempts and the budget; any other fails with the
     peer's error (a request that kills every worker it reaches takes down two, never all)
  1. it used max_attempts (an attempt lost with its peer not counted) -> refused: fail with
     why; lost: fail ConnectionLostError; timed out: keep waiting for the answer
  2. its connection was lost, and it is not idempotent -> fail ConnectionLostError
  3. its attempt timed out and it is not idempotent -> keep waiting
  4. its connection was lost for the first time -> another peer, outside the retry budget
  5. the retry budget is spent -> as 1, saying the budget stopped it (budget_spent)
  6. otherwise -> a peer not tried yet: at once when refused, after a jittered pause in doubt

decide() writes to nothing: it reads the call and whether the retry budget has a retry left,
and returns the decision: a retry that draws on the budget says so (`spend`), for the caller
to take, and one the budget stopped says so (`budget_spent`). A pure function, tested by
protocol/failover-table.json, the table the Node client's tests read too."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from .errors import ConnectionLostError

REFUSED, LOST, ATTEMPT_TIMEOUT, THREAD_ENDED = "refused", "lost", "attempt-timeout", "thread-ended"
JITTER_MS = 20  # in-doubt retries spread over this, so a crowd of them does not land at once


@dataclass(frozen=True)
class Call:
    """What decide() reads of a call."""

    attempts: int
    idempotent: bool
    method: str
    last_error: Exception | None = None
    losses: int = 0
    ended_thread: bool = False


@dataclass(frozen=True)
class Decision:
    action: str  # "retry", "wait" or "fail"
    delay: int = 0  # ms, for a retry
    error: Exception | None = None  # for a fail
    spend: bool = False  # a retry that draws on the retry budget: the caller takes it
    budget_spent: bool = False


def decide(call: Call, outcome: str, *, max_attempts: int, budget_left: bool, random: Callable[[], float],
           endpoint: str, error: Exception | None = None) -> Decision:
    refused = outcome == REFUSED

    def lost(why: str) -> Exception:
        return ConnectionLostError(f'zeromesh: lost the connection to {endpoint} while "{call.method}" was in flight; {why}, and it may or may not have run',
                                   retryable=call.idempotent)

    def give_up(why: str, spent: bool = False) -> Decision:
        if refused:
            return Decision("fail", error=call.last_error, budget_spent=spent)
        if outcome == LOST:
            return Decision("fail", error=lost(why), budget_spent=spent)
        return Decision("wait", budget_spent=spent)

    def jitter() -> int:
        return int(random() * JITTER_MS)

    if refused and call.last_error is not None and getattr(call.last_error, "retryable", True) is False:
        return Decision("fail", error=call.last_error)
    counted = call.attempts - (1 if call.losses > 0 else 0)  # the first attempt lost with its connection is not counted
    if outcome == THREAD_ENDED:
        if not call.idempotent or call.ended_thread or counted >= max_attempts:
            return Decision("fail", error=error)
        if not budget_left:
            return Decision("fail", error=error, budget_spent=True)
        return Decision("retry", delay=0, spend=True)
    if counted >= max_attempts:
        return give_up(f"it used its {max_attempts} attempts (max_attempts), besides one lost with its peer")
    if outcome == LOST and not call.idempotent:
        return Decision("fail", error=lost("it is not idempotent, so it was not retried"))
    if outcome == ATTEMPT_TIMEOUT and not call.idempotent:
        return Decision("wait")
    if outcome == LOST and call.losses == 0:
        return Decision("retry", delay=jitter())
    if not budget_left:
        return give_up("the retry budget was spent (many retries lately: a sick cluster is not stormed), so it was not retried", True)
    return Decision("retry", delay=0 if refused else jitter(), spend=True)


