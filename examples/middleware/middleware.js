// Middleware for zeromesh peers and clients (docs/guides/middleware.md): each an
// `async (ctx, next) => ...` function, given to peer.use() / client.use(), or listed in a
// handler module's `middleware` export (handlers.js here).

/**
 * Peer side: the caller must send `authorization: Bearer <token>` with a token of `tokens`
 * (a Map of token -> tenant). The token goes no further: the handler (in its thread too) sees
 * the tenant as the header `x-tenant` instead. A missing or unknown token fails the call with
 * code E_UNAUTHORIZED (not retryable: another peer would refuse it too).
 */
export function bearerAuth (tokens) {
  return async (ctx, next) => {
    const { authorization, ...rest } = ctx.headers
    const token = /^Bearer (\S+)$/.exec(authorization ?? '')?.[1]
    const tenant = token === undefined ? undefined : tokens.get(token)
    if (tenant === undefined) throw Object.assign(new Error('unauthorized: send authorization: Bearer <token> with a known token'), { code: 'E_UNAUTHORIZED' })
    ctx.headers = { ...rest, 'x-tenant': tenant }
    return next()
  }
}

/**
 * Peer side: at most `limits[method]` calls of that method run at once on this peer; the
 * others wait in arrival order until a place frees, or fail with code E_CONCURRENCY when
 * their deadline passes first. Methods not named are not limited.
 */
export function limitConcurrency (limits) {
  const running = new Map() // method -> calls running
  const waiting = new Map() // method -> the wake-ups of the calls waiting, in arrival order
  return async (ctx, next) => {
    const limit = limits[ctx.method]
    if (limit === undefined) return next()
    const n = running.get(ctx.method) ?? 0
    if (n < limit) running.set(ctx.method, n + 1)
    else {
      // Wait for a call to end: it hands its place over (running stays as it is).
      await new Promise((resolve, reject) => {
        const queue = waiting.get(ctx.method) ?? []
        waiting.set(ctx.method, queue)
        const wake = () => { ctx.signal.removeEventListener('abort', give); resolve() }
        const give = () => { queue.splice(queue.indexOf(wake), 1); reject(Object.assign(new Error(`${ctx.method}: no place among its ${limit} before the deadline`), { code: 'E_CONCURRENCY' })) }
        queue.push(wake)
        ctx.signal.addEventListener('abort', give, { once: true })
      })
    }
    try {
      return await next()
    } finally {
      const wake = waiting.get(ctx.method)?.shift()
      if (wake !== undefined) wake()
      else running.set(ctx.method, running.get(ctx.method) - 1)
    }
  }
}

/** Peer side: one log line per call, with its method, the caller's tenant, how long it took and how it ended. Never the headers themselves. */
export function logRequests (logger) {
  return async (ctx, next) => {
    const t0 = performance.now()
    try {
      const result = await next()
      logger.info({ method: ctx.method, kind: ctx.kind, tenant: ctx.headers['x-tenant'] ?? null, ms: Math.round(performance.now() - t0), ok: true }, 'call')
      return result
    } catch (err) {
      logger.info({ method: ctx.method, kind: ctx.kind, tenant: ctx.headers['x-tenant'] ?? null, ms: Math.round(performance.now() - t0), ok: false, code: err?.code ?? null }, 'call')
      throw err
    }
  }
}

/** Client side: every call carries `authorization: Bearer <token>`. */
export function withToken (token) {
  return (ctx, next) => {
    ctx.headers.authorization = `Bearer ${token}`
    return next()
  }
}
