// Seeds found by name in DNS, as containers and Kubernetes publish peers:
//   dns://NAME:PORT                every A and AAAA record of NAME, each at PORT (memberlist's
//                                  way; a Kubernetes headless Service has one per ready pod)
//   dns+srv://_service._proto.NAME every SRV record (Kubernetes named ports, Consul), each
//                                  target's A and AAAA records at the record's port
// The names are resolved at start, again every `interval`, and whenever the owner finds no
// peer reachable (refresh()); `onChange(endpoints)` hears the new set after each change.
import { Resolver } from 'node:dns/promises'
import net from 'node:net'
import { invalidArgument } from '../protocol/errors.js'
import { systemClock } from '../runtime/clock.js'
import { seedList, isWireEndpoint } from '../protocol/endpoint.js'

const MIN_REFRESH_MS = 1000 // refresh() on demand at most this often

/**
 * Parses a DNS seed. Returns { kind: 'dns', name, port } or { kind: 'srv', name }, or null when
 * `seed` is not a DNS seed (an endpoint). Throws on a DNS seed that is malformed.
 */
export function parseDnsSeed (seed) {
  if (typeof seed !== 'string') return null
  if (seed.startsWith('dns+srv://')) {
    const name = seed.slice('dns+srv://'.length)
    if (!isDnsName(name)) throw invalidArgument(`seed ${JSON.stringify(seed)}: write dns+srv://_service._proto.NAME, such as dns+srv://_zeromesh._tcp.peers.default.svc.cluster.local`)
    return { kind: 'srv', name }
  }
  if (seed.startsWith('dns://')) {
    const m = /^dns:\/\/([^:/]+):(\d{1,5})$/.exec(seed)
    if (m === null || !isDnsName(m[1]) || Number(m[2]) < 1 || Number(m[2]) > 65535) {
      throw invalidArgument(`seed ${JSON.stringify(seed)}: write dns://NAME:PORT, such as dns://peers.default.svc.cluster.local:5555`)
    }
    return { kind: 'dns', name: m[1], port: Number(m[2]) }
  }
  return null
}

function isDnsName (name) {
  return name.length > 0 && name.length <= 253 && /^[A-Za-z0-9_]([A-Za-z0-9_-]{0,62})(\.[A-Za-z0-9_]([A-Za-z0-9_-]{0,62}))*\.?$/.test(name)
}

/** The tcp endpoint of `address` (v4 or v6) at `port`, in normal form. */
function endpointOf (address, port) {
  return net.isIPv6(address) ? `tcp://[${address}]:${port}` : `tcp://${address}:${port}`
}

export class DnsSeeds {
  /**
   * @param {object} o
   * @param {{ kind: string, name: string, port?: number }[]} o.seeds  parsed by parseDnsSeed
   * @param {string[]} [o.servers]   DNS servers ('IP' or 'IP:PORT'); default: the system's
   * @param {number} [o.interval]    re-resolve this often, ms (0: only at start and on refresh())
   * @param {number} [o.timeout]     per query, ms
   * @param {(endpoints: string[]) => void} o.onChange
   * @param {(err: Error, name: string) => void} [o.onError]  a name that did not resolve
   * @param {{ now(): number, setTimeout: Function, clearTimeout: Function }} [o.clock]
   */
  constructor (o) {
    this.o = o
    this.clock = o.clock ?? systemClock
    this.resolver = new Resolver({ timeout: o.timeout ?? 2000, tries: 2 })
    if (o.servers?.length) this.resolver.setServers(o.servers)
    this.endpoints = [] // the last resolved set, sorted
    this.timer = null
    this.running = false
    this.resolving = null
    this.lastRefresh = -Infinity
    this.counts = { resolutions: 0, failures: 0, changes: 0 }
  }

  /** Resolves now, then every `interval`. Resolves once the first resolution is done. */
  start () {
    this.running = true
    return this.resolve()
  }

  /** Resolve again soon (at most once per MIN_REFRESH_MS): nothing is reachable. */
  refresh () {
    if (!this.running || this.clock.now() - this.lastRefresh < MIN_REFRESH_MS) return
    this.resolve()
  }

  resolve () {
    if (this.resolving !== null) return this.resolving
    this.lastRefresh = this.clock.now()
    if (this.timer !== null) { this.clock.clearTimeout(this.timer); this.timer = null }
    this.resolving = this.resolveAll().then((found) => {
      this.resolving = null
      if (!this.running) return
      this.counts.resolutions++
      const next = [...new Set(found)].sort()
      if (next.join(' ') !== this.endpoints.join(' ')) {
        this.endpoints = next
        this.counts.changes++
        this.o.onChange(next)
      }
      if (this.o.interval > 0) this.timer = this.clock.setTimeout(() => { this.timer = null; this.resolve() }, this.o.interval)
    })
    return this.resolving
  }

  async resolveAll () {
    const lists = await Promise.all(this.o.seeds.map((s) => s.kind === 'srv' ? this.srv(s.name) : this.addresses(s.name, s.port)))
    return lists.flat()
  }

  /** A and AAAA records of `name`, as endpoints at `port`; none when it does not resolve. */
  async addresses (name, port) {
    const out = []
    let found = false
    let lastErr = null
    for (const family of ['resolve4', 'resolve6']) {
      try {
        for (const a of await this.resolver[family](name)) {
          // An answer comes off the network: used only if it is an endpoint of the grammar.
          const ep = endpointOf(a, port)
          if (isWireEndpoint(ep)) out.push(ep)
        }
        found = true
      } catch (err) {
        if (err.code !== 'ENODATA') lastErr = err
      }
    }
    if (!found && lastErr !== null) this.failed(lastErr, name)
    return out
  }

  async srv (name) {
    let records
    try {
      records = await this.resolver.resolveSrv(name)
    } catch (err) {
      this.failed(err, name)
      return []
    }
    const lists = await Promise.all(records.map((r) => this.addresses(r.name, r.port)))
    return lists.flat()
  }

  failed (err, name) {
    if (!this.running) return // stop() cancels the queries in flight: not a failure
    this.counts.failures++
    this.o.onError?.(err, name)
  }

  stop () {
    this.running = false
    if (this.timer !== null) this.clock.clearTimeout(this.timer)
    this.timer = null
    this.resolver.cancel()
  }
}

/**
 * The DnsSeeds of a Peer's or Client's resolved options (`dnsSeeds`, `dns`, `clock`,
 * `logger`), or null when its seeds name no DNS record. Names that do not resolve are logged.
 */
export function dnsSeedsOf (o, onChange) {
  if (o.dnsSeeds.length === 0) return null
  return new DnsSeeds({
    seeds: o.dnsSeeds,
    ...o.dns,
    clock: o.clock,
    onChange,
    onError: (err, name) => o.logger.warn({ name, err: err.code ?? err.message }, `DNS seed ${name} did not resolve (${err.code ?? err.message}); it is tried again`),
  })
}

/**
 * A `seeds` option: an array or a comma-separated string of endpoints and DNS seeds. Returns
 * { endpoints, dns }: the endpoints in normal form (protocol/endpoint.js), the DNS seeds parsed.
 */
export function splitSeeds (v, name = 'seeds') {
  if (v === undefined) return { endpoints: [], dns: [] }
  const list = typeof v === 'string' ? v.split(',').map((s) => s.trim()).filter(Boolean) : v
  if (!Array.isArray(list)) throw invalidArgument(`${name} must be an array of endpoints such as ["tcp://127.0.0.1:5555"] or DNS seeds such as "dns://peers.local:5555"`)
  const dns = []
  const endpoints = []
  for (const s of list) {
    const d = parseDnsSeed(s)
    if (d === null) endpoints.push(s)
    else if (!dns.some((x) => x.kind === d.kind && x.name === d.name && x.port === d.port)) dns.push(d)
  }
  return { endpoints: seedList(endpoints, name), dns }
}

/** A `dns` option: { servers, interval, timeout }, each optional. */
export function dnsOption (v) {
  if (v === undefined) return { servers: [], interval: 30000, timeout: 2000 }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw invalidArgument('dns must be { servers, interval, timeout }, such as { servers: ["10.96.0.10"], interval: 30000 }')
  for (const k of Object.keys(v)) if (!['servers', 'interval', 'timeout'].includes(k)) throw invalidArgument(`unknown dns key "${k}"; known keys: servers, interval, timeout`)
  const servers = v.servers ?? []
  if (!Array.isArray(servers) || !servers.every((s) => typeof s === 'string' && /^(\[[0-9a-fA-F:.]+\]|[0-9.]+|[0-9a-fA-F:]+)(:\d{1,5})?$/.test(s))) {
    throw invalidArgument('dns.servers must be IP addresses, with an optional :PORT, such as ["10.96.0.10", "127.0.0.1:5353"]')
  }
  const interval = v.interval ?? 30000
  const timeout = v.timeout ?? 2000
  if (!Number.isInteger(interval) || interval < 0 || interval > 2 ** 31 - 1) throw invalidArgument(`dns.interval must be a whole number of milliseconds (0: only at start and when no peer is reachable), got ${interval}`)
  if (!Number.isInteger(timeout) || timeout < 1 || timeout > 60000) throw invalidArgument(`dns.timeout must be a whole number of milliseconds from 1 to 60000, got ${timeout}`)
  return { servers, interval, timeout }
}
