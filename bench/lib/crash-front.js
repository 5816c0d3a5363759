// The HTTP front of bench/work/crash-loop.js: every GET / calls `countdown` on the
// mesh through a zeromesh Client with its default options, answering as zeromesh/http says;
// GET /stats gives the client's stats, the failures by code (with the first message of each), the share of the time it saw no peer up. Seeds from
// argv[2] (comma-separated); prints its port.
import http from 'node:http'
import fs from 'node:fs'
globalThis.__fs = fs
import { Client } from 'zeromesh'
import { httpAnswerOf } from 'zeromesh/http'

const client = new Client({ seeds: process.argv[2].split(',') })
const failures = {}
const messages = {} // the first failure's message for each code: why it failed
// How often the client saw no peer up (sampled every 50 ms while it serves): the share of the
// run in which every request had to wait.
const seen = { samples: 0, noneUp: 0 }
setInterval(() => {
  seen.samples++
  if (!client.peers().some((p) => p.state === 'up')) seen.noneUp++
}, 50).unref()
const server = http.createServer(async (req, res) => {
  if (req.url === '/stats') {
    res.setHeader('content-type', 'application/json')
    return res.end(JSON.stringify({ ...client.stats(), frontFailures: failures, frontMessages: messages, noneUp: seen.noneUp / Math.max(1, seen.samples) }))
  }
  try {
    res.end(await client.request('countdown', null))
  } catch (err) {
    const a = httpAnswerOf(err)
    failures[err.code] = (failures[err.code] ?? 0) + 1
    messages[err.code] ??= err.message
    res.statusCode = a.status
    if (a.retryAfter !== null) res.setHeader('retry-after', String(a.retryAfter))
    res.end(JSON.stringify(a.body))
  }
})
server.listen(0, '127.0.0.1', () => console.log(server.address().port))
process.on('SIGTERM', () => { server.close(); client.close().then(() => process.exit(0)) })
