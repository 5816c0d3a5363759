// The README's quick start runs as written, in a child process.
import { expect } from 'chai'
import { readFileSync, writeFileSync, rmSync, mkdtempSync, readdirSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { execFile } from 'node:child_process'
import { tmpdir } from 'node:os'
import path from 'node:path'

const BIN = fileURLToPath(new URL('../../bin/zeromesh.js', import.meta.url))
const node = (args, cwd) => new Promise((resolve, reject) => {
  execFile(process.execPath, args, { timeout: 15000, cwd }, (err, stdout, stderr) => err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout))
})

describe('README', function () {
  this.timeout(20000)
  const file = fileURLToPath(new URL('./readme-quickstart.tmp.mjs', import.meta.url))
  const secured = fileURLToPath(new URL('./readme-security.tmp.mjs', import.meta.url))
  const testing = fileURLToPath(new URL('./readme-testing.tmp.mjs', import.meta.url))
  after(() => { for (const f of [file, secured, testing]) rmSync(f, { force: true }) })

  it('the quick start prints 5 and the unknown-method code, then exits', async () => {
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8')
    const code = /## Quick start\n[\s\S]*?```js\n([\s\S]*?)```/.exec(readme)[1]
    writeFileSync(file, code)
    const out = await new Promise((resolve, reject) => {
      execFile(process.execPath, [file], { timeout: 15000 }, (err, stdout, stderr) => err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout))
    })
    expect(out).to.equal('5\nERR_ZEROMESH_UNKNOWN_METHOD\n')
  })

  it('the quick start\'s worker-thread example (work.js and main.js) prints both counts', async () => {
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8')
    const work = /```js\n(\/\/ work\.js[\s\S]*?)```/.exec(readme)[1]
    const main = /```js\n(\/\/ main\.js[\s\S]*?)```/.exec(readme)[1]
    const dir = mkdtempSync(path.join(fileURLToPath(new URL('.', import.meta.url)), 'readme-threads-'))
    try {
      writeFileSync(path.join(dir, 'work.js'), work)
      writeFileSync(path.join(dir, 'main.js'), main)
      const out = await node([path.join(dir, 'main.js')], dir)
      expect(out).to.equal('[ 9592, 17984 ]\n')
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('the example of the security guide runs over CURVE with keys from zeromesh keygen', async () => {
    const section = readFileSync(new URL('../../docs/guides/security.md', import.meta.url), 'utf8')
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

  it('the example of the testing guide runs on the in-memory network: 5, then 9 from the other peer once the first is killed', async () => {
    const section = readFileSync(new URL('../../docs/guides/testing.md', import.meta.url), 'utf8')
    writeFileSync(testing, /```js\n([\s\S]*?)```/.exec(section)[1])
    expect(await node([testing])).to.equal('5\n9 down\n')
  })

  it('is the front door: a newcomer\'s order in about 300 lines, the manual in docs/; the architecture page names every folder of code', () => {
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8')
    const headings = [...readme.matchAll(/^## (.+)$/gm)].map((m) => m[1])
    expect(headings).to.deep.equal(['Install', 'Quick start', 'Set-up and the demo', 'Concepts', 'Command line', 'Documentation', 'Stability'])
    expect(readme.split('\n').length).to.be.below(330)
    const performance = readFileSync(new URL('../../docs/design/performance.md', import.meta.url), 'utf8')
    const status = performance.slice(performance.indexOf('## Status'))
    for (const item of status.split(/\n\n|\n(?=- )/).slice(1)) expect(item.split(/\s+/).length, `Status is a short list, not a paragraph: ${item}`).to.be.below(50)
    const table = readFileSync(new URL('../../docs/design/architecture.md', import.meta.url), 'utf8')
    const root = new URL('../..', import.meta.url)
    const folders = readdirSync(root, { withFileTypes: true })
      .filter((d) => d.isDirectory() && !d.name.startsWith('.') && !['node_modules', 'docs', 'deploy', 'types'].includes(d.name))
      .filter((d) => readdirSync(new URL(`${d.name}/`, root), { recursive: true }).some((f) => String(f).endsWith('.js')))
      .map((d) => d.name)
    for (const f of folders) expect(table, `Architecture names ${f}/`).to.include(`\`${f}/\``)
  })
})
