// Real child processes for tests: `zeromesh peer` and `zeromesh request`, each started
// with ephemeral ports and killed by PID in the test's cleanup.
import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import net from 'node:net'

export const BIN = fileURLToPath(new URL('../../bin/zeromesh.js', import.meta.url))

/** The resident set of process `pid`, in bytes (/proc/PID/status). */
export function rssOf (pid) {
  return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) * 1024
}

/**
 * Resolves with process `pid`'s resident memory once it holds still: two readings `everyMs`
 * apart within `bytes` of each other (a process that just started is still loading code and
 * starting its threads). Rejects after `timeout` ms.
 */
export async function steadyRss (pid, { bytes = 2e6, everyMs = 100, timeout = 10000 } = {}) {
  const end = Date.now() + timeout
  let last = rssOf(pid)
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, everyMs))
    const now = rssOf(pid)
    if (Math.abs(now - last) <= bytes) return now
    if (Date.now() >= end) throw new Error(`the resident memory of ${pid} did not hold still within ${timeout} ms (${last} -> ${now} bytes)`)
    last = now
  }
}

const children = new Set()

/** Kills every child still running (SIGKILL), for `after` hooks. */
export async function killAll () {
  const list = [...children]
  for (const c of list) {
    try { process.kill(c.pid, 'SIGCONT') } catch {}
    try { process.kill(c.pid, 'SIGKILL') } catch {}
  }
  await Promise.all(list.map((c) => c.exited))
}

/** Starts `zeromesh <args>` and collects its output. */
export function run (args, options) {
  return runScript(BIN, args, options)
}

/** Starts `node <script> <args>` and collects its output; killAll() kills it. */
export function runScript (script, args, { env, ipc = false, nodeArgs = [] } = {}) {
  const stdio = ['ignore', 'pipe', 'pipe', ...(ipc ? ['ipc'] : [])]
  const child = spawn(process.execPath, [...nodeArgs, script, ...args], { stdio, env: { ...process.env, ...env } })
  const c = { child, pid: child.pid, stdout: '', stderr: '', messages: [] }
  if (ipc) child.on('message', (m) => c.messages.push(m))
  child.stdout.setEncoding('utf8').on('data', (d) => { c.stdout += d })
  child.stderr.setEncoding('utf8').on('data', (d) => { c.stderr += d })
  c.exited = new Promise((resolve) => child.on('exit', (code, signal) => {
    children.delete(c)
    c.code = code
    c.signal = signal
    resolve({ code, signal })
  }))
  children.add(c)
  return c
}

/**
 * Starts a `zeromesh peer` child and resolves once it printed its endpoint. It serves the demo
 * handlers (--demo-handlers) unless `args` give --handlers, or `demo` is false.
 */
export async function startPeer (args = [], { timeout = 10000, demo = true, ...options } = {}) {
  const handlers = demo && !args.includes('--handlers') && !args.includes('--demo-handlers') ? ['--demo-handlers'] : []
  const c = run(['peer', '--bind', 'tcp://127.0.0.1:0', ...handlers, ...args], options)
  c.endpoint = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`peer did not start in ${timeout} ms: ${c.stderr}`)), timeout)
    const check = () => {
      const line = c.stdout.split('\n')[0]
      if (c.stdout.includes('\n')) { clearTimeout(timer); resolve(line.trim()) }
    }
    c.child.stdout.on('data', check)
    c.exited.then(({ code, signal }) => { clearTimeout(timer); reject(new Error(`peer exited (${code ?? signal}) before starting: ${c.stderr}`)) })
  })
  return c
}

/** A port free now on 127.0.0.1 (the kernel's pick), for a process that must be told its port before it starts. */
export function freePort () {
  return new Promise((resolve, reject) => {
    const s = net.createServer()
    s.once('error', reject)
    s.listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => resolve(port)) })
  })
}

/**
 * Holds a port on 127.0.0.1 that nothing serves: a listener that drops every connection at
 * once, so a client dialling it sees a peer that is down, and no other test's socket can take
 * the port meanwhile. `release()` frees it for the caller to bind at once.
 */
export function holdPort () {
  return new Promise((resolve, reject) => {
    const s = net.createServer((conn) => conn.destroy())
    s.once('error', reject)
    s.listen(0, '127.0.0.1', () => {
      resolve({ port: s.address().port, release: () => new Promise((done) => s.close(() => done())) })
    })
  })
}
