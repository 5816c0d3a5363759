// Compiled (not run) by `npm run test:types`: the public API as a user writes it.
import { Peer, Client, RemoteError, ZeromeshError, HandshakeError, type ErrorCode, type PeerInfo, type Strategy, type Refusal, type Logger } from 'zeromesh'
import { peerMetrics, clientMetrics } from 'zeromesh/metrics'
import { Peer as Peer2 } from 'zeromesh/peer'
import { Client as Client2 } from 'zeromesh/client'
import { encodeRequest, decode, MessageType, Status } from 'zeromesh/protocol'
import { MemoryNetwork, VirtualClock, seededRandom } from 'zeromesh/testing'

async function main (): Promise<void> {
  const peer = new Peer({
    bind: 'tcp://127.0.0.1:0',
    handlers: {
      echo: async (args) => args,
      whoami: (_args, ctx) => ({ endpoint: ctx.endpoint, left: ctx.remaining(), aborted: ctx.signal.aborted }),
    },
    maxInflight: 100,
    seeds: ['tcp://127.0.0.1:5555'],
    meta: { zone: 'a' },
    membership: { probeInterval: 500 },
  })
  peer.on('member', (m) => { console.log(m.endpoint, m.state, m.incarnation) })
  console.log(peer.members().length)
  const endpoint: string = await peer.start()
  const pooled = new Peer({ handlers: [new URL('./work.js', import.meta.url), './orders.js'], threads: 2, maxQueue: 16, maxQueueMs: 50, labels: { zone: 'a' }, serviceVersion: '2.1.0', capacity: 2 })
  void pooled
  peer.serve('gamma', (args, ctx) => ctx.method + (ctx.trace?.traceparent ?? ''))
  const dropped: boolean = peer.unserve('gamma')
  console.log(dropped, peer.service().methods, peer.service().digest)
  const first: Strategy = { select: (peers) => peers[0], onResult: (p, r) => { console.log(p.load, r.latencyMs) } }
  const client = new Client({ seeds: [endpoint], timeout: 1000, strategy: first, streamWindow: { items: 16 } })
  // Streams: a generator handler, a reader that iterates, a request stream.
  peer.serve('rows', async function * (args: { n: number }, ctx) { for (let i = 0; i < args.n && !ctx.signal.aborted; i++) yield { i } })
  peer.serve('sum', async function * (_args, ctx) { let t = 0; for await (const x of ctx.input ?? []) t += x as number; yield t })
  const rows = client.stream<{ i: number }>('rows', { n: 3 }, { idleTimeout: 500, window: { bytes: 1 << 20 } })
  for await (const row of rows) console.log(row.i, rows.received)
  for await (const total of client.stream<number>('sum', null, { input: [1, 2, 3] })) console.log(total)
  console.log(peer.stats().streams?.open)
  client.on('peer', (p: PeerInfo) => { console.log(p.endpoint, p.state) })
  const ac = new AbortController()
  try {
    const out = await client.request<{ n: number }>('echo', { n: 1 }, { timeout: 500, idempotent: true, signal: ac.signal, key: 'user-1', attemptTimeout: 'auto' })
    console.log(out.n)
    const all: Array<{ n: number }> = await client.request<{ n: number }>('echo', { n: 1 }, { values: true })
    console.log(all.length)
    const ran: number | undefined = (await client.broadcast('cache.drop', null)).delivered[0]?.threads
    console.log(ran)
    const each = await client.gather<string>('who', null, { timeout: 500 })
    console.log(each.replies.map((r) => r.value.length), each.failed.map((f) => f.error.message), each.unreached.map((u) => u.reason))
    // @ts-expect-error gather reaches every peer: no key
    void client.gather('who', null, { key: 'k' })
  } catch (err) {
    if (err instanceof RemoteError) console.log(err.remoteCode)
    if (err instanceof ZeromeshError && err.code === 'ERR_ZEROMESH_TIMEOUT' && err.retryable) console.log('retry later')
    // A misspelt code is a compile error: `code` is the union of zeromesh's codes.
    // @ts-expect-error TS2367: no overlap between ErrorCode and 'ERR_ZEROMESH_TIMEDOUT'
    if (err instanceof ZeromeshError && err.code === 'ERR_ZEROMESH_TIMEDOUT') console.log('never')
    if (err instanceof ZeromeshError) {
      switch (err.code) { // narrows: every case is checked against the union
        case 'ERR_ZEROMESH_BUSY': case 'ERR_ZEROMESH_DRAINING': console.log(503); break
        case 'ERR_ZEROMESH_TIMEOUT': console.log(504); break
        case 'ERR_ZEROMESH_USER_CODE': console.log(500); break
        default: { const c: ErrorCode = err.code; console.log(c) }
      }
    }
  }
  console.log(client.peers()[0]?.inflight, client.stats().retries, peer.stats().malformed)
  const view = await client.members(endpoint)
  console.log(view[0].state === 'alive', view[0].service)
  const servers: string[] = await client.waitFor('echo', { timeout: 1000, version: '^2', where: { zone: 'a' } })
  const d = await client.describe(servers[0])
  if (d !== 'any') console.log(d.methods, d.version, d.labels.zone, d.capacity)
  const zoned = new Client({ seeds: [endpoint], zone: 'a', where: { tier: 'gold' }, subset: 16 })
  await zoned.request('echo', null, { version: '~2.1', where: null })
  const s = client.peers()[0]?.service
  if (s !== null && s !== undefined && s !== 'any') console.log(s.methods)
  const frame = encodeRequest([[1, 'echo', null, 0]])
  const msg = decode(frame)
  if (msg.type === MessageType.REQUEST) console.log(msg.requests[0].method, Status.OK)
  await client.close()
  await peer.stop()
  void Peer2
  void Client2
  const secured = new Peer({ bind: 'tcp://127.0.0.1:0', security: { clusterKey: 'K'.repeat(40), allow: ['keys/clients', 'alice.pub'] } })
  secured.on('refused', (r: Refusal) => { console.log(r.reason, r.key, r.address, r.repeats) })
  const { keys } = await secured.reloadAllowList()
  console.log(keys, secured.stats().security.refused['key not allowed'])
  const plainOnPurpose = new Peer({ bind: 'tcp://127.0.0.1:0', security: false, seeds: ['dns+srv://_zeromesh._tcp.peers.test'], dns: { servers: ['127.0.0.1:5353'], interval: 1000 }, logger: console as unknown as Logger })
  plainOnPurpose.on('joined', ({ through }) => { console.log(through.length, plainOnPurpose.ready) })
  plainOnPurpose.on('seeds-unreachable', ({ attempts, retryIn }) => { console.log(attempts, retryIn) })
  const registry = peerMetrics(plainOnPurpose)
  console.log(await registry.metrics(), clientMetrics(client, { registry }).contentType)
  void plainOnPurpose
  const sc = new Client({ seeds: ['tcp://10.0.0.7:5555'], security: { clusterPublicKey: 'P'.repeat(40), secretKey: 'S'.repeat(40) } })
  try { await sc.request('echo') } catch (err) { if (err instanceof HandshakeError) console.log(err.code === 'ERR_ZEROMESH_HANDSHAKE', err.retryable) }
}

void main()

// zeromesh/testing: a peer and a client on the in-memory network and a virtual clock.
export async function simulated (): Promise<number> {
  const clock = new VirtualClock()
  const net = new MemoryNetwork({ clock, random: seededRandom(7), delay: 0.5 })
  const a = net.host('a')
  const peer = new Peer({ bind: 'tcp://127.0.0.1:5555', handlers: { add: ([x, y]: [number, number]) => x + y }, clock: a.clock, transport: a.transport })
  const me = net.host('me')
  const client = new Client({ seeds: ['tcp://127.0.0.1:5555'], clock: me.clock, transport: me.transport })
  net.partition(['a'], ['me'])
  net.heal(['a'], ['me'])
  net.heal()
  me.loss = 0.01
  a.freeze()
  a.thaw()
  const endpoint: string = await clock.settle(peer.start(), { step: 1, within: 1000 })
  const sum: unknown = await clock.settle(client.request('add', [2, 3]))
  await clock.until(() => { if (client.peers().length !== 1 || endpoint === '') throw new Error('not yet') }, { within: 500 })
  await clock.advance(100)
  const spare = me.connector({ onMessage: () => {} })
  spare.connect('tcp://127.0.0.1:5555')
  spare.dialNow('tcp://127.0.0.1:5555')
  spare.drop('tcp://127.0.0.1:5555')
  await spare.close()
  a.kill()
  return sum as number
}


// Middleware and headers (docs/guides/middleware.md).
async function middleware (): Promise<void> {
  const peer = new Peer({ handlers: { who: (_args, ctx) => ctx.headers.tenant ?? null } })
  peer.use(async (ctx, next) => {
    if (ctx.headers.authorization !== 'Bearer t') throw Object.assign(new Error('no'), { code: 'E_AUTH' })
    ctx.headers = { tenant: 'acme' }
    ctx.args = { wrapped: ctx.args }
    const kind: 'request' | 'stream' | 'event' = ctx.kind
    return next().then((r) => (kind === 'request' ? r : r))
  })
  const client = new Client({ seeds: [await peer.start()] }).use(async (ctx, next) => {
    ctx.headers.authorization = 'Bearer t'
    const r = await next()
    const who: string | null = ctx.peer
    console.log(who, ctx.attempts, ctx.kind, ctx.method)
    return r
  })
  await client.request('who', null, { headers: { 'x-request-id': '1' } })
  for await (const x of client.stream('s', null, { headers: { tenant: 'b' } })) console.log(x)
  // @ts-expect-error header values are strings
  await client.request('who', null, { headers: { n: 1 } })
}
void middleware
