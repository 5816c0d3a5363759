// A peer reading durable events is not idle (peer/idle-collect.js): its durable deliveries
// count as activity, as its mesh messages do, so it does not stop to run full collections while
// they flow. (Found by the durable events benchmark: a peer handling only durable events ran a
// full collection of its heaps every 10 s or more, as if idle, and was slower for it.)
// Run in a process of its own (test/fixtures/durable-idle.mjs): in a mocha worker shared with
// other files, their garbage moved the RSS the collector measures against, and the collection
// once nothing ran did not come (seen in npm test).
import { expect } from 'chai'
import { execFile } from 'node:child_process'

describe('a peer handling durable events is not idle', function () {
  this.timeout(30000)

  it('no idle collection while durable events run; one once they stop', async () => {
    const out = await new Promise((resolve, reject) => execFile(process.execPath, [new URL('../fixtures/durable-idle.mjs', import.meta.url).pathname], { timeout: 25000 }, (err, stdout, stderr) => err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout)))
    const r = JSON.parse(out.trim().split('\n').pop())
    expect(r.ran).to.be.above(10)
    expect(r.during, `${r.ran} durable events ran`).to.deep.equal([])
    expect(r.after).to.equal(1) // the same peer once nothing runs: the collector does fire (so the test can fail)
  })
})
