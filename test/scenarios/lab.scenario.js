// The lab, short (bench/cluster/lab.js; the full one is a benchmark: bench/README.md, "The
// lab"): 3 hosts of 2 peers as network namespaces in 3 zones, 3 client processes, CURVE, and
// the faults: a host SIGKILLed, a zone cut off by nft drop rules, a host blackholed, two hosts
// added and drained. Every phase: 0 failed idempotent requests and publishes, no false death
// (a live, reachable peer declared dead), the members converged again; non-idempotent
// requests fail only where a host was blackholed, and only in doubt. Root only, as CI runs.
import { expect } from 'chai'
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'

const LAB = fileURLToPath(new URL('../../bench/cluster/lab.js', import.meta.url))

describe('the lab, short: faults across hosts in network namespaces', function () {
  this.timeout(240000)
  let result
  before(async function () {
    if (process.getuid?.() !== 0) throw new Error('the lab makes network namespaces: run the scenarios as root (CI does)')
    const child = spawn(process.execPath, [LAB, '--hosts', '3', '--peers', '2', '--clients', '3', '--rate', '30', '--fault-seconds', '6',
      '--phases', 'cold,host-loss,zone-cut,blackhole,scale', '--json'], { stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    let err = ''
    child.stdout.on('data', (d) => { out += d })
    child.stderr.on('data', (d) => { err += d })
    const timer = setTimeout(() => child.kill('SIGTERM'), 220000) // the lab cleans up on SIGTERM
    const code = await new Promise((resolve) => child.on('exit', (c) => resolve(c)))
    clearTimeout(timer)
    if (code !== 0) throw new Error(`the lab exited ${code}: ${err.slice(-3000)}`)
    result = JSON.parse(out.trim().split('\n').at(-1))
    process.stdout.write(result.text.split('\n').map((l) => `      ${l}`).join('\n') + '\n')
  })

  it('runs every phase asked for, converging after each', () => {
    expect(result.rows.map((r) => r.phase)).to.deep.equal(['cold', 'host-loss', 'zone-cut', 'blackhole', 'scale'])
    for (const r of result.rows) if (r.members !== undefined) expect(r.members, r.phase).to.not.equal('never')
  })

  it('0 failed idempotent requests and publishes in every phase', () => {
    for (const r of result.rows) {
      expect(r.failed.idempotent, r.phase).to.deep.equal({})
      expect(r.failed.publish, r.phase).to.deep.equal({})
    }
  })

  it('non-idempotent requests fail only in doubt, and only where a host was blackholed', () => {
    for (const r of result.rows) {
      const codes = Object.keys(r.failed.nonIdempotent)
      if (r.phase === 'blackhole') expect(codes.every((c) => c === 'ERR_ZEROMESH_CONNECTION_LOST' || c === 'ERR_ZEROMESH_TIMEOUT'), codes.join()).to.equal(true)
      else expect(codes, r.phase).to.deep.equal([])
    }
  })

  it('no false deaths; the faults\' deaths were seen', () => {
    expect(result.falseDeaths).to.deep.equal([])
    expect(result.rows.find((r) => r.phase === 'host-loss').deaths).to.be.above(0)
  })
})
