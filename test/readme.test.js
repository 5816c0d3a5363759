// The README's quick start runs as written, in a child process.
import { expect } from 'chai'
import { readFileSync, writeFileSync, rmSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { execFile } from 'node:child_process'

describe('README', function () {
  this.timeout(20000)
  const file = fileURLToPath(new URL('./readme-quickstart.tmp.mjs', import.meta.url))
  after(() => rmSync(file, { force: true }))

  it('the quick start prints 5 and the unknown-method code, then exits', async () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8')
    const code = /## Quick start\n\n```js\n([\s\S]*?)```/.exec(readme)[1]
    writeFileSync(file, code)
    const out = await new Promise((resolve, reject) => {
      execFile(process.execPath, [file], { timeout: 15000 }, (err, stdout, stderr) => err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout))
    })
    expect(out).to.equal('5\nERR_ZEROMESH_UNKNOWN_METHOD\n')
  })
})
