// A secured client proves its key on each new connection (protocol/key-proof.js,
// PROTOCOL.md 4.9): it asks the peer (PING), and answers the challenge its PONG carries with
// KEY_PROOF. The peer then knows which key this connection holds, and can stop answering it
// at once when that key is revoked, without closing anyone else's. A peer that sends no
// challenge (plain, or older) is asked nothing more. Nothing else goes on the connection
// until the proof is on its way (connections.js): a request ahead of it would find the
// connection unproven, and a revocation then would make the peer close every connection.
import { encodePing, encodeKeyProof } from '../protocol/codec.js'
import { keyProof } from '../protocol/key-proof.js'
import { z85Decode } from '../transport/keys.js'

export class KeyProver {
  /**
   * @param {object} o
   * @param {{ serverKey: string, publicKey: string, secretKey: string }} o.credentials  Z85
   * @param {import('../transport/questions.js').Questions} o.questions
   * @param {(endpoint: string, frames: Buffer[], done: (code: string|null) => void) => void} o.send
   * @param {number} o.timeout  wait this long for the PONG
   * @param {{ proofs: number }} o.counts
   */
  constructor (o) {
    this.o = o
    this.own = { secret: z85Decode(o.credentials.secretKey), publicKey: z85Decode(o.credentials.publicKey) }
    this.cluster = z85Decode(o.credentials.serverKey)
  }

  /**
   * `endpoint`'s connection is new: prove this client's key on it. `done()` once the proof is
   * handed to ZeroMQ (what is sent after it arrives after it), or at once when the peer
   * asks for none, or did not answer within the timeout.
   */
  prove (endpoint, done) {
    this.o.questions.ask(endpoint, encodePing, this.o.timeout, (pong) => {
      const ch = pong?.meta?.ch
      if (!(ch instanceof Uint8Array) || ch.length === 0 || ch.length > 64) return done()
      const mac = keyProof(this.own, this.cluster, ch)
      this.o.send(endpoint, [encodeKeyProof(this.own.publicKey, mac)], () => done())
      this.o.counts.proofs++
    })
  }
}
