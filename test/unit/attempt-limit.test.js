// The attempt limit's arithmetic (client/attempt-limit.js), by tables, with no clock.
import { expect } from 'chai'
import { attemptLimit, queuedLimit, answering, nextStep, queuedWaves } from '../../client/attempt-limit.js'

describe('the attempt limit (client/attempt-limit.js)', () => {
  it('attemptLimit: { step, until } or null, by the call and what is known of the method and the peer', () => {
    const table = [
      // [idempotent, given, remaining, estimate, waves] -> limit
      [[false, 'auto', 1000, 10, 0], null], //                   not retried after a timeout: no limit
      [[false, 300, 1000, 10, 0], null],
      [[true, 300, 1000, null, 0], { step: 300, until: 300 }], // a fixed limit, before the deadline
      [[true, 300, 0, null, 0], { step: 300, until: 300 }], //    no deadline at all
      [[true, 300, 300, null, 0], null], //                      not before the deadline: none
      [[true, 'auto', 5000, null, 0], { step: 1250, until: Infinity }], // a method never measured: 1/4 of the time left, renewed to the deadline
      [[true, 'auto', 1000, undefined, 0], { step: 250, until: Infinity }],
      [[true, 'auto', 300, null, 0], { step: 100, until: Infinity }], // at least 100 ms
      [[true, 'auto', 100, null, 0], null], //                   the step would not come first
      [[true, 'auto', 0, null, 0], null], //                     never measured, no deadline: none
      [[true, 'auto', 1000, 5, 0], { step: 100, until: 100 }], // at least 100 ms
      [[true, 'auto', 1000, 30, 0], { step: 170, until: 170 }], // 4 x 30 + 50
      [[true, 'auto', 1000, 31, 0], { step: 180, until: 180 }], // in 10 ms steps, rounded up
      [[true, 'auto', 5000, 30, 2], { step: 170, until: 410 }], // two waves ahead: 4 x 30 x 3 + 50
      [[true, 'auto', 300, 30, 2], { step: 170, until: Infinity }], // until past the deadline: the whole deadline
      [[true, 'auto', 170, 30, 0], null], //                     the step would not come first
      [[true, 'auto', 0, 30, 2], { step: 170, until: 410 }], //  no deadline
    ]
    for (const [[idempotent, given, remaining, estimate, waves], want] of table) {
      expect(attemptLimit({ idempotent, given, remaining, estimate, waves }), JSON.stringify([idempotent, given, remaining, estimate, waves])).to.deep.equal(want)
    }
  })

  it('queuedWaves: the work past the capacity a peer declared, in units of it', () => {
    const table = [
      // [capacity, others, load] -> waves
      [[undefined, 10, 10], 0], // no capacity declared
      [[null, 10, 10], 0],
      [[2, 0, 50], 0], //          no other call of this client there: taken ahead of waiting flows
      [[2, 1, 0], 0], //           not full
      [[2, 2, 0], 0],
      [[2, 6, 0], 2], //           its own calls: 4 past 2
      [[2, 1, 6], 2], //           the load it reported, when larger
      [[4, 5, undefined], 0.25],
    ]
    for (const [[capacity, others, load], want] of table) expect(queuedWaves(capacity, others, load), JSON.stringify([capacity, others, load])).to.equal(want)
  })

  it('queuedLimit, answering and nextStep: the renewal of an auto step', () => {
    expect(queuedLimit(30, 0)).to.equal(170)
    expect(queuedLimit(30, 1)).to.equal(290)
    expect(queuedLimit(0.2, 0)).to.equal(60)
    const heard = [
      // [now, heardAt, step] -> answering
      [[1000, 990, 100], true], //   heard 10 ms ago
      [[1000, 951, 100], true], //   within 50 ms
      [[1000, 950, 100], false],
      [[1000, 901, 200], true], //   within half a step
      [[1000, 900, 200], false],
    ]
    for (const [[now, heardAt, step], want] of heard) expect(answering(now, heardAt, step), JSON.stringify([now, heardAt, step])).to.equal(want)
    expect(nextStep(1000, 1500, 170)).to.equal(170) // a whole step left
    expect(nextStep(1000, 1085, 170)).to.equal(90) //  what is left, in 10 ms steps
    expect(nextStep(1000, 1002, 170)).to.equal(10) //  at least 10
  })
})
