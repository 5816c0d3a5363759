// The failover policy (client/failover.js) by the table both languages' tests read
// (protocol/failover-table.json): decide() reads the call and whether the retry budget has a
// retry left, and returns the decision, writing nothing; a retry that draws on the budget says
// so (spend) for the caller to take, and the budget's refusal is told (budgetSpent).
import { expect } from 'chai'
import { readFileSync } from 'node:fs'
import { decide, Outcome } from '../../client/failover.js'
import { ZeromeshError } from '../../protocol/errors.js'

const TABLE = JSON.parse(readFileSync(new URL('../../protocol/failover-table.json', import.meta.url), 'utf8'))

describe('the failover policy (client/failover.js decide)', () => {
  it('decides every case of the shared table, and writes nothing to the call', () => {
    expect(Object.values(Outcome).sort()).to.deep.equal([...new Set(TABLE.cases.map((c) => c.outcome))].sort()) // every outcome has cases
    const peerError = new Error('handler thread exited with code 3')
    for (const c of TABLE.cases) {
      const lastError = c.lastError === null ? null : Object.assign(new ZeromeshError(c.lastError.code), { code: c.lastError.code, retryable: c.lastError.retryable })
      const call = Object.freeze({ ...c.call, method: 'm', lastError }) // frozen: a write would throw
      const d = decide(call, c.outcome, { maxAttempts: TABLE.maxAttempts, budgetLeft: c.budgetLeft, random: () => TABLE.random, endpoint: 'tcp://127.0.0.1:1', error: peerError })
      const got = { action: d.action }
      if (d.action === 'retry') got.delay = d.delay
      if (d.action === 'fail') got.code = d.error === peerError ? 'PEER' : d.error.code
      if (d.spend !== undefined) got.spend = d.spend
      if (d.budgetSpent !== undefined) got.budgetSpent = d.budgetSpent
      expect(got, c.why).to.deep.equal(c.want)
    }
  })

  it('a lost call that is not retried says why, and is retryable (safe to send again) when it is idempotent', () => {
    const at = (attempts, idempotent, budgetLeft, losses) => decide(Object.freeze({ attempts, idempotent, method: 'm', lastError: null, losses }), Outcome.LOST, { maxAttempts: 3, budgetLeft, random: () => 0.5, endpoint: 'tcp://127.0.0.1:1' }).error
    const spent = at(1, true, false, 1)
    expect([spent.message, spent.retryable]).to.satisfy(([m, r]) => /retry budget was spent/.test(m) && r === true)
    expect(at(4, true, true, 1).message).to.match(/used its 3 attempts \(maxAttempts\), besides one lost with its peer/)
    expect(at(3, true, true, 1)).to.equal(undefined) // the loss is not counted: a fourth attempt (a retry)
    const once = at(1, false, true, 0)
    expect([/not idempotent/.test(once.message), once.retryable]).to.deep.equal([true, false])
  })
})
