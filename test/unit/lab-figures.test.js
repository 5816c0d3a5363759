// The lab's arithmetic (bench/cluster/lab/figures.js): the spread it reports and which deaths it
// counts as false. A death the lab caused must never count as false, and a live, reachable
// peer declared dead must never be excused.
import { expect } from 'chai'
import { spread, classifyDeaths, deathsAroundRestarts, addOutcomes, failedCount, FAULT_GRACE_MS } from '../../bench/cluster/lab/figures.js'

describe('the lab\'s figures', () => {
  it('spread: the busiest and the 99th percentile over the mean', () => {
    const s = spread([...Array(99).fill(100), 200])
    expect(s.mean).to.equal(101)
    expect(s.maxOverMean).to.be.closeTo(200 / 101, 1e-9)
    expect(s.p99OverMean).to.be.closeTo(100 / 101, 1e-9) // the 99th of 100 values is the 99th smallest
    expect(spread([5, 5, 5]).maxOverMean).to.equal(1)
  })

  describe('deaths', () => {
    const hostOf = (ep) => ep.split('@')[1]
    const at = 10000
    const d = (viewer, endpoint, when = at) => ({ viewer, endpoint, at: when })

    it('a death of a peer on a host the lab killed is caused, from the kill until the grace after its return', () => {
      const faults = [{ kind: 'down', hosts: new Set(['h2']), from: 5000, to: 20000 }]
      const { caused, falseDeaths } = classifyDeaths([d('p@h1', 'q@h2'), d('p@h1', 'q@h2', 20000 + FAULT_GRACE_MS - 1)], faults, hostOf)
      expect(caused).to.have.length(2)
      expect(falseDeaths).to.have.length(0)
    })

    it('before the fault, after its grace, or of another host: false', () => {
      const faults = [{ kind: 'down', hosts: new Set(['h2']), from: 5000, to: 20000 }]
      const { falseDeaths } = classifyDeaths([d('p@h1', 'q@h2', 4999), d('p@h1', 'q@h2', 20000 + FAULT_GRACE_MS + 1), d('p@h1', 'r@h3')], faults, hostOf)
      expect(falseDeaths).to.have.length(3)
    })

    it('a cut excuses deaths across it only; a blackhole excuses deaths of and by its host', () => {
      const cut = [{ kind: 'cut', hosts: new Set(['h2', 'h3']), from: 0, to: null }]
      const across = classifyDeaths([d('p@h1', 'q@h2'), d('q@h2', 'p@h1'), d('q@h2', 'r@h3'), d('p@h1', 's@h4')], cut, hostOf)
      expect(across.caused.map((x) => x.viewer + '>' + x.endpoint)).to.deep.equal(['p@h1>q@h2', 'q@h2>p@h1'])
      expect(across.falseDeaths).to.have.length(2) // within a side: both reachable
      const hole = [{ kind: 'blackhole', hosts: new Set(['h2']), from: 0, to: null }]
      const b = classifyDeaths([d('p@h1', 'q@h2'), d('q@h2', 'p@h1'), d('p@h1', 'r@h3')], hole, hostOf)
      expect(b.caused).to.have.length(2)
      expect(b.falseDeaths).to.deep.equal([d('p@h1', 'r@h3')])
    })

    it('a peer gone after a graceful stop: its old incarnation\'s death is true, however late; the new one\'s, one still draining, or one of unknown incarnation is false', () => {
      const faults = [{ kind: 'gone', hosts: new Set(['h2']), from: 3000, to: 5000 }, { kind: 'down', hosts: new Set(['h3']), from: 0, to: null }]
      const old = (when) => ({ ...d('p@h1', 'q@h2', when), incarnation: 100 })
      const late = old(5000 + 10 * FAULT_GRACE_MS)
      const deaths = [old(4000), late, { ...d('p@h1', 'q@h2', 6000), incarnation: 4000 }, d('p@h1', 'q@h2', 4000), old(2999), { ...d('p@h1', 'r@h3'), incarnation: 100 }]
      const { caused, falseDeaths, unheardLeaves } = classifyDeaths(deaths, faults, hostOf)
      expect(caused).to.deep.equal([old(4000), late, { ...d('p@h1', 'r@h3'), incarnation: 100 }])
      expect(falseDeaths).to.have.length(3)
      expect(unheardLeaves).to.deep.equal([old(4000), late]) // the killed host's death is no unheard leave
    })

    it('against graceful restarts: draining, down, back within the grace, or other', () => {
      const restarts = [{ host: 'h2', stop: 1000, exited: 3000, ready: 5000 }, { host: 'h3', stop: 8000, exited: 9000, ready: null }]
      const list = [d('p@h1', 'q@h2', 2000), d('p@h1', 'q@h2', 4000), d('p@h1', 'q@h2', 5000 + FAULT_GRACE_MS), d('p@h1', 'q@h2', 5001 + FAULT_GRACE_MS),
        d('p@h1', 'q@h2', 999), d('p@h1', 'r@h3', 9500), d('p@h1', 's@h4', 2000)]
      expect(deathsAroundRestarts(list, restarts, hostOf)).to.deep.equal({ draining: 1, down: 2, back: 1, backNew: 0, other: 3 })
      const reborn = { ...d('p@h1', 'q@h2', 6000), incarnation: 4000 } // born after the old process exited (3000)
      expect(deathsAroundRestarts([reborn, { ...reborn, incarnation: 100 }], restarts, hostOf)).to.deep.equal({ draining: 0, down: 0, back: 1, backNew: 1, other: 0 })
    })
  })

  it('outcomes add up by kind and code', () => {
    const a = {}
    addOutcomes(a, { idempotent: { ok: 2, failed: { X: 1 } }, nonIdempotent: { ok: 1, failed: { Y: 2 }, inDoubt: 2 } })
    addOutcomes(a, { idempotent: { ok: 3, failed: { X: 2, Z: 1 } }, publish: { ok: 4, failed: {} } })
    expect(a.idempotent).to.deep.equal({ ok: 5, failed: { X: 3, Z: 1 }, inDoubt: 0 })
    expect(a.nonIdempotent.inDoubt).to.equal(2)
    expect(failedCount(a.idempotent)).to.equal(4)
    expect(failedCount(a.publish)).to.equal(0)
  })
})
