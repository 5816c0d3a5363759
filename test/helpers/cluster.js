// In-process peers and clients over real ZeroMQ sockets on 127.0.0.1 (ephemeral ports),
// all closed by `cleanup()` in an afterEach hook.
import { Peer, Client } from '../../index.js'
import { stopAtOnce } from './insides.js'

export function harness () {
  const peers = []
  const clients = []
  const sockets = []
  return {
    async peer (options = {}) {
      const p = new Peer({ bind: 'tcp://127.0.0.1:0', ...options })
      peers.push(p)
      await p.start()
      return p
    },
    client (options = {}) {
      const c = new Client(options)
      clients.push(c)
      return c
    },
    /** A raw socket of the test's own (a zeromq.js socket, linger 0), closed at cleanup; returns it. */
    track (socket) {
      sockets.push(socket)
      return socket
    },
    async cleanup () {
      for (const s of sockets.splice(0)) s.close()
      await Promise.all(clients.splice(0).map((c) => c.close()))
      await Promise.all(peers.splice(0).map(stopAtOnce))
    },
  }
}

/** Expects `promise` to reject with an error whose `code` is `code`; returns the error. */
export async function rejectsWith (promise, code) {
  let err
  try {
    await promise
  } catch (e) {
    err = e
  }
  if (err === undefined) throw new Error(`expected a rejection with ${code}, but it resolved`)
  if (err.code !== code) throw new Error(`expected ${code}, got ${err.code}: ${err.message}`)
  return err
}
