import { expect } from 'chai'
import FakeTimers from '@sinonjs/fake-timers'
import { TimerWheel } from '../client/timer-wheel.js'

// The client's shared timer for deadlines and attempt limits, on a fake clock.
function setup () {
  const fake = FakeTimers.createClock(0)
  let armed = 0
  const clock = {
    now: () => fake.now,
    setTimeout: (fn, ms) => { armed++; return fake.setTimeout(fn, ms) },
    clearTimeout: (t) => fake.clearTimeout(t),
  }
  const fired = []
  const wheel = new TimerWheel(clock, (item) => fired.push([item, fake.now]))
  return { fake, wheel, fired, armed: () => armed }
}

describe('timer wheel', () => {
  it('fires each item once, in its millisecond, and never a removed one', () => {
    const { fake, wheel, fired } = setup()
    const a = wheel.add('a', 10)
    wheel.add('b', 10.2) // rounded up to 11
    const c = wheel.add('c', 5)
    wheel.add('d', 30)
    wheel.remove('a', a)
    fake.tick(4)
    expect(fired).to.deep.equal([])
    fake.tick(100)
    expect(fired).to.deep.equal([['c', 5], ['b', 11], ['d', 30]])
    wheel.remove('c', c) // already fired: nothing happens
    expect(wheel.size).to.equal(0)
    expect(fake.countTimers()).to.equal(0) // nothing left armed
  })

  it('keeps one clock timer, re-armed only for an earlier slot', () => {
    const { fake, wheel, fired, armed } = setup()
    for (let i = 0; i < 1000; i++) wheel.add(i, 100 + (i % 50))
    expect(armed()).to.equal(1)
    wheel.add('early', 20)
    expect(armed()).to.equal(2)
    expect(fake.countTimers()).to.equal(1)
    fake.tick(200)
    expect(fired).to.have.length(1001)
    expect(fired[0]).to.deep.equal(['early', 20])
  })

  it('does not wake for slots emptied before they were due', () => {
    const { fake, wheel, fired, armed } = setup()
    // At steady load requests are answered long before their deadline.
    for (let t = 0; t < 5000; t++) {
      const slot = wheel.add(t, t + 1000)
      fake.tick(1)
      wheel.remove(t, slot)
    }
    fake.tick(2000)
    expect(fired).to.deep.equal([])
    expect(armed()).to.be.below(20)
    expect(wheel.heap.length).to.be.at.most(64)
  })

  it('schedules items added while firing, including ones due at once', () => {
    const fake = FakeTimers.createClock(0)
    const clock = { now: () => fake.now, setTimeout: (fn, ms) => fake.setTimeout(fn, ms), clearTimeout: (t) => fake.clearTimeout(t) }
    const fired = []
    const wheel = new TimerWheel(clock, (item) => {
      fired.push([item, fake.now])
      if (item === 'first') { wheel.add('again-now', fake.now); wheel.add('later', fake.now + 7) }
    })
    wheel.add('first', 3)
    wheel.add('other', 50)
    fake.tick(100)
    expect(fired).to.deep.equal([['first', 3], ['again-now', 3], ['later', 10], ['other', 50]])
  })

  it('clear() drops every timer', () => {
    const { fake, wheel, fired } = setup()
    wheel.add('x', 5)
    wheel.clear()
    fake.tick(10)
    expect(fired).to.deep.equal([])
    expect(fake.countTimers()).to.equal(0)
  })
})
