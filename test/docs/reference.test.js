// The reference pages say what the code does: every default in docs/reference is the one
// defined in code (peerDefaults, membershipDefaults, clientDefaults, gatewayDefaults), the command line page is
// what bin/usage.js prints, and every link in the README and docs/ leads somewhere: a relative
// link to a file the npm package ships (its page on npm shows them), anything else absolute.
import { expect } from 'chai'
import { readFileSync, readdirSync, existsSync } from 'node:fs'
import { execFileSync } from 'node:child_process'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { peerDefaults, membershipDefaults, clientDefaults } from '../../index.js'
import { cliReference } from '../../bin/usage.js'
import { gatewayDefaults } from '../../http/index.js'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const read = (f) => readFileSync(path.join(ROOT, f), 'utf8')

/** A default as the tables write it: `5000`, `'p2c'`, `true`, `{ items: 64, bytes: 4194304 }`. */
function render (v) {
  if (typeof v === 'string') return `'${v}'`
  if (v !== null && typeof v === 'object') return `{ ${Object.entries(v).map(([k, x]) => `${k}: ${render(x)}`).join(', ')} }`
  return String(v)
}

/** The rows of a page's option tables: option name -> its default cell. */
function rows (page) {
  const out = new Map()
  for (const line of read(page).split('\n')) {
    const cells = line.split(' | ')
    if (!line.startsWith('| `') || cells.length < 3) continue
    const names = [...cells[0].matchAll(/`([A-Za-z]+)`/g)].map((m) => m[1])
    const values = names.length > 1 && cells[1].includes(' / ') ? cells[1].split(' / ') : names.map(() => cells[1])
    names.forEach((n, i) => out.set(n, values[i]))
  }
  return out
}

function expectDefaults (page, defaults) {
  const table = rows(page)
  for (const [name, value] of Object.entries(defaults)) {
    expect(table.has(name), `${page} has a row for ${name}`).to.equal(true)
    const cell = table.get(name)
    if (value === null) expect(cell, `${page}: ${name}`).to.match(/none|`null`/)
    else expect(cell, `${page}: ${name}`).to.include(`\`${render(value)}\``)
  }
}

describe('docs/reference holds to the code', () => {
  it('every Peer default in docs/reference/peer.md is peerDefaults\' (and membershipDefaults\')', () => {
    expectDefaults('docs/reference/peer.md', peerDefaults)
    expectDefaults('docs/reference/peer.md', membershipDefaults)
  })

  it('every Client default in docs/reference/client.md is clientDefaults\'', () => {
    expectDefaults('docs/reference/client.md', clientDefaults)
  })

  it('every gateway default in docs/reference/http.md is gatewayDefaults\'', () => {
    expectDefaults('docs/reference/http.md', gatewayDefaults)
  })

  it('docs/reference/cli.md\'s generated part is what bin/usage.js makes, to the character', () => {
    const page = read('docs/reference/cli.md')
    const generated = /<!-- generated from bin\/usage\.js[^\n]*-->\n([\s\S]*?)\n<!-- end of the generated part -->/.exec(page)[1]
    expect(generated).to.equal(cliReference()) // to mend: the command in the page's comment
  })

  it('every link in the README and docs/ leads to a file: relative ones to files the package ships', function () {
    this.timeout(30000)
    const shipped = new Set(JSON.parse(execFileSync('npm', ['pack', '--dry-run', '--json'], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }))[0].files.map((f) => f.path))
    const pages = docPages()
    const problems = []
    for (const page of pages) {
      expect(shipped.has(page), `${page} is in the package`).to.equal(true)
      for (const m of read(page).matchAll(/\]\(([^)\s]+)\)/g)) {
        const target = m[1]
        if (/^(https?:|mailto:)/.test(target) || target.startsWith('#')) continue
        const file = path.posix.normalize(path.posix.join(path.posix.dirname(page), target.split('#')[0]))
        const isDir = file.endsWith('/') || (existsSync(path.join(ROOT, file)) && !file.includes('.'))
        if (!existsSync(path.join(ROOT, file))) problems.push(`${page}: ${target} does not exist`)
        else if (isDir ? ![...shipped].some((f) => f.startsWith(file.replace(/\/?$/, '/'))) : !shipped.has(file)) problems.push(`${page}: ${target} is not in the package: link it absolutely`)
      }
    }
    expect(problems).to.deep.equal([])
  })

  it('every link to a heading, relative or into the repository on GitHub, names a heading its page has', () => {
    const REPO = 'https://github.com/zeromesh/zeromesh/blob/main/'
    const pages = docPages()
    const problems = []
    for (const page of pages) {
      for (const m of read(page).matchAll(/\]\(([^)\s]+)\)/g)) {
        const target = m[1]
        let file
        if (target.startsWith(REPO)) file = target.slice(REPO.length).split('#')[0]
        else if (/^(https?:|mailto:)/.test(target)) continue
        else file = target.startsWith('#') ? page : path.posix.normalize(path.posix.join(path.posix.dirname(page), target.split('#')[0]))
        if (!existsSync(path.join(ROOT, file))) { problems.push(`${page}: ${target}: no ${file}`); continue }
        const anchor = target.split('#')[1]
        if (anchor !== undefined && file.endsWith('.md') && !headingAnchors(read(file)).has(anchor)) problems.push(`${page}: ${target}: ${file} has no such heading`)
      }
    }
    expect(problems).to.deep.equal([])
  })
})

describe('what the code\'s comments point at exists (issue 55, item 4)', () => {
  it('every "README, X" names a README heading; every docs/ path is a page, and its #anchor one of its headings', () => {
    const readmeHeadings = [...read('README.md').replace(/```[\s\S]*?```/g, '').matchAll(/^#{1,6} (.+)$/gm)].map((m) => m[1].trim().toLowerCase())
    const problems = []
    let refs = 0
    for (const file of codeFiles()) {
      const text = read(file)
      for (const m of text.matchAll(/README(?:'s|,) *"?([A-Z][A-Za-z ]*[A-Za-z])"?/g)) {
        refs++
        const name = m[1].toLowerCase()
        if (!readmeHeadings.some((h) => h === name || h.startsWith(`${name} `))) problems.push(`${file}: README, ${m[1]}: no such heading`)
      }
      for (const m of text.matchAll(/\b(docs\/[a-z0-9/-]+\.md)(#[a-z0-9-]+)?/g)) {
        refs++
        if (!existsSync(path.join(ROOT, m[1]))) { problems.push(`${file}: ${m[0]}: no such page`); continue }
        if (m[2] !== undefined && !headingAnchors(read(m[1])).has(m[2].slice(1))) problems.push(`${file}: ${m[0]}: no such heading`)
      }
    }
    expect(refs).to.be.above(40) // the check looked at something
    expect(problems).to.deep.equal([])
  })
})

/** Every source file of the package and its tools: .js, .mjs, .cjs, .ts (declarations included). */
function codeFiles () {
  const out = ['index.js', 'index.d.ts']
  for (const dir of ['client', 'peer', 'protocol', 'transport', 'runtime', 'ops', 'bin', 'demo', 'testing', 'bench', 'sim', 'examples']) {
    for (const f of readdirSync(path.join(ROOT, dir), { recursive: true })) {
      const rel = `${dir}/${f}`
      if (/\.(m|c)?js$|\.ts$/.test(rel) && !rel.includes('node_modules')) out.push(rel)
    }
  }
  return out
}

/** The README and every page under docs/. */
function docPages () {
  return ['README.md', ...readdirSync(path.join(ROOT, 'docs'), { recursive: true }).filter((f) => String(f).endsWith('.md')).map((f) => `docs/${f}`)]
}

/** The anchors GitHub makes for a markdown page's headings (lower case, punctuation dropped, spaces as dashes, repeats numbered). */
function headingAnchors (markdown) {
  const anchors = new Set()
  const seen = new Map()
  for (const m of markdown.replace(/```[\s\S]*?```/g, '').matchAll(/^#{1,6} (.+)$/gm)) {
    const slug = m[1].trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-')
    const n = seen.get(slug) ?? 0
    seen.set(slug, n + 1)
    anchors.add(n === 0 ? slug : `${slug}-${n}`)
  }
  return anchors
}
