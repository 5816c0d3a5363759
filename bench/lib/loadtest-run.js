// loadtest (the scaling tutorials' load generator) in a process of its own, so it does not
// share an event loop with what measures beside it: `node bench/lib/loadtest-run.js URL N C`
// runs `loadtest -n N -c C -k URL` and prints its result as one JSON line.
import { loadTest } from 'loadtest'

const [url, n, c] = process.argv.slice(2)
const r = await loadTest({ url, maxRequests: Number(n), concurrency: Number(c), agentKeepAlive: true, quiet: true })
process.stdout.write(JSON.stringify({
  totalTimeSeconds: r.totalTimeSeconds,
  rps: r.effectiveRps,
  requests: r.totalRequests,
  errors: r.totalErrors,
  errorCodes: r.errorCodes,
  p50: r.percentiles['50'],
  p90: r.percentiles['90'],
  p99: r.percentiles['99'],
  max: r.maxLatencyMs,
}) + '\n')
