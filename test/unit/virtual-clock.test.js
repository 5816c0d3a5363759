// The virtual clock's waits for tests (testing/virtual-clock.js): settle() gives a promise's
// outcome at the time it came, until() a condition's; both bounded in the clock's own time.
import { expect } from 'chai'
import { VirtualClock } from '../../testing/virtual-clock.js'
import { TimeoutError } from '../../index.js'

const after = (clock, ms, value) => new Promise((resolve) => clock.setTimeout(() => resolve(value), ms))

describe('VirtualClock: settle() and until()', () => {
  it('settle() gives the value when it comes, time moved on a step at a time', async () => {
    const clock = new VirtualClock()
    expect(await clock.settle(after(clock, 42, 'x'))).to.equal('x')
    expect(clock.now()).to.equal(45) // the step (5 ms) that passed 42
    expect(await clock.settle(after(clock, 7, 'y'), { step: 1 })).to.equal('y')
    expect(clock.now()).to.equal(52)
    expect(await clock.settle('now')).to.equal('now') // a value, or a promise already settled: no time passes
    expect(clock.now()).to.equal(52)
  })

  it('settle() rejects with the promise\'s error, and with a TimeoutError when it does not settle within its bound', async () => {
    const clock = new VirtualClock()
    const failing = new Promise((resolve, reject) => clock.setTimeout(() => reject(new Error('no')), 30))
    let err = await clock.settle(failing).catch((e) => e)
    expect(err.message).to.equal('no')
    err = await clock.settle(new Promise(() => {}), { within: 200 }).catch((e) => e)
    expect(err).to.be.instanceOf(TimeoutError)
    expect(err.code).to.equal('ERR_ZEROMESH_TIMEOUT')
    expect(clock.now()).to.equal(30 + 200)
  })

  it('until() returns once the condition holds, and throws its last error past its bound', async () => {
    const clock = new VirtualClock()
    let ticks = 0
    clock.setTimeout(function tick () { ticks++; clock.setTimeout(tick, 10) }, 10)
    expect(await clock.until(() => { expect(ticks).to.be.at.least(3); return ticks })).to.equal(3)
    expect(clock.now()).to.equal(30)
    const err = await clock.until(() => expect(ticks).to.equal(-1), { within: 100 }).catch((e) => e)
    expect(err.message).to.match(/expected \d+ to equal -1/)
    expect(clock.now()).to.equal(130)
    expect(await clock.until(async () => 'async fine')).to.equal('async fine')
  })
})
