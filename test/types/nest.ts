// Compiled (not run) by `npm run test:types` under --strict: zeromesh/nest as a NestJS
// application writes it. Each line marked ts-expect-error must be a compile error.
import { z } from 'zod'
import { lastValueFrom, type Observable } from 'rxjs'
import { contract } from 'zeromesh'
import { ZeromeshServer, ZeromeshClient, ZeromeshRecord, ZeromeshContext, ZeromeshExceptionFilter, ContractPattern, ContractEventPattern, ZEROMESH_TRANSPORT } from 'zeromesh/nest'
import { httpAnswerOf } from 'zeromesh/http'

const heavy = contract('heavy', {
  methods: { run: { input: z.object({ n: z.number().int() }), output: z.object({ sum: z.number(), pid: z.number() }) } },
  events: { done: z.object({ n: z.number() }) },
})

export const server = new ZeromeshServer({ bind: 'tcp://127.0.0.1:0', threads: 2, module: new URL('./app.module.js', import.meta.url), moduleExport: 'AppModule', group: 'heavy' })
// @ts-expect-error handlers come from the application's patterns
new ZeromeshServer({ handlers: {} })
new ZeromeshServer({ group: 'cache' }).setOnProcessingStartHook((transportId, context, done) => { void done() })
new ZeromeshClient({ seeds: ['tcp://127.0.0.1:5555'], connectTimeout: 500 })

async function gateway (client: ZeromeshClient): Promise<void> {
  const out = await lastValueFrom(client.send(heavy.methods.run, { n: 5 }))
  const sum: number = out.sum
  // @ts-expect-error the contract's input is { n: number }
  client.send(heavy.methods.run, { n: 'five' })
  await lastValueFrom(client.send(heavy.methods.run, new ZeromeshRecord({ n: 5 }, { timeout: 500, headers: { tenant: 'acme' } })))
  const any: Observable<{ ok: boolean }> = client.send<{ ok: boolean }>('plain', {})
  await lastValueFrom(client.emit(heavy.events.done, { n: 1 }))
  await lastValueFrom(client.emit('cache.clear', new ZeromeshRecord({ n: 1 }, { broadcast: true })))
  await lastValueFrom(client.send('maybe', new ZeromeshRecord({}, { waitForPeer: true, timeout: 500 })))
  await lastValueFrom(client.send('everyone', new ZeromeshRecord({}, { all: true })))
  // @ts-expect-error values is the Nest client's to set: every value comes anyway
  new ZeromeshRecord({}, { values: true })
  // @ts-expect-error the event's payload is { n: number }
  client.emit(heavy.events.done, { n: true })
  const c = await client.connect()
  c.stats()
  void sum
  void any
}

export function handler (data: unknown, ctx: ZeromeshContext): string {
  const tenant: string | undefined = ctx.getHeaders().tenant
  ctx.getContext().remaining()
  const meta: Record<string, string> | undefined = ctx.getMetadata()
  void meta
  return `${tenant ?? ''}${ctx.getPattern()}`
}

export const decorators = [ContractPattern(heavy, 'run'), ContractEventPattern(heavy, 'done'), ZEROMESH_TRANSPORT]
// @ts-expect-error the contract has no such method
ContractPattern(heavy, 'walk')
export const filter = new ZeromeshExceptionFilter()
export const status: number = httpAnswerOf(new Error('x')).status
export const main = gateway
