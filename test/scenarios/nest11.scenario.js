// zeromesh/nest on NestJS 11 (npm test runs it on 12, the devDependencies'): this checkout
// packed with `npm pack` and installed from the tarball into a temporary project beside
// @nestjs/common, core, microservices and platform-express 11 from the npm registry, as a
// team still on Nest 11 would install it. There, test/integration/nest.test.js (the transport,
// threads, contracts, errors, streams, events, shutdown) runs against Nest 11, and
// examples/nestjs is compiled to CommonJS and served: the heavy and cheap routes, a 400, and
// a SIGTERM to the gateway with requests in flight that loses none.
import { expect } from 'chai'
import { execFile } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { runScript, killAll } from '../helpers/processes.js'
import { eventually } from '../helpers/eventually.js'
import { rawAsker } from '../helpers/raw.js'
import { encodeRequest } from '../../protocol/index.js'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))

function exec (cmd, args, cwd, timeout = 300000) {
  return new Promise((resolve, reject) => execFile(cmd, args, { cwd, timeout, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) =>
    err ? reject(new Error(`${cmd} ${args.join(' ')}: ${err.message}\n${stdout}\n${stderr}`)) : resolve(stdout)))
}

async function started (c, ready) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`not ready: ${c.stderr}`)), 30000)
    c.child.stdout.on('data', () => { const m = ready.exec(c.stdout); if (m) { clearTimeout(timer); resolve(m[1]) } })
    c.exited.then(({ code, signal }) => { clearTimeout(timer); reject(new Error(`exited (${code ?? signal}): ${c.stderr}`)) })
  })
}

describe('zeromesh/nest on NestJS 11, installed from the packed tarball', function () {
  this.timeout(600000)
  let dir

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'zeromesh-nest11-'))
    const tgz = (await exec('npm', ['pack', '--pack-destination', dir, '--silent'], ROOT)).trim().split('\n').pop()
    const dev = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')).devDependencies
    fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({
      name: 'nest11-app',
      private: true,
      type: 'commonjs',
      dependencies: {
        zeromesh: `file:${tgz}`,
        '@nestjs/common': '^11.1.0',
        '@nestjs/core': '^11.1.0',
        '@nestjs/microservices': '^11.1.0',
        '@nestjs/platform-express': '^11.1.0',
        rxjs: dev.rxjs,
        'reflect-metadata': dev['reflect-metadata'],
        zod: dev.zod,
        chai: dev.chai,
        '@types/node': dev['@types/node'],
      },
    }))
    await exec('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error'], dir)
    expect(JSON.parse(fs.readFileSync(path.join(dir, 'node_modules/@nestjs/microservices/package.json'), 'utf8')).version).to.match(/^11\./)
  })

  after(async () => {
    await killAll()
    if (dir) fs.rmSync(dir, { recursive: true, force: true })
  })

  it('test/integration/nest.test.js passes against Nest 11', async () => {
    const test = path.join(dir, 'test')
    for (const f of ['integration/nest.test.js', 'fixtures/nest-app.mjs', 'helpers/eventually.js']) {
      fs.mkdirSync(path.dirname(path.join(test, f)), { recursive: true })
      fs.copyFileSync(path.join(ROOT, 'test', f), path.join(test, f))
    }
    fs.writeFileSync(path.join(test, 'package.json'), JSON.stringify({ type: 'module' })) // the tests are ES modules; the project is CommonJS
    const out = await exec(process.execPath, [path.join(ROOT, 'node_modules/mocha/bin/mocha.js'), '--no-config', '--timeout', '60000', '--reporter', 'dot', 'test/integration/nest.test.js'], dir)
    expect(out).to.match(/\d+ passing/)
    expect(out).to.not.match(/failing/)
  })

  it('examples/nestjs compiles to CommonJS against Nest 11 and serves: heavy, cheap, a 400, and a SIGTERM losing nothing', async () => {
    const app = path.join(dir, 'example')
    fs.cpSync(path.join(ROOT, 'examples/nestjs/src'), path.join(app, 'src'), { recursive: true })
    fs.copyFileSync(path.join(ROOT, 'examples/nestjs/tsconfig.json'), path.join(app, 'tsconfig.json'))
    await exec(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', app], dir)
    const ms = runScript(path.join(app, 'dist/microservice.js'), [], { env: { BIND: 'tcp://127.0.0.1:0', THREADS: '2' } })
    const endpoint = await started(ms, /^(tcp:\S+)\n/)
    const gw = runScript(path.join(app, 'dist/gateway.js'), [], { env: { ZEROMESH_SEEDS: endpoint, PORT: '0', TIMEOUT_MS: '5000' } })
    const url = await started(gw, /listening on (\S+)\n/)
    expect(await (await fetch(`${url}/`)).text()).to.equal('Hello World!')
    expect(await (await fetch(`${url}/heavy?n=1000`)).json()).to.include({ count: 1000 })
    expect((await fetch(`${url}/heavy?n=abc`)).status).to.equal(400)
    const inflight = Array.from({ length: 6 }, () => fetch(`${url}/heavy?n=200000000`).then((r) => r.status, (err) => err.message))
    // All 6 reached the gateway, which called the microservice with each: the load its replies carry says it holds 6
    const raw = rawAsker()
    try {
      await eventually(async () => expect((await raw.ask(endpoint, encodeRequest([[1, 'no.such.method', null, 1000]]))).msg.meta.load).to.equal(6), { timeout: 10000 })
    } finally { raw.close() }
    process.kill(gw.pid, 'SIGTERM')
    expect(await Promise.all(inflight)).to.deep.equal([200, 200, 200, 200, 200, 200])
    await gw.exited
    expect(gw.stderr).to.match(/zeromesh client: \{"requests":7,"ok":7,/)
  })
})
