// A handler module with middleware, for `zeromesh peer`:
//   API_TOKENS=s3cret=acme,t0ken=globex npx zeromesh peer --bind tcp://127.0.0.1:5555 --handlers ./handlers.js
// The peer loads `middleware` on its main thread and runs every call through it, in order,
// before the handler (in its worker thread): logging, then auth, then a limit of one `report`
// at a time. The handlers read the caller's tenant from ctx.headers, set by the auth middleware.
import pino from 'pino'
import { bearerAuth, limitConcurrency, logRequests } from './middleware.js'

const tokens = new Map((process.env.API_TOKENS ?? '').split(',').filter(Boolean).map((pair) => pair.split('=')))

export const middleware = [
  logRequests(pino({ base: null }, pino.destination(2))), // JSON lines on stderr
  bearerAuth(tokens),
  limitConcurrency({ report: 1 }),
]

/** Who the peer thinks is calling: the tenant, and the headers the handler got. */
export function hello (args, ctx) {
  return { tenant: ctx.headers['x-tenant'], headers: Object.keys(ctx.headers).sort() }
}

/** A slow call, limited to one at a time: when it started and ended, to see it. */
export async function report ({ ms = 50 } = {}, ctx) {
  const start = Date.now()
  await new Promise((resolve) => setTimeout(resolve, ms))
  return { tenant: ctx.headers['x-tenant'], start, end: Date.now() }
}
