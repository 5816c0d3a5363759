// bench/request-path/hot-path.js keeps working: it drives a real Peer and Client of two checkouts (here the
// same one twice) and fails if the peer does not answer every request it is handed.
import { expect } from 'chai'
import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('../..', import.meta.url))

describe('bench/request-path/hot-path.js', () => {
  it('measures both sides of two checkouts and prints their per-round ratio', async () => {
    const out = await new Promise((resolve, reject) => {
      execFile(process.execPath, ['bench/request-path/hot-path.js', '--rounds', '3', '--requests', '500', '--against', root], { cwd: root, timeout: 30000 }, (err, stdout, stderr) => {
        if (err) reject(new Error(`${err.message}\n${stderr}`))
        else resolve(stdout)
      })
    })
    const sides = [...out.matchAll(/peer (\d+), client (\d+)/g)]
    expect(sides).to.have.length(2)
    for (const [, peer, client] of sides) {
      expect(Number(peer)).to.be.greaterThan(0)
      expect(Number(client)).to.be.greaterThan(0)
    }
    expect(out).to.match(/this \/ against \(median of per-round ratios\): peer \d+\.\d{3}, client \d+\.\d{3}/)
  })
})
