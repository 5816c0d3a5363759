// The failover policy (client/failover.js decide) by protocol/failover-table.json, the table
// the Python client's tests read too (python/tests/test_failover_table.py): the two clients
// decide alike, case by case.
import { expect } from 'chai'
import { readFileSync } from 'node:fs'
import { decide } from '../../client/failover.js'
import { ZeromeshError } from '../../protocol/errors.js'

const table = JSON.parse(readFileSync(new URL('../../protocol/failover-table.json', import.meta.url), 'utf8'))
const budget = (left) => ({ left, withdraw () { if (this.left <= 0) return false; this.left--; return true } })

describe('the failover policy, by the table both clients read (protocol/failover-table.json)', () => {
  it(`decides each of the ${table.cases.length} cases as the table says, writing nothing to the call`, () => {
    expect(table.cases.length).to.be.at.least(20)
    for (const c of table.cases) {
      const lastError = c.last === undefined ? null : new ZeromeshError(c.last.code, { code: c.last.code, retryable: c.last.retryable })
      const call = Object.freeze({ attempts: c.attempts, losses: c.losses ?? 0, endedThread: c.endedThread ?? false, idempotent: c.idempotent, method: 'm', lastError })
      const peerError = new ZeromeshError('handler thread exited with code 3', { code: 'peer' })
      const d = decide(call, c.outcome, { maxAttempts: table.maxAttempts, budget: budget(c.budget), random: () => table.random, endpoint: 'tcp://127.0.0.1:1', error: peerError })
      const got = { action: d.action }
      if (d.action === 'retry') got.delay = d.delay
      if (d.action === 'fail') got.code = d.error.code
      if (d.budgetSpent) got.budgetSpent = true
      expect(got, c.why).to.deep.equal(c.want)
    }
  })
})
