// The package surface: entry points, error classes and their stable codes.
import { expect } from 'chai'
import * as root from 'zeromesh'
import * as peer from 'zeromesh/peer'
import * as client from 'zeromesh/client'
import * as protocol from 'zeromesh/protocol'
import * as metrics from 'zeromesh/metrics'
import * as testing from 'zeromesh/testing'

const codes = {
  TimeoutError: ['ERR_ZEROMESH_TIMEOUT', true],
  NoPeersError: ['ERR_ZEROMESH_NO_PEERS', true],
  UnknownMethodError: ['ERR_ZEROMESH_UNKNOWN_METHOD', false],
  RemoteError: ['ERR_ZEROMESH_REMOTE', false],
  BusyError: ['ERR_ZEROMESH_BUSY', true],
  DrainingError: ['ERR_ZEROMESH_DRAINING', true],
  ClosedError: ['ERR_ZEROMESH_CLOSED', false],
  InvalidArgumentError: ['ERR_ZEROMESH_INVALID_ARGUMENT', false],
  ConnectionLostError: ['ERR_ZEROMESH_CONNECTION_LOST', false],
  AbortError: ['ERR_ZEROMESH_ABORTED', false],
  ProtocolError: ['ERR_ZEROMESH_PROTOCOL', false],
  HandshakeError: ['ERR_ZEROMESH_HANDSHAKE', false],
  UserCodeError: ['ERR_ZEROMESH_USER_CODE', false],
  InvalidInputError: ['ERR_ZEROMESH_INVALID_INPUT', false],
  InvalidOutputError: ['ERR_ZEROMESH_INVALID_OUTPUT', false],
  NoSubscribersError: ['ERR_ZEROMESH_NO_SUBSCRIBERS', true],
}

describe('package surface', () => {
  it('entry points export what the docs and types promise', () => {
    expect(Object.keys(root).sort()).to.deep.equal(['Client', 'Peer', 'ZeromeshError', 'clientDefaults', 'contract', 'implement', 'membershipDefaults', 'on', 'peerDefaults', 'strategyNames', ...Object.keys(codes)].sort())
    expect(peer.Peer).to.equal(root.Peer)
    expect(client.Client).to.equal(root.Client)
    expect(protocol.decode).to.be.a('function')
    expect(protocol.ProtocolError).to.equal(root.ProtocolError)
    expect(Object.keys(metrics).sort()).to.deep.equal(['clientMetrics', 'peerMetrics'])
    expect(Object.keys(testing).sort()).to.deep.equal(['MemoryNetwork', 'VirtualClock', 'seededRandom'])
  })

  for (const [name, [code, retryable]] of Object.entries(codes)) {
    it(`${name} has code ${code}, retryable ${retryable}, a name and a default message`, () => {
      const err = new root[name]()
      expect(err).to.be.instanceOf(root.ZeromeshError).and.instanceOf(Error)
      expect(err).to.include({ code, retryable, name })
      expect(err.message.length).to.be.greaterThan(0)
      expect(root[name].code).to.equal(code)
    })
  }

  it('the ErrorCode type is the union of every code an error class has, and nothing else', async () => {
    const fs = await import('node:fs')
    const dts = fs.readFileSync(new URL('../../protocol/index.d.ts', import.meta.url), 'utf8')
    const union = dts.slice(dts.indexOf('export type ErrorCode ='), dts.indexOf('export declare class ZeromeshError'))
    const typed = [...union.matchAll(/'(ERR_ZEROMESH[A-Z_]*)'/g)].map((m) => m[1]).sort()
    const raised = [...Object.values(codes).map(([code]) => code), new root.ZeromeshError('bare').code].sort()
    expect(typed).to.deep.equal(raised)
  })

  it('message types, statuses and error codes keep their numbers (append only)', () => {
    expect(protocol.MessageType).to.deep.equal({
      REQUEST: 1, REPLY: 2, PING: 3, PONG: 4, ERROR: 5, PROBE: 6, ACK: 7, PROBE_REQ: 8, NACK: 9, SYNC: 10, MEMBERS_GET: 11, MEMBERS: 12, CANCEL: 13, SEALED: 14, SERVICE_GET: 15, SERVICE: 16, KEY_PROOF: 17, STREAM_OPEN: 18, STREAM_ITEM: 19, STREAM_CREDIT: 20, STREAM_END: 21, EVENT: 22,
    })
    expect(protocol.Feature).to.deep.equal({ STREAMS: 1, EVENTS: 2 })
    expect(protocol.MemberState).to.deep.equal({ ALIVE: 0, SUSPECT: 1, DEAD: 2, LEFT: 3 })
    expect(protocol.Status).to.deep.equal({ OK: 0, UNKNOWN_METHOD: 1, REMOTE: 2, BUSY: 3, DRAINING: 4, INVALID_REQUEST: 5, VALUES: 6 })
    expect(protocol.Accepts).to.deep.equal({ BULK: 1, VALUES: 2 })
    expect(protocol.ProtocolErrorCode).to.deep.equal({ UNSUPPORTED_VERSION: 1, UNKNOWN_TYPE: 2 })
  })
})

describe('each entry\'s runtime exports and its declarations (issue 55, item 3)', function () {
  this.timeout(60000)
  it('every name an entry exports at run time is declared in its .d.ts, and every value its .d.ts declares exists', async () => {
    const { execFileSync } = await import('node:child_process')
    const fs = await import('node:fs')
    const path = await import('node:path')
    const repo = path.resolve(import.meta.dirname, '../..')
    // Every entry package.json exports (but its own package.json), as a user imports it.
    const pkg = JSON.parse(fs.readFileSync(path.join(repo, 'package.json'), 'utf8'))
    const entries = {}
    for (const sub of Object.keys(pkg.exports)) if (sub !== './package.json') entries[sub === '.' ? 'zeromesh' : `zeromesh/${sub.slice(2)}`] = await import(sub === '.' ? 'zeromesh' : `zeromesh/${sub.slice(2)}`)
    expect(Object.keys(entries)).to.include.members(['zeromesh', 'zeromesh/peer', 'zeromesh/client', 'zeromesh/protocol', 'zeromesh/metrics', 'zeromesh/testing', 'zeromesh/http', 'zeromesh/nest'])
    // A probe per entry: an object with exactly the run time's names, typed as having exactly
    // the declared values (`keyof typeof m` holds values, not types): tsc refuses a name
    // missing on either side.
    const dir = fs.mkdtempSync(path.join(repo, 'test/types/.surface-'))
    try {
      const files = []
      for (const [i, [spec, mod]] of Object.entries(entries).entries()) {
        const names = Object.keys(mod).map((n) => `  ${n}: true,`).join('\n')
        fs.writeFileSync(path.join(dir, `entry${i}.ts`), `import * as m from '${spec}'\nexport const names: { [K in keyof typeof m]: true } = {\n${names}\n}\n`)
        files.push(`entry${i}.ts`)
      }
      // skipLibCheck: the probes' own lines are what this checks (npm run test:types checks the declarations themselves).
      fs.writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify({ extends: '../tsconfig.json', compilerOptions: { skipLibCheck: true }, files }))
      let out = ''
      try { execFileSync(path.join(repo, 'node_modules/.bin/tsc'), ['-p', path.join(dir, 'tsconfig.json')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }) } catch (err) { out = `${err.stdout}${err.stderr}` }
      const which = (line) => { const m = line.match(/entry(\d+)\.ts/); return m === null ? line : `${Object.keys(entries)[Number(m[1])]}: ${line.slice(line.indexOf('error'))}` }
      expect(out.split('\n').filter((l) => l.includes('error')).map(which)).to.deep.equal([])
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })

  it('zeromesh/protocol holds the wire format, not the internal helpers it once leaked (seal, unseal, remoteError, invalidArgument, classify, checkValue)', () => {
    for (const name of ['seal', 'unseal', 'sealKey', 'remoteError', 'invalidArgument', 'classify', 'Kind', 'checkValue']) expect(protocol, name).to.not.have.property(name)
    for (const name of ['decode', 'encodeRequest', 'Limits', 'MessageType', 'Status', 'serviceDigest', 'keyProof', 'RemoteCode']) expect(protocol, name).to.have.property(name)
  })
})

describe('package contents', function () {
  this.timeout(30000)
  it('the entries built on the public API (zeromesh/nest, zeromesh/http, the operations endpoint, the command line) never reach a Peer\'s or Client\'s insides, and zeromesh/nest takes nothing of client/ but its entry', async () => {
    const fs = await import('node:fs')
    const path = await import('node:path')
    const root = path.resolve(import.meta.dirname, '../..')
    const files = (dir) => fs.readdirSync(path.join(root, dir), { withFileTypes: true, recursive: true })
      .filter((e) => e.isFile() && e.name.endsWith('.js')).map((e) => path.relative(root, path.join(e.parentPath, e.name)))
    const reaching = []
    const nestImports = []
    for (const dir of ['nest', 'http', 'ops', 'bin']) {
      for (const rel of files(dir)) {
        const text = fs.readFileSync(path.join(root, rel), 'utf8')
        if (/\binsideOf\b/.test(text)) reaching.push(rel)
        if (dir === 'nest') for (const m of text.matchAll(/from '(\.\.\/client\/[^']+)'/g)) if (m[1] !== '../client/index.js') nestImports.push(`${rel}: ${m[1]}`)
      }
    }
    expect(reaching, 'files that use insideOf: give them a public method or a narrow hook instead (issue 74)').to.deep.equal([])
    expect(nestImports, 'zeromesh/nest imports from client/ other than its entry').to.deep.equal([])
  })

  it('the packed package holds every file its entry points and the command line import, and they import only dependencies', async () => {
    const { execFileSync } = await import('node:child_process')
    const fs = await import('node:fs')
    const path = await import('node:path')
    const root = path.resolve(import.meta.dirname, '../..')
    const packed = new Set(JSON.parse(execFileSync('npm', ['pack', '--dry-run', '--json'], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }))[0].files.map((f) => f.path))
    expect([...packed].filter((f) => f.startsWith('bench/')), 'the benchmarks are the repository\'s, not the package\'s (zeromesh bench ships in bin/bench/)').to.deep.equal([])
    const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'))
    const seen = new Set()
    const missing = []
    const devImports = [] // a shipped file importing what an install of the package lacks
    const visit = (rel) => {
      if (seen.has(rel)) return
      seen.add(rel)
      if (!packed.has(rel)) missing.push(rel)
      const text = fs.readFileSync(path.join(root, rel), 'utf8')
      for (const m of text.matchAll(/(?:import|export)\s[^'"]*?from\s+'(\.[^']+)'|import\('(\.[^']+)'\)|new URL\('(\.[^']+\.js)', import\.meta\.url\)/g)) {
        const spec = m[1] ?? m[2] ?? m[3]
        visit(path.relative(root, path.resolve(path.dirname(path.join(root, rel)), spec)))
      }
      for (const m of text.matchAll(/(?:import|export)\s[^'"]*?from\s+'([^.'][^']*)'|import\('([^.'][^']*)'\)/g)) {
        const name = (m[1] ?? m[2]).split('/').slice(0, (m[1] ?? m[2]).startsWith('@') ? 2 : 1).join('/')
        const optional = pkg.peerDependenciesMeta?.[name]?.optional === true // imported only if installed (protocol/trace-context.js)
        if (!name.startsWith('node:') && !Object.hasOwn(pkg.dependencies, name) && !optional) devImports.push(`${rel}: ${name}`)
      }
    }
    const entryFiles = Object.entries(pkg.exports).filter(([sub]) => sub !== './package.json').map(([, e]) => path.normalize(e.default))
    expect(entryFiles).to.include.members(['index.js', 'peer/index.js', 'client/index.js', 'protocol/index.js', 'ops/metrics.js', 'testing/index.js', 'http/index.js', 'nest/index.js'])
    for (const entry of [...entryFiles, 'bin/zeromesh.js']) visit(entry)
    expect(seen.size).to.be.above(40)
    expect(missing).to.deep.equal([])
    expect(devImports).to.deep.equal([])
    // The container image has what `zeromesh peer` needs (bench/ is for `zeromesh bench` only,
    // testing/ for users' tests, http/ and nest/ for their gateways and Nest applications,
    // jetstream/ for durable events, which need the @nats-io packages the image does not hold).
    const dockerfile = fs.readFileSync(path.join(root, 'Dockerfile'), 'utf8')
    const dirs = new Set([...seen].filter((f) => f.includes('/') && !['bench/', 'testing/', 'http/', 'nest/', 'jetstream/'].some((d) => f.startsWith(d))).map((f) => f.split('/')[0]))
    for (const d of dirs) expect(dockerfile, `Dockerfile copies ${d}/`).to.match(new RegExp(`^COPY ${d} \\./${d}$`, 'm'))
  })
})

describe('without @opentelemetry/api (an optional peer dependency)', function () {
  this.timeout(30000)
  it('loads, serves requests and streams, and traces nothing', async () => {
    const { execFile } = await import('node:child_process')
    const out = await new Promise((resolve, reject) => execFile(process.execPath, [new URL('../fixtures/no-otel.mjs', import.meta.url).pathname], { timeout: 20000 }, (err, stdout, stderr) => err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout)))
    expect(JSON.parse(out)).to.deep.equal({ otel: 'absent', result: 'no trace', items: ['no trace'] })
  })
})

describe('zeromesh without the NestJS packages (optional peer dependencies)', function () {
  this.timeout(30000)
  it('every entry but zeromesh/nest loads and serves, asking for no Nest package; zeromesh/nest fails naming what it lacks', async () => {
    const { execFile } = await import('node:child_process')
    const out = await new Promise((resolve, reject) => execFile(process.execPath, [new URL('../fixtures/no-nest.mjs', import.meta.url).pathname], { timeout: 20000 }, (err, stdout, stderr) => err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout)))
    expect(JSON.parse(out)).to.deep.equal({ result: 7, askedBefore: [], nest: 'ERR_MODULE_NOT_FOUND', askedFor: true })
  })
})

/** [relative path, text] of every .js file under `dirs` of the repository. */
async function sources (dirs) {
  const fs = await import('node:fs')
  const path = await import('node:path')
  const root = path.resolve(import.meta.dirname, '../..')
  const out = []
  for (const dir of dirs) {
    for (const f of fs.readdirSync(path.join(root, dir), { recursive: true })) {
      const rel = path.join(dir, String(f))
      if (rel.endsWith('.js')) out.push([rel, fs.readFileSync(path.join(root, rel), 'utf8')])
    }
  }
  return out
}

describe('error codes in one place (issue 28, item 6)', () => {
  it('no code outside protocol/errors.js spells an ERR_ZEROMESH_ code; the codes a peer puts in a REMOTE answer are exported', async () => {
    const spelled = []
    for (const [rel, text] of await sources(['protocol', 'transport', 'peer', 'client', 'ops', 'bin'])) {
      if (rel === 'protocol/errors.js') continue
      for (const m of text.matchAll(/'ERR_ZEROMESH_[A-Z_]+'/g)) spelled.push(`${rel}: ${m[0]}`)
    }
    expect(spelled).to.deep.equal([])
    expect(protocol.RemoteCode).to.deep.equal({ EXPIRED: 'ERR_ZEROMESH_EXPIRED', ENCODE: 'ERR_ZEROMESH_ENCODE', WORKER_EXIT: 'ERR_ZEROMESH_WORKER_EXIT', TOO_LARGE: 'ERR_ZEROMESH_TOO_LARGE', STREAM_ONLY: 'ERR_ZEROMESH_STREAM_ONLY', INVALID_INPUT: 'ERR_ZEROMESH_INVALID_INPUT', INVALID_OUTPUT: 'ERR_ZEROMESH_INVALID_OUTPUT' })
  })
})

describe('seams (issue 28, item 5)', () => {
  it('only transport/ imports zeromq (and bin/bench/, whose raw ZeroMQ clients and servers are zeromesh bench\'s baseline); no simulation code ships in peer/ or client/', async () => {
    const found = []
    for (const [rel, text] of await sources(['protocol', 'peer', 'client', 'ops', 'bin', 'testing'])) {
      if (/from\s+'zeromq'|import\('zeromq'\)/.test(text) && !rel.startsWith('bin/bench/')) found.push(`${rel} imports zeromq`)
      if (/(?:sim|simulation)[^/']*\.js'/.test(text) && !rel.startsWith('testing')) found.push(`${rel} imports simulation code`)
      if (/^(peer|client)\//.test(rel) && /^(sim-|virtual-clock|memory-network)/.test(rel.split('/').pop())) found.push(`${rel} is simulation code`)
    }
    expect(found).to.deep.equal([])
  })
})
