// A lab process that speaks JSON lines (bench/cluster/lab/host.js, client.js): its first line
// says it is ready; afterwards each question ({ id, cmd }) gets the answer line with its id.
// Every wait is bounded; the process is killed by PID when the lab is torn down (net.js).
import { createInterface } from 'node:readline'

export class LabProc {
  /** @param {import('node:child_process').ChildProcess} child */
  constructor (child, name) {
    this.child = child
    this.name = name
    this.pid = child.pid
    this.ids = 0
    this.waiting = new Map()
    this.stderr = ''
    this.first = new Promise((resolve, reject) => { this.onFirst = { resolve, reject } })
    this.first.catch(() => {}) // awaited through ready(), or never (dnsmasq says nothing)
    child.stderr.on('data', (d) => { this.stderr = (this.stderr + d).slice(-4000) })
    this.exited = new Promise((resolve) => child.once('exit', (code, signal) => {
      this.onFirst.reject(new Error(`${name} exited (${code ?? signal}) before it was ready: ${this.stderr}`))
      for (const w of this.waiting.values()) w.reject(new Error(`${name} exited (${code ?? signal})`))
      this.waiting.clear()
      resolve({ code, signal })
    }))
    this.alive = true
    this.exited.then(() => { this.alive = false })
    createInterface({ input: child.stdout }).on('line', (line) => {
      let msg
      try { msg = JSON.parse(line) } catch { return }
      if (msg.ready) { this.onFirst.resolve(msg); return }
      const w = this.waiting.get(msg.id)
      if (w !== undefined) { this.waiting.delete(msg.id); w.resolve(msg) }
    })
  }

  /** The ready line, within `ms`. */
  ready (ms = 60000) {
    return within(this.first, ms, `${this.name} was not ready within ${ms} ms`)
  }

  /** Sends `cmd` (with `extra` fields); its answer within `ms`. */
  ask (cmd, extra = {}, ms = 15000) {
    const id = ++this.ids
    const answer = new Promise((resolve, reject) => this.waiting.set(id, { resolve, reject }))
    this.child.stdin.write(JSON.stringify({ id, cmd, ...extra }) + '\n')
    return within(answer, ms, `${this.name} did not answer ${cmd} within ${ms} ms`).finally(() => this.waiting.delete(id))
  }

  /** Sends `cmd` expecting no answer. */
  tell (cmd, extra = {}) {
    this.child.stdin.write(JSON.stringify({ cmd, ...extra }) + '\n')
  }

  kill (signal = 'SIGKILL') {
    try { process.kill(this.pid, signal) } catch {}
    return this.exited
  }
}

function within (promise, ms, message) {
  let timer
  return Promise.race([promise, new Promise((resolve, reject) => { timer = setTimeout(() => reject(new Error(message)), ms) })]).finally(() => clearTimeout(timer))
}
