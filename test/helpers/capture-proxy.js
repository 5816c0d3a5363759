// A TCP relay on 127.0.0.1 (ephemeral port) that keeps every byte it carries both ways, so a
// test can look at what travels on the wire. `target` can be set after the relay listens.
import net from 'node:net'

export async function captureProxy () {
  const chunks = []
  const sockets = new Set()
  const relay = {
    target: null, // port to forward to
    port: 0,
    bytes: () => Buffer.concat(chunks),
    /** Whether `text` appears anywhere in what was carried. */
    saw: (text) => Buffer.concat(chunks).includes(Buffer.from(text)),
    close: () => new Promise((resolve) => {
      for (const s of sockets) s.destroy()
      server.close(() => resolve())
    }),
  }
  const server = net.createServer((a) => {
    if (relay.target === null) { a.destroy(); return }
    const b = net.connect(relay.target, '127.0.0.1')
    for (const s of [a, b]) { sockets.add(s); s.on('close', () => sockets.delete(s)) }
    a.on('data', (d) => { chunks.push(d); b.write(d) })
    b.on('data', (d) => { chunks.push(d); a.write(d) })
    a.on('error', () => b.destroy()); b.on('error', () => a.destroy())
    a.on('close', () => b.destroy()); b.on('close', () => a.destroy())
  })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  relay.port = server.address().port
  return relay
}
