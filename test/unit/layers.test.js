// The layers of docs/design/architecture.md, held to the code (issue 74, item 5): the page's
// numbered list of layers is read here, and every shipped .js file (package.json's "files",
// and sim/) may import only from its own folder and from the layers below its own. An arrow
// up or sideways fails with the file and the import; so does a shipped file importing what is
// in no layer (bench/, test/), a folder the list leaves out, and zeromq imported outside
// transport/ and bin/bench/ (test/package/exports.test.js's seams test holds some folders to
// that by a pattern; this one reads every shipped file). Imports are read by es-module-lexer
// (static, re-exports, and dynamic imports of a literal), not by a pattern over the text.
import { expect } from 'chai'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { init, parse } from 'es-module-lexer'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const DOC = path.join(ROOT, 'docs/design/architecture.md')
const PKG = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'))

// Arrows the page names as they are, each checked to exist still (so the list only shrinks).
// Any other arrow up or beside fails. A new exception needs its reason in architecture.md.
const KNOWN = new Map([
  // By design (architecture.md, "Why peer/publisher.js imports client/"): a peer that
  // publishes makes one Client of its own rather than a second call lifecycle.
  ['peer/publisher.js -> client/client.js', 'a publishing peer is a client of its own'],
])

// Where zeromq may be imported: the transport, and the raw baselines `zeromesh bench` compares.
const ZEROMQ_MAY = (file) => file.startsWith('transport/') || file.startsWith('bin/bench/')

/** The page's layers: folder (or root file) -> rank, 1 the top. */
function layersOf (markdown) {
  const start = markdown.indexOf('The code is in layers.')
  if (start === -1) throw new Error('architecture.md no longer says "The code is in layers."')
  const ranks = new Map()
  for (const line of markdown.slice(start).split('\n').slice(1)) {
    const m = /^(\d+)\. (.*)$/.exec(line)
    if (m === null) { if (ranks.size > 0 && line.trim() === '') break; continue }
    const head = m[2].split(':')[0] // the folders, before what the layer is
    for (const [, name] of head.matchAll(/`([^`]+)`/g)) ranks.set(name.replace(/\/$/, ''), Number(m[1]))
  }
  return ranks
}

/** The top folder of a path relative to the root ('index.js' for the root's own file). */
const folderOf = (rel) => rel.split('/')[0]

/**
 * Every arrow that breaks `ranks`: `imports` is a list of { file, spec, target } (target a
 * path relative to the root, or null for a package other than zeromesh), `known` the arrows
 * allowed by name. Returns { broken: [message], unused: [known arrow no longer seen] }.
 */
function brokenArrows (imports, ranks, known = new Map(), zeromqMay = () => false) {
  const broken = []
  const used = new Set()
  for (const { file, spec, target } of imports) {
    const from = folderOf(file)
    if (target === null) {
      if (spec === 'zeromq' && !zeromqMay(file)) broken.push(`${file} imports 'zeromq': only transport/ (and bin/bench/'s raw baselines) may`)
      continue
    }
    const to = folderOf(target)
    if (to === from) continue
    const arrow = `${file} -> ${target}`
    if (!ranks.has(to)) { broken.push(`${file} imports '${spec}' (${target}), which is in no layer of architecture.md`); continue }
    if (ranks.get(to) > ranks.get(from)) continue
    if (known.has(arrow)) { used.add(arrow); continue }
    const way = ranks.get(to) === ranks.get(from) ? 'beside it' : 'above it'
    broken.push(`${file} (layer ${ranks.get(from)}, ${from}/) imports '${spec}' (${to}/, layer ${ranks.get(to)}: ${way})`)
  }
  return { broken, unused: [...known.keys()].filter((k) => !used.has(k)) }
}

/** The shipped .js files (package.json "files", its "!" entries left out) and sim/, relative to the root. */
function shippedFiles () {
  const entries = [...PKG.files, 'sim/']
  const excluded = entries.filter((e) => e.startsWith('!')).map((e) => e.slice(1).replace(/\/$/, ''))
  const out = []
  const walk = (rel) => {
    if (excluded.some((x) => rel === x || rel.startsWith(`${x}/`))) return
    const abs = path.join(ROOT, rel)
    if (!fs.existsSync(abs)) return
    if (fs.statSync(abs).isDirectory()) {
      for (const name of fs.readdirSync(abs)) if (name !== 'node_modules' && name !== 'dist') walk(path.posix.join(rel, name))
    } else if (rel.endsWith('.js')) out.push(rel)
  }
  for (const e of entries) if (!e.startsWith('!') && !e.includes('*')) walk(e.replace(/\/$/, ''))
  return out.sort()
}

/** Where `zeromesh` or `zeromesh/x` (the package by its name, as examples/ import it) leads, by package.json's exports. */
function selfTarget (spec) {
  const key = spec === PKG.name ? '.' : `.${spec.slice(PKG.name.length)}`
  const entry = PKG.exports[key]
  if (entry === undefined) return `(no export ${key})`
  return path.posix.normalize(typeof entry === 'string' ? entry : entry.default)
}

/** The imports of `files`: { file, spec, target }. */
function importsOf (files) {
  const out = []
  for (const file of files) {
    const [imports] = parse(fs.readFileSync(path.join(ROOT, file), 'utf8'), file)
    for (const i of imports) {
      const spec = i.specifier
      if (typeof spec !== 'string') continue // import(expression): a module chosen at run time
      let target = null
      if (spec.startsWith('.')) target = path.posix.normalize(path.posix.join(path.posix.dirname(file), spec))
      else if (spec === PKG.name || spec.startsWith(`${PKG.name}/`)) target = selfTarget(spec)
      out.push({ file, spec, target })
    }
  }
  return out
}

describe('the layers of architecture.md', () => {
  before(() => init)

  const ranks = layersOf(fs.readFileSync(DOC, 'utf8'))

  it('the page lists the layers, bin/ at the top and protocol/ at the bottom', () => {
    expect(ranks.get('bin')).to.equal(1)
    expect(ranks.get('protocol')).to.equal(Math.max(...ranks.values()))
    for (const name of ['client', 'peer', 'transport', 'runtime', 'ops', 'http', 'nest', 'testing', 'sim', 'index.js']) expect(ranks.has(name), name).to.equal(true)
    expect(ranks.get('client')).to.equal(ranks.get('peer'))
    expect(ranks.get('client')).to.be.above(ranks.get('bin'))
    expect(ranks.get('transport')).to.be.above(ranks.get('client'))
  })

  it('every shipped .js file sits in a layer', () => {
    const files = shippedFiles()
    expect(files.length).to.be.above(150) // the walk found the code, not an empty list
    const outside = [...new Set(files.map(folderOf))].filter((f) => !ranks.has(f))
    expect(outside, `folders shipped but in no layer of ${path.relative(ROOT, DOC)}`).to.deep.equal([])
  })

  it('no import goes up or beside, and zeromq only in transport/ and bin/bench/', () => {
    const imports = importsOf(shippedFiles())
    expect(imports.filter((i) => i.target !== null).length).to.be.above(500)
    const { broken, unused } = brokenArrows(imports, ranks, KNOWN, ZEROMQ_MAY)
    expect(broken, `imports against the layers of docs/design/architecture.md:\n  ${broken.join('\n  ')}\n`).to.deep.equal([])
    expect(unused, 'known arrows no longer in the code: take them out of KNOWN').to.deep.equal([])
  })

  it('the check catches an arrow up, one beside, one out of the layers and a stray zeromq', () => {
    const r = new Map([['bin', 1], ['client', 2], ['peer', 2], ['transport', 3], ['protocol', 4]])
    const { broken, unused } = brokenArrows([
      { file: 'bin/a.js', spec: '../client/x.js', target: 'client/x.js' }, // down: fine
      { file: 'client/b.js', spec: './c.js', target: 'client/c.js' }, // its own folder: fine
      { file: 'transport/t.js', spec: '../client/x.js', target: 'client/x.js' }, // up
      { file: 'client/d.js', spec: '../peer/p.js', target: 'peer/p.js' }, // beside
      { file: 'peer/q.js', spec: '../client/x.js', target: 'client/x.js' }, // beside, known
      { file: 'protocol/e.js', spec: '../bench/lib/f.js', target: 'bench/lib/f.js' }, // in no layer
      { file: 'client/g.js', spec: 'zeromq', target: null }, // zeromq outside the transport
      { file: 'transport/h.js', spec: 'zeromq', target: null }, // in it: fine
    ], r, new Map([['peer/q.js -> client/x.js', ''], ['peer/gone.js -> client/x.js', '']]), (f) => f.startsWith('transport/'))
    expect(broken).to.have.length(4)
    expect(broken[0]).to.include('transport/t.js').and.to.include("'../client/x.js'").and.to.include('above it')
    expect(broken[1]).to.include('client/d.js').and.to.include('beside it')
    expect(broken[2]).to.include('protocol/e.js').and.to.include('in no layer')
    expect(broken[3]).to.include('client/g.js').and.to.include('zeromq')
    expect(unused).to.deep.equal(['peer/gone.js -> client/x.js'])
  })
})
