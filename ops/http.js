// The operations endpoint of `zeromesh peer --http`: /metrics in Prometheus text format,
// /healthz (the event loop answers), /readyz (joined and serving; 503 from the moment the
// peer drains, so a load balancer or Kubernetes stops sending before it leaves), and, when
// the view is on, the live view at / (docs/guides/observing.md): a page, its script and style,
// and /events, the view's state once a second as server-sent events (/state: one snapshot).
// The view's routes answer only a Host naming this machine's loopback or the address bound
// (a page of another site cannot read them through DNS rebinding), under a strict
// Content-Security-Policy, to at most MAX_VIEWERS event streams at once. With `documents`,
// the peer's own OpenAPI and AsyncAPI documents too (/openapi.json, /asyncapi.json: what it
// serves, made when asked, as zeromesh/http makes them).
import http from 'node:http'
import { readFileSync } from 'node:fs'

const MAX_VIEWERS = 8
const TICK_MS = 1000
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
const PAGE = {
  '/': ['index.html', 'text/html; charset=utf-8'],
  '/view.js': ['view.js', 'text/javascript; charset=utf-8'],
  '/view.css': ['view.css', 'text/css; charset=utf-8'],
  '/favicon.svg': ['favicon.svg', 'image/svg+xml'],
}
const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '[::1]']

/**
 * @param {object} o
 * @param {string} o.host
 * @param {number} o.port   0: an ephemeral port
 * @param {import('prom-client').Registry} o.registry
 * @param {() => boolean} o.ready
 * @param {import('./view.js').ClusterView|null} [o.view]  the live view's state, or null: no page
 * @param {Record<string, () => object>|null} [o.documents]  a path ('/openapi.json') -> the JSON document it answers, made when asked
 * @returns {Promise<{ port: number, close(): Promise<void> }>}
 */
export async function startOpsServer ({ host, port, registry, ready, view = null, documents = null }) {
  const files = view === null ? null : Object.fromEntries(Object.entries(PAGE).map(([route, [file, type]]) => [route, [readFileSync(new URL(`./page/${file}`, import.meta.url)), type]]))
  const viewers = new Set()
  let hosts = null // the Host values the view answers, once the port is known
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(res, 405, 'GET only\n')
    if (path === '/healthz') return send(res, 200, 'ok\n')
    if (path === '/readyz') return ready() ? send(res, 200, 'ready\n') : send(res, 503, 'not ready\n')
    if (path === '/metrics') {
      registry.metrics().then((text) => send(res, 200, text, registry.contentType), (err) => send(res, 500, `${err?.message ?? err}\n`))
      return
    }
    if (documents !== null && Object.hasOwn(documents, path)) {
      let doc
      try { doc = JSON.stringify(documents[path]()) } catch (err) { return send(res, 500, `${err?.message ?? err}\n`) }
      return send(res, 200, doc, 'application/json')
    }
    const page = files?.[path]
    if (view === null || (page === undefined && path !== '/events' && path !== '/state')) {
      return send(res, 404, `not found: /metrics, /healthz, /readyz${documents === null ? '' : `, ${Object.keys(documents).join(', ')}`}${view === null ? '' : ', / (the live view)'}\n`)
    }
    if (!hosts.has((req.headers.host ?? '').toLowerCase())) return send(res, 421, `the live view answers only http://${[...hosts][0]}/ and other loopback names\n`)
    if (page !== undefined) return send(res, 200, page[0], page[1], SECURE_HEADERS)
    if (path === '/state') return send(res, 200, JSON.stringify(view.current), 'application/json', SECURE_HEADERS)
    if (viewers.size >= MAX_VIEWERS) return send(res, 503, `at most ${MAX_VIEWERS} viewers at once\n`, undefined, { 'retry-after': '10' })
    res.writeHead(200, { ...SECURE_HEADERS, 'content-type': 'text/event-stream', 'cache-control': 'no-store' })
    res.write(`retry: ${TICK_MS * 2}\ndata: ${JSON.stringify(view.current)}\n\n`)
    viewers.add(res)
    view.viewing(viewers.size)
    res.on('close', () => { viewers.delete(res); view.viewing(viewers.size) })
  })
  server.keepAliveTimeout = 5000
  await new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, () => { server.off('error', reject); resolve() })
  })
  const bound = server.address().port
  let ticker = null
  if (view !== null) {
    const names = [...LOOPBACK_NAMES]
    if (host !== '0.0.0.0' && host !== '::' && !names.includes(host)) names.push(host.includes(':') ? `[${host}]` : host)
    hosts = new Set(names.flatMap((n) => [n, `${n}:${bound}`]))
    ticker = setInterval(() => {
      const state = view.sample()
      if (viewers.size === 0) return
      const frame = `data: ${JSON.stringify(state)}\n\n`
      for (const res of viewers) res.write(frame)
    }, TICK_MS)
    ticker.unref()
  }
  return {
    port: bound,
    close: () => new Promise((resolve) => {
      if (ticker !== null) clearInterval(ticker)
      view?.close()
      for (const res of viewers) res.destroy()
      server.closeAllConnections?.()
      server.close(() => resolve())
    }),
  }
}

const SECURE_HEADERS = Object.freeze({
  'content-security-policy': CSP,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cache-control': 'no-store',
})

function send (res, status, body, type = 'text/plain; charset=utf-8', headers = {}) {
  res.writeHead(status, { ...headers, 'content-type': type, 'content-length': Buffer.byteLength(body) })
  res.end(body)
}
