// The command line's logger: pino, JSON lines on stderr when stderr is not a terminal (for
// log collectors), pretty lines on a terminal. The library itself logs only through the
// `logger` option it is given, and is silent without one.
import { createRequire } from 'node:module'
import pino from 'pino'
import { invalidArgument } from '../protocol/errors.js'

export const LOG_LEVELS = Object.freeze(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'])

/**
 * @param {object} [o]
 * @param {string} [o.level]   one of LOG_LEVELS (default 'info')
 * @param {{ isTTY?: boolean, fd?: number }} [o.stream]  where the lines go (default stderr)
 * @param {boolean} [o.pretty] default: whether the stream is a terminal
 */
export function cliLogger ({ level = 'info', stream = process.stderr, pretty: usePretty = stream.isTTY === true } = {}) {
  if (!LOG_LEVELS.includes(level)) throw invalidArgument(`log level must be one of ${LOG_LEVELS.join(', ')}, got ${JSON.stringify(level)}`)
  const fd = stream.fd ?? 2
  // Synchronous writes: a line logged just before process.exit() is never lost.
  // pino-pretty (30 modules, about 27 ms) loads only for a terminal: a peer under a supervisor
  // writes JSON and starts without it.
  const dest = usePretty
    ? createRequire(import.meta.url)('pino-pretty')({ destination: fd, sync: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' })
    : pino.destination({ dest: fd, sync: true })
  return pino({ level, base: { pid: process.pid }, timestamp: pino.stdTimeFunctions.isoTime, formatters: { level: (label) => ({ level: label }) } }, dest)
}
