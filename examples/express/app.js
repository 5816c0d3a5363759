// An Express API whose CPU-heavy route runs on zeromesh peers (worker threads), so the API's
// own event loop stays free: the cheap routes answer in milliseconds however busy the heavy
// one is. Start peers, then the API:
//   npx zeromesh peer --bind tcp://127.0.0.1:5555 --handlers ./handlers.js --threads 2
//   ZEROMESH_SEEDS=tcp://127.0.0.1:5555 PORT=3000 node app.js     (TIMEOUT_MS: a call's deadline, 10000)
//   curl localhost:3000/ ; curl 'localhost:3000/primes?limit=200000'
// docs/guides/http-api.md explains the choices: one Client for the process, closed on
// shutdown; the timeout under the HTTP client's; the call typed by its contract (contract.js),
// whose schema refuses a bad query before it is sent; errors mapped to HTTP statuses
// (http-errors.js).
import express from 'express'
import { fileURLToPath } from 'node:url'
import { Client } from 'zeromesh'
import { primes } from './contract.js'
import { zeromeshErrors } from './http-errors.js'

/**
 * The API. `count({ limit })` resolves with { limit, count }: through zeromesh here, or inline
 * (bench/lib/http-server.js runs the same app under `cluster` that way, for comparison).
 */
export function createApp (count) {
  const app = express()
  app.get('/', (req, res) => { res.json({ hello: 'world' }) })
  app.get('/primes', async (req, res) => {
    // A bad limit is refused by the contract's schema: ERR_ZEROMESH_INVALID_INPUT, a 400.
    res.json(await count({ limit: Number(req.query.limit ?? 200000) })) // Express 5 sends a rejection to the error handler
  })
  app.use(zeromeshErrors)
  return app
}

/** Starts the API on `port` with a zeromesh Client on `seeds`; resolves with { server, client, port, close }. */
export async function start ({ seeds, port = 3000, host = '127.0.0.1', timeout = 10000 }) {
  // One client for the whole process: it keeps the connections, learns the peers, balances.
  const client = new Client({ seeds, timeout })
  const service = client.proxy(primes) // typed: count({ limit: number }) => Promise<{ limit, count }>
  const app = createApp((input) => service.count(input))
  const server = await new Promise((resolve) => { const s = app.listen(port, host, () => resolve(s)) })
  const close = async () => {
    await new Promise((resolve) => server.close(resolve)) // stop taking connections, finish what runs
    await client.close()
  }
  return { server, client, port: server.address().port, close }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const seeds = (process.env.ZEROMESH_SEEDS ?? 'tcp://127.0.0.1:5555').split(',')
  const api = await start({ seeds, port: Number(process.env.PORT ?? 3000), timeout: Number(process.env.TIMEOUT_MS ?? 10000) })
  console.log(`listening on http://127.0.0.1:${api.port}`)
  for (const signal of ['SIGTERM', 'SIGINT']) process.once(signal, () => { api.close().then(() => process.exit(0)) })
}
