// zeromesh/jetstream's types as users write them (npm run test:types).
import { Peer, Client } from 'zeromesh'
import { durableEvents, DurableUnavailableError, consumerName, Header, DeadCode, durableDefaults } from 'zeromesh/jetstream'
import type { DurableEvents, DurablePublishResult, DeadLetter } from 'zeromesh/jetstream'

export async function run (): Promise<void> {
  const durable: DurableEvents = await durableEvents({
    servers: ['nats://127.0.0.1:4222'],
    events: ['orders.placed'],
    start: 'all',
    maxDeliver: 3,
    backoff: [100, 1000],
    onDeadLetter: (d: DeadLetter) => { const code: string = d.error.code; void code },
  })
  const peer = new Peer({ durable, events: { 'orders.placed': { group: 'billing', handler: async (order, ctx) => { const id: string | null = ctx.eventId; const n: number = ctx.deliveries; void id; void n; void order } } } })
  await peer.start()
  const client = new Client({ seeds: [peer.endpoint as string], durable })
  await client.publish('orders.placed', { id: 7 })
  const stored: DurablePublishResult = await durable.publish('orders.placed', { id: 7 }, { id: 'order-7', headers: { tenant: 't' } })
  const seq: number = stored.seq
  const dup: boolean = stored.duplicate
  void seq; void dup
  try {
    await durable.publish('orders.placed', 1)
  } catch (err) {
    if (err instanceof DurableUnavailableError) { const s: false | null = err.stored; void s }
  }
  const name: string = consumerName('billing', 'orders.placed')
  const h: 'Nats-Msg-Id' = Header.ID
  const c: 'ERR_ZEROMESH_UNDECODABLE' = DeadCode.UNDECODABLE
  const w: number = durableDefaults.ackWait
  void name; void h; void c; void w
  // @ts-expect-error start is 'new' or 'all'
  await durableEvents({ events: ['a'], start: 'first' })
  console.log(durable.stats().deliveries.handled)
  await client.close(); await peer.stop(); await durable.close()
}
