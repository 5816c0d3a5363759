// The failover policy (client/failover.js) by a table: decide() reads the call and returns the
// decision, writing nothing to the call; a refusal's error says whether a retry makes sense
// (`retryable`), and the retry budget's refusal is told (budgetSpent), not written.
import { expect } from 'chai'
import { decide, Outcome } from '../../client/failover.js'
import { BusyError, DrainingError, UnknownMethodError, HandshakeError } from '../../protocol/errors.js'

const budget = (left) => ({ left, withdraw () { if (this.left <= 0) return false; this.left--; return true } })

describe('the failover policy (client/failover.js decide)', () => {
  it('decides by the table, and writes nothing to the call', () => {
    const busy = new BusyError('busy')
    const draining = new DrainingError('draining')
    const notServed = new UnknownMethodError('not here', { retryable: true })
    const refusedKey = new HandshakeError('key refused')
    const table = [
      // [attempts, idempotent, outcome, lastError, budget left, losses] -> [action, code or delay, budgetSpent]
      [[1, false, Outcome.REFUSED, draining, 5], ['retry', 0]], //             refused: never ran, retried whatever its idempotency
      [[1, false, Outcome.REFUSED, notServed, 5], ['retry', 0]], //           another peer may serve it
      [[1, true, Outcome.REFUSED, refusedKey, 5], ['fail', 'ERR_ZEROMESH_HANDSHAKE']], // not retryable: fails at once, no budget spent
      [[3, true, Outcome.REFUSED, busy, 5], ['fail', 'ERR_ZEROMESH_BUSY']], //  maxAttempts used
      [[3, true, Outcome.LOST, null, 5], ['fail', 'ERR_ZEROMESH_CONNECTION_LOST']], // no loss before: three attempts used
      [[3, true, Outcome.LOST, null, 5, 1], ['retry', 10]], //                  one was lost with its peer: not counted
      [[3, true, Outcome.ATTEMPT_TIMEOUT, null, 5], ['wait']],
      [[1, false, Outcome.LOST, null, 5], ['fail', 'ERR_ZEROMESH_CONNECTION_LOST']], // may have run: not retried
      [[1, false, Outcome.ATTEMPT_TIMEOUT, null, 5], ['wait']],
      [[1, true, Outcome.LOST, null, 5], ['retry', 10]], //                    in doubt: after a jittered pause
      [[1, true, Outcome.ATTEMPT_TIMEOUT, null, 5], ['retry', 10]],
      [[1, true, Outcome.LOST, null, 0, 1], ['fail', 'ERR_ZEROMESH_CONNECTION_LOST', true]], // lost again, and the budget is spent
      [[1, true, Outcome.LOST, null, 0, 0], ['retry', 10]], //                 lost the first time: moved outside the budget (a crash hands back its queue)
      [[2, true, Outcome.LOST, null, 5, 1], ['retry', 10]], //                 lost again: from the budget
      [[1, true, Outcome.ATTEMPT_TIMEOUT, null, 0], ['wait', undefined, true]],
      [[1, false, Outcome.REFUSED, draining, 0], ['fail', 'ERR_ZEROMESH_DRAINING', true]],
    ]
    for (const [[attempts, idempotent, outcome, lastError, left, losses = 0], want] of table) {
      const call = Object.freeze({ attempts, idempotent, method: 'm', lastError, losses }) // frozen: a write would throw
      const d = decide(call, outcome, { maxAttempts: 3, budget: budget(left), random: () => 0.5, endpoint: 'tcp://127.0.0.1:1' })
      const got = [d.action, d.action === 'fail' ? d.error.code : d.action === 'retry' ? d.delay : undefined, d.budgetSpent]
      expect(got.slice(0, want.length === 3 ? 3 : 2), JSON.stringify([attempts, idempotent, outcome, lastError?.code, left])).to.deep.equal(want.length === 1 ? [...want, undefined] : want)
      if (want.length < 3) expect(d.budgetSpent).to.equal(undefined)
    }
  })

  it('a thread that ended under a call (rule T): an idempotent call that ended none before goes elsewhere at once; else it fails with the peer\'s error', () => {
    const exit = new Error('handler thread exited with code 3')
    const at = (attempts, idempotent, endedThread, left) => decide(Object.freeze({ attempts, idempotent, endedThread, losses: 0, method: 'm', lastError: null }), Outcome.THREAD_ENDED, { maxAttempts: 3, budget: budget(left), random: () => 0.5, endpoint: 'tcp://127.0.0.1:1', error: exit })
    expect(at(1, true, false, 5)).to.deep.equal({ action: 'retry', delay: 0 })
    expect(at(1, true, true, 5)).to.deep.equal({ action: 'fail', error: exit }) //   a second thread: a poison request
    expect(at(1, false, false, 5)).to.deep.equal({ action: 'fail', error: exit }) // its handler ran: not again
    expect(at(3, true, false, 5)).to.deep.equal({ action: 'fail', error: exit }) //  maxAttempts
    expect(at(1, true, false, 0)).to.deep.equal({ action: 'fail', error: exit, budgetSpent: true })
  })

  it('a lost call that is not retried says why, and is retryable (safe to send again) when it is idempotent', () => {
    const at = (attempts, idempotent, left, losses) => decide(Object.freeze({ attempts, idempotent, method: 'm', lastError: null, losses }), Outcome.LOST, { maxAttempts: 3, budget: budget(left), random: () => 0.5, endpoint: 'tcp://127.0.0.1:1' }).error
    const spent = at(1, true, 0, 1)
    expect([spent.message, spent.retryable]).to.satisfy(([m, r]) => /retry budget was spent/.test(m) && r === true)
    expect(at(4, true, 5, 1).message).to.match(/used its 3 attempts \(maxAttempts\), besides one lost with its peer/)
    expect(at(3, true, 5, 1)).to.equal(undefined) // the loss is not counted: a fourth attempt (a retry)
    const once = at(1, false, 5, 0)
    expect([/not idempotent/.test(once.message), once.retryable]).to.deep.equal([true, false])
  })
})
