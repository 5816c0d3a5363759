// Every JavaScript snippet of the README and the guides parses as an ES module, and every name
// it imports from zeromesh (or zeromesh/http, zeromesh/nest, ...) is one that entry exports:
// a renamed export or a typo in the docs fails here. (The README's quick start, its worker
// threads example and its shell commands also run: readme.test.js, readme-shell.test.js; the
// guides' snippets run in guides-run.test.js and http-guide.test.js.)
import { expect } from 'chai'
import { readFileSync, readdirSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs'
import { execFile } from 'node:child_process'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const pages = ['README.md', ...readdirSync(path.join(ROOT, 'docs/guides')).filter((f) => f.endsWith('.md')).map((f) => `docs/guides/${f}`)]

/** The ```js blocks of a page, each with the line it starts at. */
function snippets (page) {
  const text = readFileSync(path.join(ROOT, page), 'utf8')
  const out = []
  for (const m of text.matchAll(/^```js\n([\s\S]*?)^```/gm)) out.push({ code: m[1], line: text.slice(0, m.index).split('\n').length })
  return out
}

const check = (file) => new Promise((resolve) => execFile(process.execPath, ['--check', file], { timeout: 15000 }, (err, stdout, stderr) => resolve(err ? stderr : null)))

describe('the docs\' JavaScript snippets', function () {
  this.timeout(60000)
  let dir
  before(() => { dir = mkdtempSync(path.join(tmpdir(), 'zeromesh-snippets-')) })
  after(() => rmSync(dir, { recursive: true, force: true }))

  it('each parses as an ES module', async () => {
    const broken = []
    let n = 0
    for (const page of pages) {
      for (const { code, line } of snippets(page)) {
        const file = path.join(dir, `s${n++}.mjs`)
        writeFileSync(file, code)
        const err = await check(file)
        if (err !== null) broken.push(`${page}:${line}: ${err.split('\n').find((l) => /Error/.test(l)) ?? err}`)
      }
    }
    expect(n).to.be.above(20)
    expect(broken).to.deep.equal([])
  })

  it('each name imported from a zeromesh entry is one it exports', async () => {
    const missing = []
    for (const page of pages) {
      for (const { code, line } of snippets(page)) {
        for (const m of code.matchAll(/import\s*\{([^}]+)\}\s*from\s*'(zeromesh(?:\/[a-z-]+)?)'/g)) {
          const entry = await import(m[2])
          for (const name of m[1].split(',').map((x) => x.trim().split(/\s+as\s+/)[0]).filter(Boolean)) {
            if (!(name in entry)) missing.push(`${page}:${line}: ${m[2]} exports no ${name}`)
          }
        }
      }
    }
    expect(missing).to.deep.equal([])
  })
})
