// The operations endpoint of `zeromesh peer --http`: /metrics in Prometheus text format,
// /healthz (the event loop answers), /readyz (joined and serving; 503 from the moment the
// peer drains, so a load balancer or Kubernetes stops sending before it leaves).
import http from 'node:http'

/**
 * @param {object} o
 * @param {string} o.host
 * @param {number} o.port   0: an ephemeral port
 * @param {import('prom-client').Registry} o.registry
 * @param {() => boolean} o.ready
 * @returns {Promise<{ port: number, close(): Promise<void> }>}
 */
export async function startOpsServer ({ host, port, registry, ready }) {
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(res, 405, 'GET only\n')
    if (path === '/healthz') return send(res, 200, 'ok\n')
    if (path === '/readyz') return ready() ? send(res, 200, 'ready\n') : send(res, 503, 'not ready\n')
    if (path === '/metrics') {
      registry.metrics().then((text) => send(res, 200, text, registry.contentType), (err) => send(res, 500, `${err?.message ?? err}\n`))
      return
    }
    send(res, 404, 'not found: /metrics, /healthz, /readyz\n')
  })
  server.keepAliveTimeout = 5000
  await new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, () => { server.off('error', reject); resolve() })
  })
  return {
    port: server.address().port,
    close: () => new Promise((resolve) => { server.closeAllConnections?.(); server.close(() => resolve()) }),
  }
}

function send (res, status, body, type = 'text/plain; charset=utf-8') {
  res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body) })
  res.end(body)
}
