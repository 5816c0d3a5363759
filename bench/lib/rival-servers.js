// The echo servers of the rivals benchmark (bench/request-path/rivals.js), one per child
// process, each printing a line once it serves: `node rival-servers.js moleculer PORT` (a
// moleculer ServiceBroker, TCP transporter, UDP discovery off, itself in its urls),
// `node rival-servers.js cote` (a cote Responder; discovery by broadcast on 127.255.255.255).
// Run inside the benchmark's network namespace: cote binds every address.
import { fileURLToPath } from 'node:url'

/** cote's discovery, quiet, by broadcast on loopback (a namespace with loopback only has no other broadcast address). */
export const COTE_DISCOVERY = { log: false, statusLogsEnabled: false, helloLogsEnabled: false, broadcast: '127.255.255.255' }

const main = process.argv[1] === fileURLToPath(import.meta.url) // run as a server, not imported for COTE_DISCOVERY
const [kind, port] = main ? process.argv.slice(2) : []
if (kind === 'moleculer') {
  const { ServiceBroker } = await import('moleculer')
  const broker = new ServiceBroker({ nodeID: 'server', logger: false, transporter: { type: 'TCP', options: { udpDiscovery: false, port: Number(port), urls: [`127.0.0.1:${port}/server`] } } })
  broker.createService({ name: 'echo', actions: { echo: (ctx) => ctx.params } })
  await broker.start()
  process.stdout.write(`127.0.0.1:${port}/server\n`)
} else if (kind === 'cote') {
  const { default: cote } = await import('cote')
  const r = new cote.Responder({ name: 'echo', key: 'zeromesh-bench' }, COTE_DISCOVERY)
  r.on('echo', async (req) => req.payload)
  process.stdout.write('cote\n')
} else if (main) {
  process.stderr.write('usage: node bench/lib/rival-servers.js moleculer PORT | cote\n')
  process.exit(2)
}
