// What one request costs each side, in counts, at 1 in flight: zeromesh (a `zeromesh peer` with
// the demo handlers on its main thread, and a Client in a child process) against raw zeromq.js
// (bin/bench/raw-echo-server.js and harness.js's Dealer, one message per request). Counts, not
// times: they hold on a loaded machine where req/s and latency do not. Per request, for each
// side and each of its threads:
//   - context switches, voluntary and not (/proc/PID/task/TID/status), over a plain window;
//   - system calls by name, over a second window with `strace -f` attached to both processes
//     (ptrace stops every call: its times are not the plain ones, and it adds switches of its
//     own, so switches come from the plain window only). epoll_wait on a JS thread stands for
//     its event-loop turns (libuv waits once per turn);
//   - on the client's JS thread, over a third window with it instrumented (an async_hooks init
//     hook, wrapped timer functions: bench/lib/wakeups-client.js): promises, timers and
//     immediates made, timers armed and cleared. V8 makes some promises only while a hook
//     watches (await's throwaway ones), so these are upper bounds, the same for both systems.
// Each window follows a warm-up, in fresh processes per run; the systems alternate run by run.
//
//   node bench/request-path/wakeups.js [--n 20000] [--warmup 3000] [--runs 2] [--systems raw,zeromesh] [--no-strace] [--json]
import { spawn } from 'node:child_process'
import { readFileSync, readdirSync, rmSync, createReadStream, existsSync } from 'node:fs'
import { createInterface } from 'node:readline'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { parseArgs } from 'node:util'
import os from 'node:os'
import path from 'node:path'
import { child, killChildren } from '../../bin/bench/harness.js'

const { values } = parseArgs({
  options: {
    n: { type: 'string', default: '20000' },
    warmup: { type: 'string', default: '3000' },
    runs: { type: 'string', default: '2' },
    'no-strace': { type: 'boolean', default: false },
    json: { type: 'boolean', default: false },
    systems: { type: 'string', default: 'raw,zeromesh' },
  },
})
const N = Number(values.n)
const WARMUP = Number(values.warmup)
const RUNS = Number(values.runs)
const STRACE = !values['no-strace']
const SYSTEMS = values.systems.split(',')
const WINDOW_MS = 600000 // any window longer than this has hung
const IDLE_MS = 2000 //     the window with no requests
const here = (p) => fileURLToPath(new URL(p, import.meta.url))
const root = here('../..')

const HOOKS = ['--import', pathToFileURL(here('../lib/wakeups-hooks.js')).href] // the servers' instrumented window, on SIGUSR2
const SERVERS = {
  zeromesh: [...HOOKS, path.join(root, 'bin/zeromesh.js'), 'peer', '--handlers', path.join(root, 'demo/handlers.js'), '--threads', '0', '--log-level', 'silent'],
  raw: [...HOOKS, path.join(root, 'bin/bench/raw-echo-server.js')],
}

/** The group a thread's counts go to: its JS thread, libzmq's threads by name, the rest. */
function groupOf (pid, tid, name) {
  if (Number(tid) === pid) return 'JS'
  if (name.startsWith('ZMQbg/')) return name
  return 'other' // V8's platform workers and libuv's pool: Node 20 names them all "node"
}
const GROUPS = ['JS', 'ZMQbg/IO/0', 'ZMQbg/Reaper', 'other']

/** tid -> { group, voluntary, involuntary, cpuNs } for every thread of `pid` (cpuNs: schedstat's time on a CPU). */
function switches (pid) {
  const out = new Map()
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const status = readFileSync(`/proc/${pid}/task/${tid}/status`, 'utf8')
      const name = readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim()
      out.set(tid, {
        group: groupOf(pid, tid, name),
        voluntary: Number(/^voluntary_ctxt_switches:\s+(\d+)/m.exec(status)[1]),
        involuntary: Number(/^nonvoluntary_ctxt_switches:\s+(\d+)/m.exec(status)[1]),
        cpuNs: Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]),
      })
    } catch { /* a thread that ended meanwhile */ }
  }
  return out
}

/** Switches and CPU between two snapshots, by group: { group: { voluntary, involuntary, cpuNs } } (a thread born between counts from 0). */
function switchesBetween (before, after) {
  const out = {}
  for (const [tid, a] of after) {
    const b = before.get(tid) ?? { voluntary: 0, involuntary: 0, cpuNs: 0 }
    const g = out[a.group] ??= { voluntary: 0, involuntary: 0, cpuNs: 0 }
    g.voluntary += a.voluntary - b.voluntary
    g.involuntary += a.involuntary - b.involuntary
    g.cpuNs += a.cpuNs - b.cpuNs
  }
  return out
}

/** Every thread of `pid` has a tracer. */
function traced (pid) {
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      if (/^TracerPid:\s+0$/m.test(readFileSync(`/proc/${pid}/task/${tid}/status`, 'utf8'))) return false
    } catch {}
  }
  return true
}

async function until (what, cond, ms = 20000) {
  const end = Date.now() + ms
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

const tracers = new Set() // { s, file } of every strace started: stopped, and their files removed, however the run ends
function stopTracers () {
  for (const { s, file } of tracers) { try { s.kill('SIGKILL') } catch {} rmSync(file, { force: true }) }
  tracers.clear()
}

/** `strace -f` attached to every thread of `pid`, writing to a file; stop() detaches and resolves with { group: { syscall: count } }. */
async function straceOf (pid) {
  const file = path.join(os.tmpdir(), `zeromesh-wakeups-${process.pid}-${pid}.trace`)
  const s = spawn('strace', ['-f', '-qq', '-s', '0', '-o', file, '-p', String(pid)], { stdio: 'ignore' })
  tracers.add({ s, file })
  const exited = new Promise((resolve) => s.on('exit', resolve))
  await until(`strace on ${pid}`, () => traced(pid))
  return {
    async stop () {
      s.kill('SIGINT')
      await exited
      const names = new Map() // tid -> group
      for (const tid of readdirSync(`/proc/${pid}/task`)) {
        try { names.set(tid, groupOf(pid, tid, readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim())) } catch {}
      }
      const out = {}
      const lines = createInterface({ input: createReadStream(file) })
      for await (const line of lines) {
        const m = /^(\d+)\s+([a-z_0-9]+)\(/.exec(line) // a call's start; "<... resumed>", signals and exits are not calls
        if (m === null) continue
        const g = out[names.get(m[1]) ?? 'other'] ??= {}
        g[m[2]] = (g[m[2]] ?? 0) + 1
      }
      rmSync(file, { force: true })
      return out
    },
  }
}

/** The client process: send(line) and next() (its next JSON line). */
function clientOf (system, endpoint) {
  const c = spawn(process.execPath, [here('../lib/wakeups-client.js'), system, endpoint, String(WARMUP)], { stdio: ['pipe', 'pipe', 'inherit'] })
  const waiting = []
  const got = []
  createInterface({ input: c.stdout }).on('line', (line) => {
    const o = JSON.parse(line)
    if (waiting.length > 0) waiting.shift()(o)
    else got.push(o)
  })
  const exited = new Promise((resolve) => c.on('exit', resolve))
  return {
    pid: c.pid,
    send: (line) => c.stdin.write(line + '\n'),
    next: () => {
      if (got.length > 0) return Promise.resolve(got.shift())
      return Promise.race([
        new Promise((resolve) => waiting.push(resolve)),
        exited.then((code) => { throw new Error(`the ${system} client exited (${code})`) }),
        new Promise((resolve, reject) => setTimeout(() => reject(new Error(`the ${system} client took over ${WINDOW_MS} ms`)), WINDOW_MS).unref()),
      ])
    },
    kill: () => { try { c.kill('SIGKILL') } catch {} },
    exited,
  }
}

/** One run of `system` in fresh processes: its plain, strace and instrumented windows. */
async function runOnce (system) {
  const hooksFile = path.join(os.tmpdir(), `zeromesh-wakeups-${process.pid}-${system}.json`)
  rmSync(hooksFile, { force: true })
  const server = await child(SERVERS[system], { env: { ...process.env, ZEROMESH_WAKEUPS_FILE: hooksFile } })
  const client = clientOf(system, server.line)
  try {
    await client.next() // ready: warmed up
    const pids = { client: client.pid, server: server.child.pid }
    const out = { system, idle: {}, idleMs: IDLE_MS, switches: {}, syscalls: {}, plainMs: 0, straceMs: null, hooks: null, alloc: null }

    // What each side does with no request at all (timers, gossip, heartbeats), for scale.
    const quiet = { client: switches(pids.client), server: switches(pids.server) }
    await new Promise((resolve) => setTimeout(resolve, IDLE_MS))
    for (const side of ['client', 'server']) out.idle[side] = switchesBetween(quiet[side], switches(pids[side]))

    const before = { client: switches(pids.client), server: switches(pids.server) }
    client.send(`go ${N}`)
    out.plainMs = (await client.next()).ms
    for (const side of ['client', 'server']) out.switches[side] = switchesBetween(before[side], switches(pids[side]))

    if (STRACE) {
      const st = { client: await straceOf(pids.client), server: await straceOf(pids.server) }
      client.send(`go ${N}`)
      out.straceMs = (await client.next()).ms
      for (const side of ['client', 'server']) out.syscalls[side] = await st[side].stop()
    }

    process.kill(pids.server, 'SIGUSR2') // the server's window starts...
    client.send(`hooks ${N}`)
    out.hooks = await client.next()
    process.kill(pids.server, 'SIGUSR2') // ...and ends
    await until('the server\'s counts', () => existsSync(hooksFile))
    out.serverHooks = JSON.parse(readFileSync(hooksFile, 'utf8'))
    rmSync(hooksFile, { force: true })
    client.send(`alloc ${N}`)
    out.alloc = await client.next()
    client.send('exit')
    await client.exited
    return out
  } finally {
    client.kill()
    server.child.kill('SIGKILL')
  }
}

const per = (x) => x / N
const f2 = (x) => per(x).toFixed(2)

const runs = []
try {
  for (let r = 0; r < RUNS; r++) {
    for (const system of r % 2 === 0 ? SYSTEMS : [...SYSTEMS].reverse()) {
      process.stderr.write(`run ${r + 1} of ${RUNS}: ${system}\n`)
      runs.push({ ...(await runOnce(system)), run: r + 1 })
    }
  }
} finally {
  stopTracers()
  killChildren()
}
runs.sort((a, b) => (a.system === b.system ? a.run - b.run : a.system === 'raw' ? -1 : 1))

if (values.json) {
  process.stdout.write(JSON.stringify({ n: N, warmup: WARMUP, runs }) + '\n')
  process.exit(0)
}

const cols = runs.map((r) => `${r.system === 'raw' ? 'raw zeromq.js' : 'zeromesh'} #${r.run}`)
const lines = []
const table = (head, rows) => {
  lines.push(`| ${head} | ${cols.join(' | ')} |`, `| --- | ${cols.map(() => '---:').join(' | ')} |`)
  for (const [label, cells] of rows) lines.push(`| ${label} | ${cells.join(' | ')} |`)
  lines.push('')
}
lines.push(`${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, ${os.availableParallelism()} cores (${os.cpus()[0]?.model ?? 'unknown cpu'}), Node ${process.version}, load average ${os.loadavg().map((x) => x.toFixed(1)).join(' ')}; ${N.toLocaleString('en-US')} sequential requests per window after ${WARMUP.toLocaleString('en-US')} of warm-up; per request`)
lines.push('')

const switchRows = []
for (const side of ['client', 'server']) {
  for (const g of GROUPS) {
    const cell = (r) => { const s = r.switches[side][g]; return s === undefined ? '-' : `${f2(s.voluntary)} + ${f2(s.involuntary)}` }
    if (runs.every((r) => r.switches[side][g] === undefined)) continue
    switchRows.push([`${side} ${g}`, runs.map(cell)])
  }
  switchRows.push([`**${side}, all threads**`, runs.map((r) => { let v = 0, i = 0; for (const s of Object.values(r.switches[side])) { v += s.voluntary; i += s.involuntary } return `**${f2(v)} + ${f2(i)}**` })])
}
table('context switches (voluntary + involuntary)', switchRows)

const sum = (o, k) => Object.values(o).reduce((a, g) => a + g[k], 0)
const idleRows = []
for (const side of ['client', 'server']) {
  idleRows.push([`${side}, all threads: switches a second`, runs.map((r) => ((sum(r.idle[side], 'voluntary') + sum(r.idle[side], 'involuntary')) * 1000 / r.idleMs).toFixed(1))])
  idleRows.push([`${side}: the same per request at the plain window's rate`, runs.map((r) => ((sum(r.idle[side], 'voluntary') + sum(r.idle[side], 'involuntary')) / r.idleMs * r.plainMs / N).toFixed(3))])
}
table(`with no requests (${IDLE_MS / 1000} s idle before the windows)`, idleRows)

const cpuRows = []
for (const side of ['client', 'server']) {
  for (const g of ['JS', 'ZMQbg/IO/0', 'other']) cpuRows.push([`${side} ${g}`, runs.map((r) => ((r.switches[side][g]?.cpuNs ?? 0) / N / 1000).toFixed(1))])
  cpuRows.push([`**${side}, all threads**`, runs.map((r) => `**${(sum(r.switches[side], 'cpuNs') / N / 1000).toFixed(1)}**`)])
}
table('CPU us per request (schedstat, plain window: a time, so loaded-machine noise)', cpuRows)

if (STRACE) {
  const rows = []
  for (const side of ['client', 'server']) {
    for (const g of GROUPS) {
      const names = new Set(runs.flatMap((r) => Object.keys(r.syscalls[side][g] ?? {})))
      const shown = [...names].filter((n) => runs.some((r) => per(r.syscalls[side][g]?.[n] ?? 0) >= 0.05)).sort()
      for (const n of shown) rows.push([`${side} ${g} ${n}`, runs.map((r) => f2(r.syscalls[side][g]?.[n] ?? 0))])
      const total = (r) => Object.values(r.syscalls[side][g] ?? {}).reduce((a, b) => a + b, 0)
      if (runs.some((r) => total(r) > 0)) rows.push([`${side} ${g}, all calls`, runs.map((r) => f2(total(r)))])
    }
    rows.push([`**${side}, all threads**`, runs.map((r) => `**${f2(Object.values(r.syscalls[side]).flatMap(Object.values).reduce((a, b) => a + b, 0))}**`)])
  }
  const turns = (r, side) => (r.syscalls[side].JS?.epoll_wait ?? 0) + (r.syscalls[side].JS?.epoll_pwait ?? 0)
  rows.push(['event-loop turns, client (its JS thread\'s epoll_wait)', runs.map((r) => f2(turns(r, 'client')))])
  rows.push(['event-loop turns, server (its JS thread\'s epoll_wait)', runs.map((r) => f2(turns(r, 'server')))])
  table('system calls (strace -f window; 0.05 a request and over shown)', rows)
}

const hookRows = []
for (const [side, of] of [['client', (r) => r.hooks], ['server', (r) => r.serverHooks]]) {
  const kinds = new Set(runs.flatMap((r) => Object.keys(of(r).made)))
  for (const k of [...kinds].sort()) hookRows.push([`${side} made: ${k}`, runs.map((r) => f2(of(r).made[k] ?? 0))])
  const called = new Set(runs.flatMap((r) => Object.keys(of(r).calls)))
  for (const k of [...called].sort()) hookRows.push([`${side} called: ${k}`, runs.map((r) => f2(of(r).calls[k] ?? 0))])
}
table('JS threads, instrumented (async_hooks init, wrapped timer functions; the client\'s window, the server\'s over the same)', hookRows)

const gcKinds = new Set(runs.flatMap((r) => Object.keys(r.alloc.gcs)))
table('client JS heap, v8.GCProfiler window', [
  ['bytes allocated per request', runs.map((r) => Math.round(r.alloc.bytes / N).toLocaleString('en-US'))],
  ...[...gcKinds].sort().map((k) => [`${k} collections per 1,000 requests`, runs.map((r) => ((r.alloc.gcs[k] ?? 0) * 1000 / N).toFixed(2))]),
])

table('window time, ms per request (for the overheads only: the machine is shared)', [
  ['plain', runs.map((r) => (r.plainMs / N).toFixed(3))],
  ...(STRACE ? [['under strace -f (both processes)', runs.map((r) => (r.straceMs / N).toFixed(3))]] : []),
  ['instrumented client', runs.map((r) => (r.hooks.ms / N).toFixed(3))],
])
process.stdout.write(lines.join('\n'))
process.exit(0)
