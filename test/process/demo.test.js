// `zeromesh demo` stopped by a signal: every peer process it started is gone, whichever signal
// it was (the README: "Everything it started is killed on the way out, Ctrl-C included").
// Without handlers, SIGTERM and SIGHUP ended the demo at once and its peers lived on.
import { expect } from 'chai'
import { readdirSync, readFileSync } from 'node:fs'
import os from 'node:os'
import { run, killAll } from '../helpers/processes.js'
import { eventually } from '../helpers/eventually.js'

/** The pids whose parent is `pid` (/proc). */
function childrenOf (pid) {
  const out = []
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8')
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
      if (ppid === pid) out.push(Number(name))
    } catch { /* gone meanwhile */ }
  }
  return out
}

/** Whether `pid` runs (a zombie, dead and waiting to be reaped, does not). */
function alive (pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z'
  } catch {
    return false
  }
}

describe('zeromesh demo, stopped by a signal', function () {
  this.timeout(30000)
  let peers = []
  afterEach(async () => {
    for (const pid of peers) try { process.kill(pid, 'SIGKILL') } catch {}
    peers = []
    await killAll()
  })

  for (const signal of ['SIGTERM', 'SIGHUP', 'SIGINT']) {
    it(`${signal} to the demo stops every peer it started, and it exits with 128 + the signal's number`, async () => {
      const demo = run(['demo', '--duration', '20', '--no-chaos'])
      await eventually(() => expect(childrenOf(demo.pid)).to.have.length.at.least(5), { timeout: 15000 }) // 3 peers, 2 billing
      await eventually(() => expect(demo.stdout).to.match(/\+ *\d+\.\ds /), { timeout: 15000 }) // the run began
      peers = childrenOf(demo.pid)
      process.kill(demo.pid, signal)
      const { code } = await demo.exited
      expect(code).to.equal(128 + os.constants.signals[signal])
      expect(demo.stdout).to.include('interrupted: every process started was stopped')
      await eventually(() => expect(peers.filter(alive)).to.deep.equal([]), { timeout: 3000 })
    })
  }
})
