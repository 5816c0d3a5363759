// The handler bench/ladder.js --size calls on a zeromesh peer: a reply of `size` bytes, made
// fresh for each request as the raw server makes its own (raw-echo-server.js bytes).

/** A Buffer of `size` bytes (at most 16 MB). */
export function bytes ({ size }) {
  if (!Number.isInteger(size) || size < 0 || size > 16e6) throw Object.assign(new Error('bytes: size must be 0 to 16e6'), { code: 'BAD_SIZE' })
  return Buffer.alloc(size, 7)
}
