// Compiled (not run) by `npm run test:types`: contracts as a user writes them. Each line
// marked ts-expect-error must be a compile error, or tsc fails ("unused directive").
import { z } from 'zod'
import { Peer, Client, contract, implement, on, InvalidInputError, type Issue } from 'zeromesh'

const orders = contract('orders', {
  version: '1.0.0',
  methods: {
    get: { input: z.object({ id: z.string() }), output: z.object({ id: z.string(), total: z.number() }) },
    list: { input: z.object({ n: z.coerce.number().default(3) }), output: z.object({ i: z.number() }), stream: true },
  },
})

const handlers = implement(orders, {
  get: async ({ id }) => ({ id, total: id.length }),
  async * list ({ n }) { for (let i = 0; i < n; i++) yield { i } }, // n is a number: the schema's output
})
// @ts-expect-error a handler that returns the wrong shape
implement(orders, { get: async ({ id }) => ({ id }), async * list () { yield { i: 1 } } })
// @ts-expect-error a handler missing
implement(orders, { get: async ({ id }) => ({ id, total: 1 }) })

async function main (): Promise<void> {
  const peer = new Peer({ handlers: [handlers] })
  const client = new Client({ seeds: [await peer.start()] })
  const svc = client.proxy(orders)
  const one = await svc.get({ id: 'a' }, { timeout: 500 })
  const total: number = one.total
  // @ts-expect-error a wrong argument
  await svc.get({ id: 1 })
  // @ts-expect-error a misspelt method
  await svc.gett({ id: 'a' })
  // @ts-expect-error the result carries its type
  const wrong: string = one.total
  for await (const item of svc.list({ n: '4' })) { const i: number = item.i; console.log(i) } // the input side of a coercing schema
  try { await svc.get({ id: 'b' }) } catch (err) { if (err instanceof InvalidInputError) { const issues: Issue[] = err.issues; console.log(issues[0]?.path) } }
  const d = await client.describe('tcp://127.0.0.1:5555')
  if (d !== 'any') console.log(d.contracts.map((c) => c.methods.map((m) => m.name)))
  console.log(total, wrong, peer.service().contracts)
}
void main

// Events (docs/guides/events.md): a contract's events typed on both sides.
const billing = contract('billing', { methods: { charge: { input: z.object({ order: z.string() }), output: z.boolean() } } })
const placedBy = contract('shop', { events: { placed: z.object({ order: z.string(), total: z.number() }) } })
const billingHandlers = implement(billing, { charge: async () => true }, {
  events: [on(placedBy, 'placed', async ({ order, total }, ctx) => { const n: number = total; console.log(order, n, ctx.group) })],
})
// @ts-expect-error no such event
on(placedBy, 'shipped', async () => {})
// @ts-expect-error the payload carries its type
on(placedBy, 'placed', async ({ total }) => { const t: string = total; return t })

async function events (): Promise<void> {
  const peer = new Peer({ handlers: [billingHandlers], events: { 'cache.drop': async (key: string, ctx) => { await ctx.publish('cache.dropped', key) } } })
  peer.subscribe('audit', async (payload) => { console.log(payload) }, { group: 'audit' })
  const client = new Client({ seeds: [await peer.start()] })
  const { delivered } = await client.proxy(placedBy).events.placed.publish({ order: 'o1', total: 3 }, { groups: ['billing'] })
  const group: string = delivered[0].group
  const { sent } = await client.publish('cache.drop', 'k', { ack: false })
  const out = await client.broadcast('cache.drop', 'k', { timeout: 500 })
  console.log(group, sent.length, out.unreached.map((u) => u.reason), out.failed.map((f) => f.error.message), client.stats().events.redelivered)
  // @ts-expect-error a wrong payload
  await client.proxy(placedBy).events.placed.publish({ order: 1 })
  // @ts-expect-error broadcast reaches every group: no groups
  await client.broadcast('cache.drop', 'k', { groups: ['a'] })
  // @ts-expect-error a contract without events has no events
  console.log(client.proxy(billing).events)
  const s = peer.stats().events
  if (s !== null) console.log(s.byEvent['cache.drop']?.handled, peer.unsubscribe('audit', { group: 'audit' }), peer.service().events)
}
void events
