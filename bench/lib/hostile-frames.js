#!/usr/bin/env node
// Random, valid-looking hostile traffic for the soak (bench/cluster/soak.js): forged gossip (claims
// about real peers and made-up ones, any state, incarnations up to 2^53-1, oversized meta,
// endpoints ZeroMQ refuses), requests with odd methods, args, timeouts and reused ids,
// cancels, member-list requests, wrong versions, truncated and bit-flipped frames, FLP
// messages, sockets that never read, and sockets that flood and hang up. Everything goes
// to the peers named on the command line (loopback), at a bounded rate, for a bounded time.
//
//   node bench/lib/hostile-frames.js --peers EP,EP,EP --seconds S [--rate N] [--seed N]
import { parseArgs } from 'node:util'
import * as zmq from 'zeromq'
import { encodeGossip, encodeRequest, encodeCancel, encodeMembersGet, MemberState } from '../../protocol/index.js'
import { seededRandom } from '../../testing/random.js'

const { values } = parseArgs({ options: { peers: { type: 'string' }, seconds: { type: 'string' }, rate: { type: 'string' }, seed: { type: 'string' } } })
const peers = values.peers.split(',')
const seconds = Number(values.seconds ?? 60)
const rate = Number(values.rate ?? 500) // frames per second, all sockets together
const random = seededRandom(Number(values.seed ?? 1))
const int = (n) => Math.floor(random() * n)
const pick = (list) => list[int(list.length)]

const BAD = ['garbage', 'tcp://127.0.0.1:abc', 'udp://127.0.0.1:5', 'ipc://@', `ipc:///tmp/${'z'.repeat(120)}`, 'tcp://localhost:1']
const fakeEndpoint = () => `tcp://127.0.${9 + int(3)}.${1 + int(250)}:${20000 + int(20000)}`
const endpoint = () => pick([...peers, ...peers, fakeEndpoint(), fakeEndpoint(), pick(BAD)])
const incarnation = () => pick([int(1000), Date.now() + int(100000), Date.now() + 86400000 - int(60000), 2 ** 53 - 1, 2 ** 31 + int(1000)])
const meta = () => pick([{}, { version: '9.9.9' }, { zone: 'x'.repeat(int(700)) }, { deep: [[[[[[[[[[1]]]]]]]]]] }])

function claim () {
  const c = { endpoint: endpoint(), incarnation: incarnation(), state: int(4), meta: meta() }
  if (random() < 0.3) c.by = endpoint()
  return c
}

function value (depth = 0) {
  const r = random()
  if (depth > 3 || r < 0.3) return pick([null, true, 1.5, -7, 'text', 'é'.repeat(int(50)), Buffer.alloc(int(100))])
  if (r < 0.65) return Array.from({ length: int(6) }, () => value(depth + 1))
  return Object.fromEntries(Array.from({ length: int(5) }, (_, i) => [`k${i}`, value(depth + 1)]))
}

let ids = 1
function request () {
  const method = pick(['echo', 'echo', 'whoami', 'sleep', 'spin', 'nope', '', 'x'.repeat(300)])
  const args = method === 'sleep' ? { ms: int(50) } : method === 'spin' ? { n: int(100000) } : value()
  const id = random() < 0.2 ? 7 : ids++ // some ids reused
  return [id, method, args, pick([0, 1, 100, 5000, 2 ** 31 - 1, 2 ** 53 - 1])]
}

function frame () {
  const r = random()
  const seq = int(1e6)
  let f
  if (r < 0.15) f = encodeGossip(seq, { type: 'sync', from: endpoint(), members: Array.from({ length: int(40) }, claim) })
  else if (r < 0.3) f = encodeGossip(seq, { type: 'probe', from: endpoint(), target: endpoint(), updates: Array.from({ length: int(8) }, claim) })
  else if (r < 0.36) f = encodeGossip(seq, { type: 'probe-req', from: endpoint(), target: endpoint(), updates: [] })
  else if (r < 0.4) f = encodeGossip(seq, { type: pick(['ack', 'nack']), from: endpoint(), updates: [claim()] })
  else if (r < 0.7) f = encodeRequest(Array.from({ length: 1 + int(4) }, request))
  else if (r < 0.75) f = encodeCancel([ids - 1 - int(10), 7])
  else if (r < 0.8) f = encodeMembersGet(seq)
  else f = encodeRequest([request()])
  f = Buffer.from(f)
  const mangle = random()
  if (mangle < 0.05) f[3] = 1 + int(255) //                         a wrong version
  else if (mangle < 0.1) f[4] = int(256) //                         any type
  else if (mangle < 0.2) f = f.subarray(0, int(f.length)) //        truncated
  else if (mangle < 0.3) f[int(f.length)] ^= 1 << int(8) //         a flipped bit
  return f
}

function open (ep, { reading }) {
  const s = new zmq.Dealer({ linger: 0, sendTimeout: 0, receiveHighWaterMark: reading ? 1000 : 1, sendHighWaterMark: 1000 })
  s.connect(ep)
  if (reading) (async () => { for await (const _ of s) { /* drain answers */ } })().catch(() => {}) // eslint-disable-line no-unused-vars
  return s
}

const sockets = peers.map((ep) => open(ep, { reading: true }))
const lazy = peers.map((ep) => open(ep, { reading: false })) // never read: replies pile up at the peer
const counts = { frames: 0, refused: 0, reopened: 0, floods: 0 }
const end = Date.now() + seconds * 1000
const send = (s, msg) => { try { s.send(msg).catch(() => { counts.refused++ }) } catch { counts.refused++ } }

while (Date.now() < end) {
  const i = int(peers.length)
  const r = random()
  if (r < 0.01) { // a socket that sends a burst without reading and hangs up
    const s = open(peers[i], { reading: false })
    for (let k = 0; k < 300; k++) send(s, encodeRequest([[k, 'echo', 'f'.repeat(30000), 5000]]))
    await new Promise((resolve) => setTimeout(resolve, 50))
    s.close()
    counts.floods++
  } else if (r < 0.02) { // reconnect
    sockets[i].close()
    sockets[i] = open(peers[i], { reading: true })
    counts.reopened++
  } else if (r < 0.05) { // FLP, some of it too large in all
    send(sockets[i], ['c', ...Array.from({ length: 1 + int(40) }, () => Buffer.alloc(int(60000)))])
  } else {
    send(random() < 0.1 ? lazy[i] : sockets[i], frame())
  }
  counts.frames++
  if (counts.frames % 20 === 0) await new Promise((resolve) => setTimeout(resolve, Math.max(1, Math.round(20000 / rate))))
}
for (const s of [...sockets, ...lazy]) s.close()
process.stdout.write(JSON.stringify(counts) + '\n')
