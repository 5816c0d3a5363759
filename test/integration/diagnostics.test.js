// diagnostics_channel TracingChannels (issue 57, item 2): a subscriber sees each call's start,
// end, asyncStart, asyncEnd and, when it failed, error, on the client and on the peer, for
// requests, streams and events, with a handler on the main thread and in a worker thread; the
// messages carry the method, the endpoint, the attempts and the outcome's code, never
// arguments or results. Nothing is published while nothing subscribes.
import { expect } from 'chai'
import diagnosticsChannel from 'node:diagnostics_channel'
import { harness, rejectsWith } from '../helpers/cluster.js'
import { eventually } from '../helpers/eventually.js'
import { insideOf } from '../../client/client.js'

const WORK = new URL('../fixtures/work.js', import.meta.url)
const NAMES = ['zeromesh:client:request', 'zeromesh:client:stream', 'zeromesh:client:event', 'zeromesh:peer:request', 'zeromesh:peer:stream', 'zeromesh:peer:event']
const SECRET = 'secret-argument-5b1c'

/** Subscribes to every zeromesh channel; returns the events seen, [channel, event, { ...message }], and how to stop. */
function watch () {
  const seen = []
  const subs = NAMES.map((name) => {
    const handlers = Object.fromEntries(['start', 'end', 'asyncStart', 'asyncEnd', 'error'].map((e) => [e, (m) => seen.push([name, e, { ...m, error: m.error === undefined ? undefined : m.error.code }])]))
    diagnosticsChannel.tracingChannel(name).subscribe(handlers)
    return () => diagnosticsChannel.tracingChannel(name).unsubscribe(handlers)
  })
  return { seen, stop: () => subs.forEach((u) => u()) }
}
const events = (seen, name) => seen.filter((x) => x[0] === name).map((x) => x[1])

describe('diagnostics channels (issue 57, item 2)', function () {
  this.timeout(20000)
  const h = harness()
  let w = null
  afterEach(async () => { w?.stop(); w = null; await h.cleanup() })

  it('a request, a failed request, a stream and an event, on the client and on a main-thread peer', async () => {
    const p = await h.peer({ handlers: { echo: (x) => x, boom: () => { throw Object.assign(new Error('no'), { code: 'E_NO' }) }, async * count ({ n }) { for (let i = 0; i < n; i++) yield i } }, events: { 'cache.drop': () => {} } })
    const c = h.client({ seeds: [p.endpoint] })
    await c.waitFor('echo')
    w = watch()
    await c.request('echo', { secret: SECRET })
    await rejectsWith(c.request('boom', { secret: SECRET }), 'ERR_ZEROMESH_REMOTE')
    for await (const x of c.stream('count', { n: 3 })) void x
    await c.publish('cache.drop', SECRET)
    await eventually(() => expect(events(w.seen, 'zeromesh:peer:event')).to.include('asyncEnd'))
    const lifecycle = ['start', 'end', 'asyncStart', 'asyncEnd']
    expect(events(w.seen, 'zeromesh:client:request')).to.deep.equal([...lifecycle, 'start', 'end', 'error', 'asyncStart', 'asyncEnd'])
    expect(events(w.seen, 'zeromesh:peer:request')).to.deep.equal([...lifecycle, 'start', 'end', 'error', 'asyncStart', 'asyncEnd'])
    expect(events(w.seen, 'zeromesh:client:stream')).to.deep.equal(lifecycle)
    expect(events(w.seen, 'zeromesh:peer:stream')).to.deep.equal(lifecycle)
    expect(events(w.seen, 'zeromesh:client:event')).to.deep.equal(lifecycle)
    expect(events(w.seen, 'zeromesh:peer:event')).to.deep.equal(lifecycle)
    const last = (name) => w.seen.filter((x) => x[0] === name && x[1] === 'asyncEnd')
    expect(last('zeromesh:client:request')[0][2]).to.include({ method: 'echo', kind: 'request', endpoint: p.endpoint, attempts: 1, code: null })
    expect(last('zeromesh:client:request')[1][2]).to.include({ method: 'boom', code: 'ERR_ZEROMESH_REMOTE', error: 'ERR_ZEROMESH_REMOTE' })
    expect(last('zeromesh:peer:request')[1][2]).to.include({ method: 'boom', kind: 'request', endpoint: p.endpoint, code: 'E_NO' })
    expect(last('zeromesh:peer:stream')[0][2]).to.include({ method: 'count', items: 3, code: null })
    expect(last('zeromesh:client:event')[0][2]).to.include({ method: 'cache.drop', kind: 'event', group: 'cache.drop', code: null })
    expect(JSON.stringify(w.seen)).to.not.include(SECRET) // never arguments, payloads or results
  })

  it('a handler in a worker thread: the main thread publishes zeromesh:peer:request around its hand-off and its answer', async () => {
    const p = await h.peer({ handlers: WORK, threads: 1 })
    const c = h.client({ seeds: [p.endpoint] })
    await c.waitFor('spin')
    w = watch()
    await c.request('spin', { n: 1000 })
    await rejectsWith(c.request('fail'), 'ERR_ZEROMESH_REMOTE')
    expect(events(w.seen, 'zeromesh:peer:request')).to.deep.equal(['start', 'end', 'asyncStart', 'asyncEnd', 'start', 'end', 'error', 'asyncStart', 'asyncEnd'])
    expect(w.seen.filter((x) => x[0] === 'zeromesh:peer:request' && x[1] === 'error')[0][2]).to.include({ method: 'fail', code: 'E_THREAD' })
  })

  it('builds no message while nothing subscribes, and one per call while something does', async () => {
    const p = await h.peer({ handlers: { wait: () => new Promise((resolve) => setTimeout(resolve, 100, 'ok')) } })
    const c = h.client({ seeds: [p.endpoint] })
    await c.waitFor('wait')
    const inFlight = async () => {
      const pending = c.request('wait')
      const [call] = [...insideOf(c).calls.pending.values()]
      await pending
      return call.diagnostics
    }
    for (const name of NAMES) expect(diagnosticsChannel.tracingChannel(name).hasSubscribers).to.equal(false)
    expect(await inFlight()).to.equal(null)
    w = watch()
    expect(await inFlight()).to.include({ method: 'wait', code: null })
  })
})
