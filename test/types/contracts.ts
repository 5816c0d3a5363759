// Compiled (not run) by `npm run test:types`: contracts as a user writes them. Each line
// marked ts-expect-error must be a compile error, or tsc fails ("unused directive").
import { z } from 'zod'
import { Peer, Client, contract, implement, InvalidInputError, type Issue } from 'zeromesh'

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
