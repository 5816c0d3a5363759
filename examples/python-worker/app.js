// An Express API whose CPU-heavy route is served by Python peers (work.py), found through the
// mesh like any peer: the API's own event loop stays free, and the Python processes can be
// many, on many hosts. Start a Node seed peer (any peer: it need serve nothing), the Python
// peers, then the API:
//   npx zeromesh peer --bind tcp://127.0.0.1:5555
//   (cd examples/python-worker && python -m zeromesh peer --seeds tcp://127.0.0.1:5555 --handlers work --workers 2)
//   ZEROMESH_SEEDS=tcp://127.0.0.1:5555 PORT=3000 node app.js
//   curl localhost:3000/ ; curl 'localhost:3000/primes?limit=200000'
// A Python handler's error with a `code` comes back as ERR_ZEROMESH_REMOTE with that remoteCode:
// mapped to 400 here; the rest of the errors as zeromesh/http says (busy: 503 with Retry-After).
import express from 'express'
import { fileURLToPath } from 'node:url'
import { Client } from 'zeromesh'
import { httpAnswerOf } from 'zeromesh/http'

/** Starts the API on `port` with a Client on `seeds`: resolves with { port, close }. */
export async function start ({ seeds, port = 3000, host = '127.0.0.1', timeout = 10000 }) {
  const client = new Client({ seeds, timeout }) // one for the process
  const app = express()
  app.get('/', (req, res) => { res.json({ hello: 'world' }) })
  app.get('/primes', async (req, res) => {
    res.json(await client.request('count_primes', { limit: Number(req.query.limit ?? 200000) }))
  })
  app.use((err, req, res, next) => {
    if (err?.remoteCode === 'E_LIMIT') return res.status(400).json({ error: err.message })
    const answer = httpAnswerOf(err)
    if (answer.retryAfter !== null) res.set('Retry-After', String(answer.retryAfter))
    res.status(answer.status).json(answer.body)
  })
  const server = await new Promise((resolve) => { const s = app.listen(port, host, () => resolve(s)) })
  return {
    port: server.address().port,
    close: async () => { await new Promise((resolve) => server.close(resolve)); await client.close() },
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const seeds = (process.env.ZEROMESH_SEEDS ?? 'tcp://127.0.0.1:5555').split(',')
  const api = await start({ seeds, port: Number(process.env.PORT ?? 3000), timeout: Number(process.env.TIMEOUT_MS ?? 10000) })
  console.log(`listening on http://127.0.0.1:${api.port}`)
  for (const signal of ['SIGTERM', 'SIGINT']) process.once(signal, () => { api.close().then(() => process.exit(0)) })
}
