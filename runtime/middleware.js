// Middleware chains (docs/guides/middleware.md), the same on both sides: onion-style
// `async (ctx, next) => ...` functions run in the order given, each around the rest; the last
// `next()` runs the call itself. A middleware may change the ctx before next(), read what
// came back after it, answer without calling next(), or throw: a throw fails that call with
// the middleware's error (its `code` kept), never stalls it.
import { invalidArgument, ZeromeshError } from '../protocol/errors.js'

/** `fn` checked as a middleware for `where` ('peer.use(fn)', a module's `middleware`). */
export function middlewareOf (fn, where) {
  if (typeof fn !== 'function') throw invalidArgument(`${where}: a middleware must be a function async (ctx, next) => ..., got ${fn === null ? 'null' : typeof fn}`)
  return fn
}

/**
 * Runs `ctx` through `middleware` around `last()`; resolves with what the first middleware
 * returns (what next() resolved to, unless one changed it). A middleware that calls next()
 * twice fails the call.
 */
export function runChain (middleware, ctx, last) {
  if (middleware.length === 1) return runOne(middleware[0], ctx, last) // the common case, with fewer closures
  let reached = -1
  const step = (i) => {
    if (i <= reached) return Promise.reject(twice())
    reached = i
    try {
      return Promise.resolve(i === middleware.length ? last() : middleware[i](ctx, () => step(i + 1)))
    } catch (err) {
      return Promise.reject(err)
    }
  }
  return step(0)
}

function runOne (fn, ctx, last) {
  let called = false
  const next = () => {
    if (called) return Promise.reject(twice())
    called = true
    try {
      return Promise.resolve(last())
    } catch (err) {
      return Promise.reject(err)
    }
  }
  try {
    return Promise.resolve(fn(ctx, next))
  } catch (err) {
    return Promise.reject(err)
  }
}

function twice () {
  return new ZeromeshError('zeromesh: a middleware called next() more than once')
}
