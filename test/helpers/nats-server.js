// A real nats-server (Debian's nats-server 2.9.10 in CI: .ci/run installs it) for the durable
// events tests and benchmark: JetStream on, a store in a temporary directory, loopback only,
// an ephemeral port (the server picks it and writes it to a ports file), stopped by PID.
// restart() starts it again on the same port and store, as an operator restarting it would.
import { spawn, execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, existsSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'

export const NATS_SERVER = process.env.NATS_SERVER ?? 'nats-server'

/** Whether a nats-server binary is on this machine, and its version line. */
export function natsServerVersion () {
  try {
    return execFileSync(NATS_SERVER, ['--version'], { encoding: 'utf8' }).trim()
  } catch {
    return null
  }
}

const running = new Set()
// A process that ends without its cleanup (a crash, process.exit) takes its servers with it.
process.once('exit', () => {
  for (const s of running) {
    if (s.pid !== null) try { process.kill(s.pid, 'SIGKILL') } catch {}
    try { rmSync(s.dir, { recursive: true, force: true }) } catch {}
  }
})

export class NatsServer {
  constructor ({ maxPayload } = {}) {
    this.dir = mkdtempSync(path.join(tmpdir(), 'zeromesh-nats-'))
    this.store = path.join(this.dir, 'store')
    this.port = -1 // the first start picks one; restarts keep it
    this.maxPayload = maxPayload
    this.child = null
    this.log = ''
  }

  get url () {
    return `nats://127.0.0.1:${this.port}`
  }

  get pid () {
    return this.child?.pid ?? null
  }

  /** Starts it and resolves once it listens (its ports file written), within `timeout` ms. */
  async start (timeout = 10000) {
    const args = ['-a', '127.0.0.1', '-p', String(this.port), '-js', '-sd', this.store, '--ports_file_dir', this.dir]
    if (this.maxPayload !== undefined) args.push('--max_payload', String(this.maxPayload))
    const child = spawn(NATS_SERVER, args, { stdio: ['ignore', 'pipe', 'pipe'] })
    this.child = child
    running.add(this)
    child.stdout.setEncoding('utf8').on('data', (d) => { this.log += d })
    child.stderr.setEncoding('utf8').on('data', (d) => { this.log += d })
    child.exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })))
    const file = path.join(this.dir, `nats-server_${child.pid}.ports`)
    const end = Date.now() + timeout
    // The ports file appears once the client port listens; JetStream is ready once the log says so.
    while (!(existsSync(file) && /Server is ready/.test(this.log))) {
      if (child.exitCode !== null) throw new Error(`nats-server exited (${child.exitCode}) before it was ready:\n${this.log}`)
      if (Date.now() > end) throw new Error(`nats-server not ready in ${timeout} ms:\n${this.log}`)
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
    const url = JSON.parse(readFileSync(file, 'utf8')).nats[0]
    this.port = Number(new URL(url).port)
    return this.url
  }

  /** Sends `signal` to its PID and resolves once it exited. */
  async stop (signal = 'SIGTERM') {
    const child = this.child
    if (child === null) return
    if (child.exitCode === null && child.signalCode === null) {
      try { process.kill(child.pid, signal) } catch {}
    }
    await child.exited
    this.child = null
  }

  /** SIGKILL, then the same port and store again. */
  async restart () {
    await this.stop('SIGKILL')
    return this.start()
  }

  /** Stops it and removes its store. */
  async close () {
    await this.stop('SIGKILL')
    running.delete(this)
    rmSync(this.dir, { recursive: true, force: true })
  }
}

/** Every server still running, stopped (for `after` hooks). */
export async function closeAllNats () {
  await Promise.all([...running].map((s) => s.close()))
}
