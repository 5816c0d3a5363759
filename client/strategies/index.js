// Resolves the `strategy` option: a name, or an object with `select(peers, request)` and
// optionally `onResult(peer, { latencyMs, error })`, called when an attempt ends.
// Health filtering happens before a strategy sees the list: it only ever gets `up` peers
// that this request has not tried yet, and never an empty list.
import { roundRobin } from './round-robin.js'
import { random } from './random.js'
import { p2c } from './p2c.js'
import { invalidArgument } from '../../protocol/errors.js'

const byName = { p2c, 'round-robin': roundRobin, random }

export const strategyNames = Object.keys(byName)

export function resolveStrategy (v, deps) {
  if (v === undefined) v = 'p2c'
  if (typeof v === 'string') {
    if (!Object.hasOwn(byName, v)) throw invalidArgument(`unknown strategy "${v}"; use one of ${strategyNames.join(', ')} or an object with select(peers, request)`)
    return byName[v](deps)
  }
  if (v !== null && typeof v === 'object' && typeof v.select === 'function') return v
  throw invalidArgument(`strategy must be one of ${strategyNames.join(', ')} or an object with select(peers, request)`)
}
