// The lab's arithmetic (bench/cluster/lab.js), apart from its processes so that it can be
// tested: how evenly load spread, which deaths the lab caused and which were false, and the
// table it prints.

/** Busiest over mean, and the 99th percentile over mean, of `values` (numbers). */
export function spread (values) {
  const sorted = [...values].sort((a, b) => a - b)
  const mean = sorted.reduce((s, v) => s + v, 0) / sorted.length
  const p99 = sorted[Math.min(sorted.length - 1, Math.ceil(0.99 * sorted.length) - 1)]
  const max = sorted[sorted.length - 1]
  return { n: sorted.length, mean, max, p99, maxOverMean: max / mean, p99OverMean: p99 / mean }
}

// A death declared this long after a fault ended still counts as the fault's: a suspicion
// raised during it runs out after it (up to the suspicion timeout, stretched by local health).
export const FAULT_GRACE_MS = 15000

/**
 * Splits deaths ({ viewer, endpoint, incarnation, at }) into those the lab caused and false
 * ones (a live peer declared dead). `faults`: { kind: 'down' | 'gone' | 'blackhole' | 'cut',
 * hosts: Set of host names (for a cut: one side), from, to (null while it lasts) };
 * `hostOf(endpoint)` names a peer's host. 'down' is a host killed: any death of its peers
 * until the grace after its return. 'gone' is a host whose processes exited after a graceful
 * stop (`from`: when they had exited), back at `to` or never: a death of one of its peers in
 * an incarnation begun before `from` (the process that exited, wherever the news of it is
 * late) is true; one of the incarnation after it, or of a peer still draining, is false.
 * `unheardLeaves`: the caused deaths that only a 'gone' fault explains (a graceful leave that
 * did not reach the viewer: the member is gone, but ended dead, not left).
 */
export function classifyDeaths (deaths, faults, hostOf) {
  const caused = []
  const falseDeaths = []
  const unheardLeaves = []
  for (const d of deaths) {
    const v = hostOf(d.viewer)
    const e = hostOf(d.endpoint)
    const by = faults.filter((f) => {
      if (d.at < f.from || (f.to !== null && f.kind !== 'gone' && d.at > f.to + FAULT_GRACE_MS)) return false
      if (f.kind === 'down') return f.hosts.has(e)
      if (f.kind === 'gone') return f.hosts.has(e) && d.incarnation !== undefined && d.incarnation < f.from
      if (f.kind === 'blackhole') return f.hosts.has(e) || f.hosts.has(v)
      return f.hosts.has(v) !== f.hosts.has(e) // a cut: one on each side
    })
    ;(by.length > 0 ? caused : falseDeaths).push(d)
    if (by.length > 0 && by.every((f) => f.kind === 'gone')) unheardLeaves.push(d)
  }
  return { caused, falseDeaths, unheardLeaves }
}

/**
 * Where false deaths fell against the lab's graceful restarts (`restarts`: { host, stop, exited,
 * ready }, wall-clock ms; `ready` null while it is down): of a member whose host was draining
 * (`draining`: stop to exit), down (`down`: exit to ready), or back at most `grace` ms
 * (`back`: the old incarnation's death heard late; `backNew`: the new one's, an incarnation,
 * a wall-clock start, from after the old process exited), or `other`. Counts, for the lab's
 * diagnosis of a phase it does not count as a fault.
 */
export function deathsAroundRestarts (deaths, restarts, hostOf, grace = FAULT_GRACE_MS) {
  const out = { draining: 0, down: 0, back: 0, backNew: 0, other: 0 }
  for (const d of deaths) {
    const h = hostOf(d.endpoint)
    const r = restarts.find((x) => x.host === h && d.at >= x.stop && (x.ready === null || d.at <= x.ready + grace))
    if (r === undefined) out.other++
    else if (d.at < r.exited) out.draining++
    else if (r.ready === null || d.at < r.ready) out.down++
    else if (d.incarnation !== undefined && d.incarnation >= r.exited) out.backNew++
    else out.back++
  }
  return out
}

/** Adds `b`'s outcome counts into `a` (per-kind { ok, failed: { code: n }, inDoubt }). */
export function addOutcomes (a, b) {
  for (const kind of ['idempotent', 'nonIdempotent', 'publish']) {
    const x = (a[kind] ??= { ok: 0, failed: {}, inDoubt: 0 })
    const y = b[kind]
    if (y === undefined) continue
    x.ok += y.ok
    x.inDoubt += y.inDoubt ?? 0
    for (const [code, n] of Object.entries(y.failed)) x.failed[code] = (x.failed[code] ?? 0) + n
  }
  return a
}

export const failedCount = (o) => Object.values(o?.failed ?? {}).reduce((s, n) => s + n, 0)

/** A Markdown table: `columns` are [title, (row) => text]. */
export function table (rows, columns) {
  const head = `| ${columns.map((c) => c[0]).join(' | ')} |`
  const rule = `| ${columns.map(() => '---').join(' | ')} |`
  return [head, rule, ...rows.map((r) => `| ${columns.map((c) => c[1](r)).join(' | ')} |`)].join('\n')
}
