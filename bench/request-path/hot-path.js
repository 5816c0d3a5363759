// CPU cost of the lone request path on each side, without sockets or other processes: the
// peer handling one-request frames (decode, duplicates memory, handler, reply packed and
// handed to its transport) and the client doing request() -> frame -> reply -> settled, over
// an in-memory transport that answers at once. At 1 in flight this code runs once per wake-up
// on a cold CPU, where it costs several times what it costs here, so a change that trims it
// trims latency; but socket runs on these noisy machines cannot show a change of a few
// percent, and this can. With --against, rounds alternate between this checkout and another
// (say the commit before a change) and the median of the per-round ratios is printed.
// Usage: node bench/request-path/hot-path.js [--rounds 21] [--requests 10000] [--against DIR]
import { parseArgs } from 'node:util'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { PAYLOAD, anyClientTransport } from '../../bin/bench/harness.js'

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '21' }, requests: { type: 'string', default: '10000' }, against: { type: 'string' } } })
const ROUNDS = Number(values.rounds)
const N = Number(values.requests)
const here = fileURLToPath(new URL('../..', import.meta.url))

/** Both sides of one checkout, ready to be timed. */
async function sides (root) {
  const { Client, Peer } = await import(pathToFileURL(`${root}/index.js`).href)
  const codec = await import(pathToFileURL(`${root}/protocol/codec.js`).href)
  const peer = new Peer({ bind: 'tcp://127.0.0.1:*', handlers: { echo: (args) => args } })
  await peer.start()
  // The peer's insides (its socket's message switch, its transport): a Peer keeps them private
  // since 0.3.0 (insideOf); an older checkout's Peer is its own insides.
  const { insideOf } = await import(pathToFileURL(`${root}/peer/peer.js`).href)
  const core = typeof insideOf === 'function' ? insideOf(peer) : peer
  let sent = 0
  core.transport.send = () => { sent++ } // replies stop here: no socket in the timing
  const clientId = Buffer.from([0, 0, 0, 0, 1]) // a routing id as libzmq makes them
  let nextPeerId = 1

  const replies = [] // prepared for the ids the client will use, in order
  let answered = 0
  const client = new Client({
    seeds: ['tcp://127.0.0.1:1'], // never dialled: the transport below is in memory
    timeout: 30000,
    discover: false,
    transport: anyClientTransport((o) => {
      setImmediate(() => o.onUp('tcp://127.0.0.1:1'))
      return {
        connect () {},
        disconnect () {},
        close: async () => {},
        send (endpoint, frames, done) {
          // A client that asks what the peer serves (type 15) is told "unknown type", as an
          // older peer tells it: it then sends every method there.
          if (frames[0][4] === 15) { queueMicrotask(() => { done(null); o.onMessage(endpoint, [codec.encodeError(2, 'unknown message type 15')]) }); return }
          const reply = replies[answered++]
          queueMicrotask(() => { done(null); o.onMessage(endpoint, [reply]) })
        },
      }
    }),
  })
  await new Promise((resolve) => setTimeout(resolve, 20))
  const clientInsides = (await import(pathToFileURL(`${root}/client/client.js`).href)).insideOf
  const clientCore = typeof clientInsides === 'function' ? clientInsides(client) : client // the ids it gives its calls next

  return {
    root,
    /** ns per one-request frame handled by the peer. */
    peer () {
      const frames = []
      for (let i = 0; i < N; i++) frames.push(Buffer.from(codec.encodeRequest([[nextPeerId++, 'echo', PAYLOAD, 30000]])))
      const before = sent
      const t = process.hrtime.bigint()
      for (let i = 0; i < N; i++) core.onMessage(clientId, [frames[i]])
      const ns = Number(process.hrtime.bigint() - t) / N
      if (sent - before !== N) throw new Error(`the peer sent ${sent - before} replies to ${N} requests`)
      return ns
    },
    /** ns per request() resolved by the client. */
    async client () {
      replies.length = 0
      answered = 0
      for (let i = 0; i < N; i++) replies.push(Buffer.from(codec.encodeReply({ mv: 1, load: 0 }, [[clientCore.nextId + i, 0, PAYLOAD]])))
      const t = process.hrtime.bigint()
      for (let i = 0; i < N; i++) await client.request('echo', PAYLOAD)
      return Number(process.hrtime.bigint() - t) / N
    },
    async close () {
      await client.close()
      core.options.drainTimeout = 0
      await peer.stop()
    },
  }
}

const roots = [here.replace(/\/$/, ''), ...(values.against === undefined ? [] : [values.against.replace(/\/$/, '')])]
const all = []
for (const root of roots) all.push(await sides(root))
for (const s of all) { s.peer(); await s.client() } // warm-up
const results = all.map(() => ({ peer: [], client: [] }))
for (let r = 0; r < ROUNDS; r++) {
  for (let k = 0; k < all.length; k++) {
    const i = r % 2 === 0 ? k : all.length - 1 - k // alternate who goes first
    results[i].peer.push(all[i].peer())
    results[i].client.push(await all[i].client())
  }
}
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1]
console.log(`lone request path, ${N} requests x ${ROUNDS} rounds, ns per request (median of rounds):`)
for (let i = 0; i < all.length; i++) {
  console.log(`  ${all[i].root}: peer ${median(results[i].peer).toFixed(0)}, client ${median(results[i].client).toFixed(0)}`)
}
if (all.length === 2) {
  const ratio = (k) => median(results[0][k].map((x, r) => x / results[1][k][r])).toFixed(3)
  console.log(`  this / against (median of per-round ratios): peer ${ratio('peer')}, client ${ratio('client')}`)
}
for (const s of all) await s.close()
