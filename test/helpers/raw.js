// A raw Dealer that speaks the protocol itself, as a client in another language would: one
// frame out, the decoded answer back. Closed by `close()` in an afterEach hook.
import * as zmq from 'zeromq'
import { decode } from '../../protocol/index.js'

export function rawAsker () {
  const sockets = []
  return {
    /** Sends `frame` to `endpoint` on a fresh Dealer; resolves with the first answer decoded (rejects after 3 s). */
    async ask (endpoint, frame) {
      const s = new zmq.Dealer({ linger: 0, sendTimeout: 1000, receiveTimeout: 3000 })
      sockets.push(s)
      s.connect(endpoint)
      await s.send(frame)
      const [answer] = await s.receive()
      return { frame: answer, msg: decode(answer) }
    },
    close () {
      for (const s of sockets.splice(0)) s.close()
    },
  }
}
