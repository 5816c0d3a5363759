// Durable events, publish to handled (issue 75, item 4): zeromesh's durable mode (zeromesh/jetstream:
// a Client's publish, a Peer's subscription) against raw @nats-io/jetstream doing the same
// publish / pull-consume / ack with the same MessagePack payload, and against the mesh's own
// acked events (client.publish to a peer's subscription), and against a bridge (the other design:
// one consumer of JetStream that hands each event to a peer through the mesh, an acked mesh
// publish, and acks JetStream after it), each at 1 and 100 in flight (closed
// loops: each publishes, waits for its event to be handled, publishes again). One process
// publishes and handles; nats-server (started here on a loopback ephemeral port, JetStream on,
// a temporary store) runs beside it. Sides alternate round by round; medians of the rounds. The
// peers' idle collector is off: the sides share one process, and an idle side's peer would
// run full collections of the heap the running side uses. Raw connects as zeromesh/jetstream does
// (noAsyncTraces: no Error made for each request's stack), so the ratio is what zeromesh adds.
//   flock /tmp/zeromesh-bench.lock node bench/events/durable.js [--rounds 3] [--duration 3000] [--sides raw,durable,bridge,mesh]
import { connect } from '@nats-io/transport-node'
import { jetstream, jetstreamManager, AckPolicy, DeliverPolicy } from '@nats-io/jetstream'
import { packr, unpackr } from '../../protocol/msgpack.js'
import { Peer, Client } from '../../index.js'
import { durableEvents } from '../../jetstream/index.js'
import { NatsServer } from '../../test/helpers/nats-server.js'

const arg = (name, def) => { const i = process.argv.indexOf(`--${name}`); return i < 0 ? def : Number(process.argv[i + 1]) }
const ROUNDS = arg('rounds', 3)
const DURATION = arg('duration', 3000)
const LEVELS = [1, 100]
const SIDES = (process.argv.includes('--sides') ? process.argv[process.argv.indexOf('--sides') + 1] : 'raw,durable,bridge,mesh').split(',')
const PAYLOAD = { order: 12345, customer: 'c-42', total: 1999, items: [1, 2, 3] }

/** Closed loops of `inflight` for `ms`: { rate, p50, p99 } of publish-to-handled. `one(n)` resolves once event n was handled. */
async function drive (one, inflight, ms) {
  const lat = []
  const cpu0 = process.cpuUsage()
  const end = performance.now() + ms
  let n = 0
  await Promise.all(Array.from({ length: inflight }, async () => {
    while (performance.now() < end) {
      const t0 = performance.now()
      await one(n++)
      lat.push(performance.now() - t0)
    }
  }))
  const cpu = process.cpuUsage(cpu0)
  lat.sort((a, b) => a - b)
  // cpu: this process's CPU (publisher and handler side together, not nats-server's) per event, in µs
  return { rate: lat.length / (ms / 1000), p50: lat[Math.floor(lat.length * 0.5)], p99: lat[Math.floor(lat.length * 0.99)], cpu: (cpu.user + cpu.system) / lat.length }
}

/** Waiters by event key: the handler side calls handled(key). */
function waiters () {
  const map = new Map()
  return {
    wait: (key) => new Promise((resolve) => map.set(key, resolve)),
    handled: (key) => { const r = map.get(key); if (r !== undefined) { map.delete(key); r() } },
  }
}

async function rawSide (url) {
  const nc = await connect({ servers: url, noAsyncTraces: true })
  const jsm = await jetstreamManager(nc)
  await jsm.streams.add({ name: 'RAW', subjects: ['raw.>'], duplicate_window: 120e9 })
  await jsm.consumers.add('RAW', { durable_name: 'raw', ack_policy: AckPolicy.Explicit, filter_subject: 'raw.orders', deliver_policy: DeliverPolicy.New, max_ack_pending: 1000, ack_wait: 10e9 })
  const js = jetstream(nc)
  const w = waiters()
  const messages = await (await js.consumers.get('RAW', 'raw')).consume({ max_messages: 256 })
  ;(async () => { for await (const m of messages) { const p = unpackr.unpack(m.data); w.handled(p.key); m.ack() } })()
  let seq = 0
  return {
    one: async () => {
      const key = `r${seq++}`
      const done = w.wait(key)
      await js.publish('raw.orders', (packr.pack({ ...PAYLOAD, key })), { msgID: key })
      await done
    },
    close: async () => { messages.stop(); await nc.close() },
  }
}

async function durableSide (url) {
  const durable = await durableEvents({ servers: url, events: ['orders.placed'] })
  const w = waiters()
  const peer = new Peer({ collectWhenIdle: false, durable, events: { 'orders.placed': { group: 'billing', handler: (p) => { w.handled(p.key) } } } })
  await peer.start()
  const client = new Client({ seeds: [peer.endpoint], durable })
  let seq = 0
  return {
    one: async () => {
      const key = `d${seq++}`
      const done = w.wait(key)
      await client.publish('orders.placed', { ...PAYLOAD, key }, { id: key })
      await done
    },
    close: async () => { await client.close(); await peer.stop(); await durable.close() },
  }
}

async function bridgeSide (url) {
  const nc = await connect({ servers: url, noAsyncTraces: true })
  const jsm = await jetstreamManager(nc)
  await jsm.streams.add({ name: 'BRIDGE', subjects: ['bridge.>'], duplicate_window: 120e9 })
  await jsm.consumers.add('BRIDGE', { durable_name: 'bridge', ack_policy: AckPolicy.Explicit, filter_subject: 'bridge.orders', deliver_policy: DeliverPolicy.New, max_ack_pending: 1000, ack_wait: 10e9 })
  const js = jetstream(nc)
  const w = waiters()
  const peer = new Peer({ collectWhenIdle: false, events: { 'orders.placed': { group: 'billing', handler: (p) => { w.handled(p.key) } } } })
  await peer.start()
  const client = new Client({ seeds: [peer.endpoint] })
  await client.publish('orders.placed', { ...PAYLOAD, key: 'warm' })
  const messages = await (await js.consumers.get('BRIDGE', 'bridge')).consume({ max_messages: 256 })
  ;(async () => {
    for await (const m of messages) client.publish('orders.placed', unpackr.unpack(m.data)).then(() => m.ack(), () => m.nak())
  })()
  let seq = 0
  return {
    one: async () => {
      const key = `b${seq++}`
      const done = w.wait(key)
      await js.publish('bridge.orders', (packr.pack({ ...PAYLOAD, key })), { msgID: key })
      await done
    },
    close: async () => { messages.stop(); await client.close(); await peer.stop(); await nc.close() },
  }
}

async function meshSide () {
  const peer = new Peer({ collectWhenIdle: false, events: { 'orders.placed': { group: 'billing', handler: () => {} } } })
  await peer.start()
  const client = new Client({ seeds: [peer.endpoint] })
  await client.publish('orders.placed', PAYLOAD) // learned the subscription
  return {
    one: () => client.publish('orders.placed', PAYLOAD), // resolves once the handler finished (acked)
    close: async () => { await client.close(); await peer.stop() },
  }
}

const nats = new NatsServer()
await nats.start()
const make = { raw: () => rawSide(nats.url), durable: () => durableSide(nats.url), bridge: () => bridgeSide(nats.url), mesh: () => meshSide() }
if (!SIDES.includes('raw')) SIDES.unshift('raw') // the baseline of every ratio
const sides = {}
for (const side of SIDES) sides[side] = await make[side]()
const results = {} // side -> level -> [round results]
try {
  for (const side of Object.keys(sides)) await drive(sides[side].one, 10, 500) // warm up
  for (let r = 0; r < ROUNDS; r++) {
    for (const level of LEVELS) {
      const order = r % 2 === 0 ? SIDES : [...SIDES].reverse()
      for (const side of order) {
        const out = await drive(sides[side].one, level, DURATION)
        ;((results[side] ??= {})[level] ??= []).push(out)
        process.stderr.write(`round ${r + 1} ${side} at ${level}: ${Math.round(out.rate)}/s p50 ${out.p50.toFixed(2)} p99 ${out.p99.toFixed(2)} ms, ${out.cpu.toFixed(1)} µs CPU an event\n`)
      }
    }
  }
} finally {
  for (const s of Object.values(sides)) await s.close()
  await nats.close()
}
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)] }
const row = (side, level) => {
  const rs = results[side][level]
  return { rate: median(rs.map((x) => x.rate)), p50: median(rs.map((x) => x.p50)), p99: median(rs.map((x) => x.p99)), cpu: median(rs.map((x) => x.cpu)), ratios: rs.map((x, i) => x.rate / results.raw[level][i].rate) }
}
console.log('| side | in flight | events/s | p50 ms | p99 ms | µs CPU an event (this process) | x raw (median of rounds) |')
console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: |')
for (const level of LEVELS) {
  for (const side of SIDES) {
    const x = row(side, level)
    console.log(`| ${side} | ${level} | ${Math.round(x.rate).toLocaleString('en')} | ${x.p50.toFixed(2)} | ${x.p99.toFixed(2)} | ${x.cpu.toFixed(1)} | ${median(x.ratios).toFixed(2)} |`)
  }
}
