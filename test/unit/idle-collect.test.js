// A peer's collection when idle after a burst (peer/idle-collect.js), on the virtual clock and a
// made-up RSS: what a collection gives back is read a tick later, as freed buffers go back to
// the system behind it; read at once, a collection that gave back everything looked like one
// that gave back nothing, the gap doubled, and after a barrage the next one was minutes away.
import { expect } from 'chai'
import { VirtualClock } from '../../testing/virtual-clock.js'
import { collectWhenIdle } from '../../peer/idle-collect.js'

const MB = 1024 * 1024

describe('collection when idle (peer/idle-collect.js)', () => {
  let clock
  beforeEach(() => { clock = new VirtualClock(0) })

  it('a collection whose memory comes back a tick later keeps the gap at its minimum: the next burst is collected 10 s later, not 20', async () => {
    let rss = 100 * MB
    let activity = 0
    let release = null // what the collection frees, given back after it (not yet when it returns)
    const collections = []
    const j = collectWhenIdle({
      activity: () => activity,
      rss: () => rss,
      clock,
      collect: () => { collections.push(clock.now()); release = () => { rss = 100 * MB } },
    })
    // A burst: 150 MB more, then quiet.
    activity++; rss = 250 * MB
    await clock.advance(1000) // activity seen (t = 1 s)
    await clock.advance(2000) // quiet for idleMs: collected (t = 3 s)
    expect(collections).to.have.length(1)
    release() // the memory is given back after the collection, before the next tick
    await clock.advance(1000) // read a tick later: it gave back 150 MB
    // Another burst right away: collected as soon as the minimum gap (10 s) allows.
    activity++; rss = 260 * MB
    await clock.advance(1000)
    await clock.advance(15000)
    expect(collections).to.have.length(2)
    expect(collections[1] - collections[0]).to.be.at.most(12000)
    j.stop()
  })

  it('collections that give back little space out, doubling up to 5 minutes', async () => {
    let rss = 100 * MB
    const collections = []
    const j = collectWhenIdle({ clock, activity: () => 0, rss: () => rss, collect: () => { collections.push(clock.now()) } })
    rss = 200 * MB // held for good: a collection gives none of it back
    await clock.advance(600000)
    const gaps = collections.slice(1).map((t, i) => t - collections[i])
    // Each gave back nothing: 20, 40, 80, 160 s apart (read on the next 1 s tick), then at most 5 minutes.
    gaps.slice(0, 4).forEach((g, i) => expect(g, JSON.stringify(gaps)).to.be.within(20000 * 2 ** i, 20000 * 2 ** i + 1000))
    expect(Math.max(...gaps)).to.be.at.most(301000)
    j.stop()
  })
})
