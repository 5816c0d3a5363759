#!/usr/bin/env node
// Every kind of hostile input the tests know, one after another, against one peer (issue 50):
// the memory scenario (test/scenarios/memory.scenario.js) runs it against `zeromesh peer` and
// against a Peer embedded in a process of its own, and checks the peer's memory during it and
// 30 s after the last kind. Each kind is bounded in time and closes its sockets. The peer must
// serve the demo handlers (`zeromesh peer --demo-handlers`) and run plain on loopback.
//
//   node bench/cluster/barrage.js --peer tcp://127.0.0.1:PORT [--only kind,kind] [--seed N]
//
// Prints one line per kind: its name, how long it took, and what it sent.
import { parseArgs } from 'node:util'
import { fileURLToPath } from 'node:url'
import net from 'node:net'
import * as zmq from 'zeromq'
import { Packr } from 'msgpackr'
import {
  encodeGossip, encodeRequest, encodeCancel, encodeMembersGet, encodeServiceGet, encodeStreamOpen, MemberState,
} from '../../protocol/index.js'
import { seededRandom } from '../../testing/random.js'

const MiB = 1024 * 1024
const delay = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
const packr = new Packr({ useRecords: false })
const header = (type, version = 1) => Buffer.from([0xa7, 0x5a, 0x4d, version, type])

/** A Dealer that never blocks the barrage: sends give up after `sendTimeout`. */
function dealer (endpoint, sockets, o = {}) {
  const s = new zmq.Dealer({ linger: 0, sendTimeout: 1000, sendHighWaterMark: 100000, ...o })
  s.connect(endpoint)
  sockets.push(s)
  return s
}

/** Sends each of `messages`, in order, dropping those that do not go within a second. */
async function sendAll (s, messages) {
  let sent = 0
  for (const m of messages) {
    try { await s.send(m); sent++ } catch { /* full or gone: the next */ }
  }
  return sent
}

const fakeEndpoint = (random) => `tcp://127.0.${9 + Math.floor(random() * 3)}.${1 + Math.floor(random() * 250)}:${20000 + Math.floor(random() * 20000)}`

/** The kinds, in the order they run: name -> async (endpoint, { sockets, random }) => what was sent. */
export const kinds = {
  /** Random bytes, junk after the signature, unknown types, wrong shapes, replies sent to a peer. */
  async garbage (endpoint, { sockets, random }) {
    const s = dealer(endpoint, sockets)
    const bytes = (n) => Buffer.from(Array.from({ length: n }, () => Math.floor(random() * 256)))
    const list = []
    for (let i = 0; i < 2000; i++) {
      const r = i % 5
      if (r === 0) list.push([bytes(1 + (i % 300))])
      else if (r === 1) list.push([Buffer.concat([header(1 + (i % 5)), bytes(1 + (i % 200))])])
      else if (r === 2) list.push([Buffer.concat([header(100 + (i % 100)), packr.pack([i])])])
      else if (r === 3) list.push([Buffer.concat([header(1), packr.pack({ shape: i })])])
      else list.push([Buffer.concat([header(2), packr.pack([{}, [[i, 0, 'not for a peer']]])])])
    }
    return `${await sendAll(s, list)} malformed messages`
  },

  /** Protocol versions the peer does not speak: each is answered with an ERROR frame, never read. */
  async 'wrong-versions' (endpoint, { sockets }) {
    const s = dealer(endpoint, sockets, { receiveHighWaterMark: 1 })
    const list = Array.from({ length: 2000 }, (_, i) => [Buffer.concat([header(1, 2 + (i % 200)), packr.pack([[i, 'echo', 'x'.repeat(1000), 0]])])])
    return `${await sendAll(s, list)} requests in versions 2 to 201, answers never read`
  },

  /** Args nested past maxDepth, and bodies of nothing but array headers. */
  async 'deep-nesting' (endpoint, { sockets }) {
    const s = dealer(endpoint, sockets)
    let deep = 1
    for (let i = 0; i < 200; i++) deep = [deep]
    const list = []
    for (let i = 0; i < 300; i++) list.push([encodeRequest([[i + 1, 'echo', deep, 1000]])])
    for (let i = 0; i < 300; i++) list.push([Buffer.concat([header(1), Buffer.alloc(100000, 0x91)])])
    return `${await sendAll(s, list)} deeply nested requests`
  },

  /** Strings that are not UTF-8: method names, header values and args of bytes 0x80-0xff where text belongs. */
  async 'invalid-utf8' (endpoint, { sockets }) {
    const s = dealer(endpoint, sockets)
    const bad = (n) => Buffer.from(Array.from({ length: n }, (_, i) => 0x80 + (i % 0x7f))) // continuation bytes with no lead
    const str = (b) => Buffer.concat([Buffer.from([0xd9, b.length]), b]) // a msgpack str8 of those bytes
    const list = []
    for (let i = 0; i < 2000; i++) {
      // [[id, method, args, timeoutMs, trace, accepts, headers]], written by hand: the codec would not write them.
      const body = Buffer.concat([Buffer.from([0x91, 0x97, 0xcd, (i >> 8) & 0xff, i & 0xff]), str(bad(1 + (i % 200))), str(bad(i % 50)), Buffer.from([0xcd, 0x03, 0xe8, 0xc0, 0x01, 0x81]), str(Buffer.from('tenant')), str(bad(1 + (i % 100)))])
      list.push([Buffer.concat([header(1), body])])
    }
    return `${await sendAll(s, list)} requests with strings that are not UTF-8`
  },

  /** Frames over maxMessageSize: each drops its connection, which comes back for the next. */
  async 'oversized-frames' (endpoint, { sockets }) {
    const big = Buffer.alloc(8 * MiB, 0x41)
    let sent = 0
    for (let i = 0; i < 20; i++) {
      const s = dealer(endpoint, sockets)
      try { await s.send([big]); sent++ } catch { /* dropped */ }
      await delay(50)
      s.close()
    }
    return `${sent} frames of 8 MiB on 20 connections`
  },

  /** 10/FLP requests of 64 frames of 1 MiB, 64 MiB in all: over maxMessageSize in all, dropped unanswered. */
  async 'flp-large' (endpoint, { sockets }) {
    const s = dealer(endpoint, sockets, { receiveHighWaterMark: 1, sendTimeout: 5000 })
    const frame = Buffer.alloc(MiB, 0x46)
    const message = [Buffer.from('control'), ...Array.from({ length: 63 }, () => frame)]
    return `${await sendAll(s, Array.from({ length: 8 }, () => message))} FLP requests of 64 MiB`
  },

  /**
   * 10/FLP requests of 64 frames just under 1 MiB each (each frame within maxMessageSize), echoed
   * back by the demo peer to a client that never reads, then hangs up: tens of MiB of replies
   * queued to nobody.
   */
  async 'flp-echo-unread' (endpoint, { sockets }) {
    const s = dealer(endpoint, sockets, { receiveHighWaterMark: 1, sendTimeout: 5000 })
    const frame = Buffer.alloc(MiB - 1024, 0x46)
    const message = [Buffer.from('control'), ...Array.from({ length: 63 }, () => frame)]
    const sent = await sendAll(s, Array.from({ length: 4 }, () => message))
    await delay(2000)
    s.close()
    return `${sent} FLP requests of 63 frames of 1 MiB, echoes never read`
  },

  /**
   * One message that never ends: frames of 1 MiB, each flagged "more", on a raw TCP connection
   * (ZMTP 3.0, NULL). ZeroMQ counts its queues in whole messages and bounds each frame, not a
   * message, so it holds every frame until the message ends, which this one never does.
   */
  async 'endless-message' (endpoint) {
    const [host, port] = endpoint.replace('tcp://', '').split(':')
    const mib = 1024
    const sent = await new Promise((resolve) => {
      const sock = net.connect(Number(port), host)
      let written = 0
      const frame = Buffer.alloc(MiB + 9, 0x45)
      frame[0] = 0x03 // long frame, more
      frame.writeBigUInt64BE(BigInt(MiB), 1)
      const finish = () => { sock.destroy(); resolve(written) }
      const timer = setTimeout(finish, 20000)
      sock.on('error', () => { clearTimeout(timer); finish() })
      sock.on('close', () => { clearTimeout(timer); resolve(written) })
      sock.once('connect', () => {
        sock.write(zmtpGreeting())
        sock.write(zmtpReady('DEALER'))
        const pump = () => {
          while (written < mib) {
            written++
            if (!sock.write(frame)) { sock.once('drain', pump); return }
          }
          clearTimeout(timer)
          setTimeout(finish, 500)
        }
        pump()
      })
    })
    return `${sent} frames of 1 MiB in one unfinished message`
  },

  /** Forged gossip: SYNCs of 10,000 made-up members, forged deaths and leaves, huge meta, endpoints ZeroMQ refuses. */
  async 'forged-gossip' (endpoint, { sockets, random }) {
    const s = dealer(endpoint, sockets)
    const list = []
    const claim = (i) => ({ endpoint: i % 7 === 0 ? 'tcp://localhost:1' : fakeEndpoint(random), incarnation: [1, Date.now(), 2 ** 53 - 1][i % 3], state: i % 4, meta: i % 5 === 0 ? { zone: 'x'.repeat(700) } : {} })
    for (let k = 0; k < 10; k++) list.push([encodeGossip(k, { type: 'sync', from: fakeEndpoint(random), members: Array.from({ length: 1000 }, (_, i) => claim(k * 1000 + i)) })])
    for (let k = 0; k < 200; k++) list.push([encodeGossip(k, { type: 'probe', from: fakeEndpoint(random), target: endpoint, updates: [{ endpoint, incarnation: 2 ** 53 - 1, state: k % 2 === 0 ? MemberState.DEAD : MemberState.LEFT, meta: {} }] })])
    for (let k = 0; k < 200; k++) list.push([encodeGossip(k, { type: 'probe-req', from: fakeEndpoint(random), target: fakeEndpoint(random), updates: [] })])
    return `${await sendAll(s, list)} forged gossip messages`
  },

  /** Member lists and service descriptions asked for and never read. */
  async 'list-requests' (endpoint, { sockets }) {
    const s = dealer(endpoint, sockets, { receiveHighWaterMark: 1 })
    const list = []
    for (let i = 0; i < 5000; i++) list.push([i % 2 === 0 ? encodeMembersGet(i) : encodeServiceGet(i)])
    return `${await sendAll(s, list)} MEMBERS_GET and SERVICE_GET, answers never read`
  },

  /**
   * A flood of requests whose timeouts are past every timer's range (2^31 ms and more, up to
   * 2^53 - 1): `sleep`s that hold a place each, sent as fast as they go, never read.
   */
  async 'timeout-overflow' (endpoint, { sockets }) {
    const s = dealer(endpoint, sockets, { receiveHighWaterMark: 1, sendTimeout: 0 })
    const timeouts = [2 ** 31, 2 ** 31 + 1, 2 ** 32, 2 ** 32 + 7, 2 ** 48, Number.MAX_SAFE_INTEGER]
    let sent = 0
    let offered = 0
    const t0 = Date.now()
    while (Date.now() - t0 < 3000) {
      const batch = Array.from({ length: 64 }, (_, k) => [++offered, 'sleep', { ms: 50 }, timeouts[(offered + k) % timeouts.length]])
      try { s.send(encodeRequest(batch)).then(() => { sent += 64 }, () => {}) } catch { /* full */ }
      if (offered % 4096 < 64) await delay(1)
    }
    await delay(500)
    return `${sent} of ${offered} requests with timeouts past 2^31 ms sent`
  },

  /** 200 echo requests of 900 KiB with fresh ids, answers never read, then a hang-up. */
  async 'large-burst-unread' (endpoint, { sockets }) {
    return echoUnread(endpoint, sockets, 200, 30000)
  },

  /** Requests that reuse one id, cancels of ids never sent, and every odd timeout. */
  async 'ids-and-timeouts' (endpoint, { sockets }) {
    const s = dealer(endpoint, sockets, { receiveHighWaterMark: 1 })
    const list = []
    for (let i = 0; i < 3000; i++) {
      const timeout = [0, 1, 100, 2 ** 31 - 1, 2 ** 53 - 1][i % 5]
      list.push([encodeRequest([[7, 'sleep', { ms: 50 }, timeout], [100000 + i, 'echo', 'x'.repeat(2000), timeout]])])
      if (i % 3 === 0) list.push([encodeCancel([7, i, 2 ** 53 - 1])])
    }
    return `${await sendAll(s, list)} frames of reused ids, cancels and odd timeouts`
  },

  /** Headers past every limit: too many, too long, not strings. */
  async 'bad-headers' (endpoint, { sockets }) {
    const s = dealer(endpoint, sockets, { receiveHighWaterMark: 1 })
    const many = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`h${i}`, 'v']))
    const long = { 'x-long': 'v'.repeat(100000) }
    const odd = { 'X-Upper': 'v', 'x-num': 5 }
    const list = []
    for (let i = 0; i < 1000; i++) {
      const headers = [many, long, odd][i % 3]
      list.push([encodeRequest([[i + 1, 'echo', 'x', 1000, null, 0, headers]])])
    }
    return `${await sendAll(s, list)} requests with bad headers`
  },

  /** Streams opened to the per-connection limit and more, their items never credited or read. */
  async 'stream-hoarder' (endpoint, { sockets }) {
    const list = []
    for (let c = 0; c < 4; c++) {
      const s = dealer(endpoint, sockets, { receiveHighWaterMark: 1 })
      for (let i = 0; i < 100; i++) list.push([s, [encodeStreamOpen(i + 1, 'count', { n: 1000, size: 1000000 }, 60000, 64, 64 * MiB, false)]])
    }
    let sent = 0
    for (const [s, m] of list) { try { await s.send(m); sent++ } catch {} }
    await delay(3000)
    return `${sent} streams of 1 MB items opened on 4 connections, never read`
  },

  /** 200 requests of 900 KiB with fresh ids, answers read. */
  async 'large-burst' (endpoint, { sockets }) {
    const s = dealer(endpoint, sockets, { sendTimeout: 5000, receiveTimeout: 10000 })
    const big = Buffer.alloc(900 * 1024, 7)
    let read = 0
    const reader = (async () => {
      try { for (;;) { await s.receive(); read++ } } catch { /* timed out or closed */ }
    })()
    const sent = await sendAll(s, Array.from({ length: 200 }, (_, i) => [encodeRequest([[i + 1, 'echo', big, 30000]])]))
    const t0 = Date.now()
    while (read < sent && Date.now() - t0 < 15000) await delay(50)
    s.close()
    await reader
    return `${sent} requests of 900 KiB, ${read} reply frames read`
  },

  /** 8 clients sending 60 kB requests as fast as they can for 4 s, reading nothing, then hanging up. */
  async 'flood-no-read' (endpoint, { sockets }) {
    const flooders = Array.from({ length: 8 }, () => dealer(endpoint, sockets, { receiveHighWaterMark: 1, sendTimeout: 0 }))
    const payload = 'x'.repeat(60000)
    let sent = 0
    const t0 = Date.now()
    while (Date.now() - t0 < 4000) {
      for (const s of flooders) { try { s.send(encodeRequest([[++sent, 'echo', payload, 10000]])).catch(() => {}) } catch { /* full */ } }
      if (sent % 400 < 8) await delay(5)
    }
    for (const s of flooders) s.close()
    return `${sent} requests of 60 kB offered`
  },

  /** Asks for 410 replies of 900 KiB and never reads one, then hangs up. */
  async 'slow-reader' (endpoint, { sockets }) {
    return echoUnread(endpoint, sockets, 410, 60000)
  },

  /** Connections opened by the hundred, half of them never saying a word (the handshake timer closes them). */
  async 'connection-churn' (endpoint) {
    const [host, port] = endpoint.replace('tcp://', '').split(':')
    const open = []
    for (let i = 0; i < 400; i++) {
      const sock = net.connect(Number(port), host)
      sock.on('error', () => {})
      if (i % 2 === 0) sock.once('connect', () => sock.write(zmtpGreeting().subarray(0, 11)))
      open.push(sock)
      if (i % 50 === 49) await delay(20)
    }
    await delay(2500)
    for (const sock of open) sock.destroy()
    return '400 connections, half of them silent, half stopping mid-greeting'
  },
}

/** `count` echo requests of 900 KiB (fresh ids, `timeout` ms each) on one connection whose replies are never read; hangs up 2 s after the last is sent. */
async function echoUnread (endpoint, sockets, count, timeout) {
  const s = dealer(endpoint, sockets, { receiveHighWaterMark: 1, sendTimeout: 5000 })
  const big = Buffer.alloc(900 * 1024, 7)
  const sent = await sendAll(s, Array.from({ length: count }, (_, i) => [encodeRequest([[i + 1, 'echo', big, timeout]])]))
  await delay(2000)
  s.close()
  return `${sent} requests of 900 KiB, no reply read`
}

/** A ZMTP 3.0 greeting, NULL mechanism, as a server would not check. */
function zmtpGreeting () {
  const g = Buffer.alloc(64)
  g[0] = 0xff
  g[9] = 0x7f
  g[10] = 3 // major
  g[11] = 0 // minor
  g.write('NULL', 12, 'latin1')
  return g
}

/** The NULL mechanism's READY command with its Socket-Type property. */
function zmtpReady (type) {
  const name = Buffer.from('Socket-Type')
  const value = Buffer.from(type)
  const body = Buffer.concat([Buffer.from([5]), Buffer.from('READY'), Buffer.from([name.length]), name, Buffer.alloc(4), value])
  body.writeUInt32BE(value.length, 6 + name.length + 1)
  return Buffer.concat([Buffer.from([0x04, body.length]), body])
}

/**
 * Runs `names` (every kind by default) against `endpoint`, in order; `after(name, line)`
 * hears each as it ends. Returns [{ kind, ms, what }].
 */
export async function barrage (endpoint, { names = Object.keys(kinds), seed = 1, after = () => {} } = {}) {
  const random = seededRandom(seed)
  const done = []
  for (const name of names) {
    const sockets = []
    const t0 = Date.now()
    let what
    try {
      what = await kinds[name](endpoint, { sockets, random })
      await delay(1000) // what was queued leaves (sockets close with linger 0)
    } finally {
      for (const s of sockets) s.close()
    }
    const line = { kind: name, ms: Date.now() - t0, what }
    done.push(line)
    after(name, line)
  }
  return done
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({ options: { peer: { type: 'string' }, only: { type: 'string' }, seed: { type: 'string', default: '1' } } })
  if (!values.peer) { console.error('usage: node bench/cluster/barrage.js --peer tcp://127.0.0.1:PORT [--only kind,kind] [--seed N]'); process.exit(2) }
  const names = values.only ? values.only.split(',') : undefined
  const unknown = (names ?? []).filter((n) => !(n in kinds))
  if (unknown.length > 0) { console.error(`unknown kinds: ${unknown.join(', ')}; known: ${Object.keys(kinds).join(', ')}`); process.exit(2) }
  await barrage(values.peer, { names, seed: Number(values.seed), after: (name, l) => console.log(`${name.padEnd(18)} ${String(l.ms).padStart(6)} ms  ${l.what}`) })
}
