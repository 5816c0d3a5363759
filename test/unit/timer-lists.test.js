import { expect } from 'chai'
import FakeTimers from '@sinonjs/fake-timers'
import { TimerLists } from '../../client/timer-lists.js'

// The client's shared timers for deadlines and attempt limits, on a fake clock.
function setup (onFire) {
  const fake = FakeTimers.createClock(0)
  let armed = 0
  const clock = {
    now: () => fake.now,
    setTimeout: (fn, ms) => { armed++; return fake.setTimeout(fn, ms) },
    clearTimeout: (t) => fake.clearTimeout(t),
  }
  const fired = []
  const timers = new TimerLists(clock, (item) => { fired.push([item, fake.now]); onFire?.(item, timers, fake) })
  return { fake, timers, fired, armed: () => armed }
}

describe('timer lists', () => {
  it('fires each item once, at its time, and never a removed one', () => {
    const { fake, timers, fired } = setup()
    const a = timers.add('a', 10)
    timers.add('b', 11)
    const c = timers.add('c', 5)
    fake.tick(2)
    timers.add('d', 28) // due at 30
    timers.add('e', 8) //  due at 10, in the list of delay 8
    timers.remove(a)
    fake.tick(2)
    expect(fired).to.deep.equal([])
    fake.tick(100)
    expect(fired).to.deep.equal([['c', 5], ['e', 10], ['b', 11], ['d', 30]])
    timers.remove(c) // already fired: nothing happens
    expect(timers.size).to.equal(0)
    expect(fake.countTimers()).to.equal(0) // nothing left armed
  })

  it('keeps one clock timer, re-armed only for an earlier time', () => {
    const { fake, timers, fired, armed } = setup()
    for (let i = 0; i < 1000; i++) timers.add(i, 100 + (i % 50))
    expect(armed()).to.equal(1)
    timers.add('early', 20)
    expect(armed()).to.equal(2)
    expect(fake.countTimers()).to.equal(1)
    fake.tick(200)
    expect(fired).to.have.length(1001)
    expect(fired[0]).to.deep.equal(['early', 20])
  })

  it('at steady load wakes about once per delay, and holds only what is pending', () => {
    const { fake, timers, fired, armed } = setup()
    // Requests answered long before their deadline, one every millisecond for 5 s.
    for (let t = 0; t < 5000; t++) {
      const timer = timers.add(t, 1000)
      fake.tick(1)
      timers.remove(timer)
    }
    fake.tick(2000)
    expect(fired).to.deep.equal([])
    expect(armed()).to.be.at.most(7)
    expect(timers.size).to.equal(0)
    expect(timers.lists.size).to.equal(1)
  })

  it('schedules items added while firing, including ones due at once', () => {
    const { fake, timers, fired } = setup((item, t, f) => {
      if (item === 'first') { t.add('again-now', 0); t.add('later', 7) }
    })
    timers.add('first', 3)
    timers.add('other', 50)
    fake.tick(100)
    expect(fired).to.deep.equal([['first', 3], ['again-now', 3], ['later', 10], ['other', 50]])
  })

  it('drops emptied lists beyond a few, so many distinct delays do not pile up', () => {
    const { fake, timers, fired } = setup()
    const handles = []
    for (let d = 1; d <= 200; d++) handles.push([d, timers.add(d, 1000 + d)])
    for (const [, timer] of handles) timers.remove(timer)
    expect(timers.lists.size).to.be.at.most(16)
    fake.tick(5000)
    expect(fired).to.deep.equal([])
  })

  it('clear() drops every timer', () => {
    const { fake, timers, fired } = setup()
    timers.add('x', 5)
    timers.clear()
    fake.tick(10)
    expect(fired).to.deep.equal([])
    expect(fake.countTimers()).to.equal(0)
  })
})
