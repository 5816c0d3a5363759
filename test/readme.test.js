// The README's quick start runs as written, in a child process.
import { expect } from 'chai'
import { readFileSync, writeFileSync, rmSync, mkdtempSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { execFile } from 'node:child_process'
import { tmpdir } from 'node:os'
import path from 'node:path'

const BIN = fileURLToPath(new URL('../bin/zeromesh.js', import.meta.url))
const node = (args, cwd) => new Promise((resolve, reject) => {
  execFile(process.execPath, args, { timeout: 15000, cwd }, (err, stdout, stderr) => err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout))
})

describe('README', function () {
  this.timeout(20000)
  const file = fileURLToPath(new URL('./readme-quickstart.tmp.mjs', import.meta.url))
  const secured = fileURLToPath(new URL('./readme-security.tmp.mjs', import.meta.url))
  after(() => { rmSync(file, { force: true }); rmSync(secured, { force: true }) })

  it('the quick start prints 5 and the unknown-method code, then exits', async () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8')
    const code = /## Quick start\n\n```js\n([\s\S]*?)```/.exec(readme)[1]
    writeFileSync(file, code)
    const out = await new Promise((resolve, reject) => {
      execFile(process.execPath, [file], { timeout: 15000 }, (err, stdout, stderr) => err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout))
    })
    expect(out).to.equal('5\nERR_ZEROMESH_UNKNOWN_METHOD\n')
  })

  it('the example of the Security section runs over CURVE with keys from zeromesh keygen', async () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8')
    const section = readme.slice(readme.indexOf('## Security'))
    writeFileSync(secured, /```js\n([\s\S]*?)```/.exec(section)[1])
    const dir = mkdtempSync(path.join(tmpdir(), 'zeromesh-readme-'))
    try {
      await node([BIN, 'keygen', 'cluster'], dir)
      await node([BIN, 'keygen', 'alice'], dir)
      expect(await node([secured], dir)).to.equal('5\n')
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
