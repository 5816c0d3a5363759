// Several results of one request (PROTOCOL.md 4.2.3): what a handler returns to answer more
// than one value, in order. zeromesh/nest returns it for a @MessagePattern whose Observable
// emitted several values, as Nest's own transports give the caller each of them. A request
// that accepts several values is answered VALUES with all of them; any other gets the last
// (nil for none), as before.
import { Status } from '../protocol/constants.js'
import { Packed, unpackValue } from '../protocol/frames.js'

export class Values {
  /** @param {unknown[]|Packed} list  the results in order, or a worker thread's MessagePack bytes of that array */
  constructor (list) {
    this.list = list
  }

  /** The last result, null for none: the answer to a caller that reads one value. */
  last () {
    const list = this.list instanceof Packed ? unpackValue(this.list.bytes) : this.list
    return list.length === 0 || list[list.length - 1] === undefined ? null : list[list.length - 1]
  }
}

/** The REPLY entry of request `req`'s result `value`: several values as `req` reads them, any other value OK. */
export function resultEntry (req, value) {
  if (!(value instanceof Values)) return [req.id, Status.OK, value]
  return req.values === true ? [req.id, Status.VALUES, value.list] : [req.id, Status.OK, value.last()]
}
