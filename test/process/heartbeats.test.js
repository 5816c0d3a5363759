// Heartbeats of a connecting socket in protocol PINGs (transport/heartbeats.js), on a virtual
// clock; then the real connector against a peer process that is frozen and thawed: the
// silence is noticed, the connection made anew, and the PONGs never reach the caller.
import { expect } from 'chai'
import { Heartbeats, HEARTBEAT_SEQ } from '../../transport/heartbeats.js'
import { ZmqConnector } from '../../transport/zmq-connector.js'
import { VirtualClock } from '../../testing/virtual-clock.js'
import { Questions } from '../../transport/questions.js'
import { encodeMembersGet } from '../../protocol/codec.js'
import { startPeer, killAll } from '../helpers/processes.js'
import { eventually } from '../helpers/eventually.js'

function watched (o = {}) {
  const clock = new VirtualClock()
  const pings = []
  const silent = []
  const hb = new Heartbeats({ interval: 100, timeout: 300, clock, ping: (ep) => pings.push([clock.now(), ep]), silent: (ep, ms) => silent.push([clock.now(), ep, ms]), ...o })
  return { clock, hb, pings, silent }
}

describe('heartbeats (transport/heartbeats.js)', () => {
  it('a silent connection gets a PING each interval and is dead after the timeout; watching stops there', async () => {
    const { clock, hb, pings, silent } = watched()
    hb.up('a')
    await clock.advance(1000)
    expect(pings).to.deep.equal([[100, 'a'], [200, 'a']])
    expect(silent).to.deep.equal([[300, 'a', 300]])
    expect(hb.timer).to.equal(null) // nothing left to watch: no timer
  })

  it('a connection that receives gets no PING and never goes silent', async () => {
    const { clock, hb, pings, silent } = watched()
    hb.up('a')
    for (let t = 0; t < 20; t++) { hb.heard('a'); await clock.advance(50) }
    expect(pings).to.deep.equal([])
    expect(silent).to.deep.equal([])
    // then it stops answering (its last message at 950): silence is counted from the first
    // look after it (975; a look each quarter of the interval)
    await clock.advance(1000)
    expect(silent).to.have.length(1)
    expect(silent[0][2]).to.equal(300)
    expect(pings.map(([t]) => t)).to.deep.equal([1075, 1175])
  })

  it('one answer to a PING resets the silence; down() and stop() end the watch', async () => {
    const { clock, hb, pings, silent } = watched()
    hb.up('a')
    hb.up('b')
    await clock.advance(250)
    hb.heard('a') // a PONG
    await clock.advance(100) // b: silent 300 ms at t=300
    expect(silent.map(([, ep]) => ep)).to.deep.equal(['b'])
    hb.down('a')
    await clock.advance(1000)
    expect(silent.map(([, ep]) => ep)).to.deep.equal(['b'])
    hb.up('c')
    hb.stop()
    await clock.advance(1000)
    expect(pings.filter(([, ep]) => ep === 'c')).to.deep.equal([])
  })

  it('the heartbeat PING uses a seq no question uses: questions number from 1 and wrap to 1', () => {
    const q = new Questions({ send: () => {}, clock: new VirtualClock() })
    const seqs = [q.ask('a', () => Buffer.alloc(0), 10, () => {})]
    q.seq = Number.MAX_SAFE_INTEGER
    seqs.push(q.ask('a', () => Buffer.alloc(0), 10, () => {}))
    expect(seqs).to.deep.equal([1, 1])
    expect(seqs).to.not.include(HEARTBEAT_SEQ)
    q.stop()
  })
})

describe('heartbeats on a real connection (ZmqConnector and a peer process)', function () {
  this.timeout(20000)
  let link
  afterEach(async () => {
    await link?.close()
    await killAll()
  })

  it('an idle live peer stays up and its PONGs are not passed on; a frozen one is down after the timeout, then up on a new connection after its thaw', async () => {
    const peer = await startPeer()
    const events = []
    const messages = []
    let pongs = 0
    link = new ZmqConnector({
      maxMessageSize: 1 << 20,
      heartbeatInterval: 100,
      heartbeatTimeout: 600,
      onMessage: (ep, frames) => messages.push(frames),
      onHeartbeat: () => pongs++,
      onUp: (ep) => events.push(['up', Date.now()]),
      onDown: (ep) => events.push(['down', Date.now()]),
    })
    link.connect(peer.endpoint)
    await eventually(() => expect(events.map(([e]) => e)).to.deep.equal(['up']), { timeout: 5000 })
    await eventually(() => expect(pongs).to.be.at.least(10), { timeout: 5000 }) // idle: ten heartbeats answered
    expect(events.map(([e]) => e)).to.deep.equal(['up'])
    expect(messages).to.deep.equal([])
    // an ordinary answer still reaches the caller
    await new Promise((resolve) => link.send(peer.endpoint, [encodeMembersGet(7)], resolve))
    await eventually(() => expect(messages).to.have.length(1), { timeout: 2000 })

    process.kill(peer.pid, 'SIGSTOP')
    const frozenAt = Date.now()
    await eventually(() => expect(events.map(([e]) => e)).to.deep.equal(['up', 'down']), { timeout: 3000, interval: 20 })
    const noticed = events[1][1] - frozenAt
    expect(noticed).to.be.at.least(500).and.below(2000)
    process.kill(peer.pid, 'SIGCONT')
    await eventually(() => expect(events.map(([e]) => e).slice(0, 3)).to.deep.equal(['up', 'down', 'up']), { timeout: 5000, interval: 20 })
    expect(peer.signal ?? null).to.equal(null)
  })
})
