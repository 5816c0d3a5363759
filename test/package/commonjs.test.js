// zeromesh from CommonJS: a project whose node_modules holds zeromesh (a link to this checkout,
// as `npm install` of the tarball lays it out) require()s it from a .cjs file, and from
// TypeScript compiled to CommonJS (module: commonjs, as NestJS compiles). Both start a Peer
// and a Client in a child process and print what one request answered. require() of an ES
// module graph works from Node 20.19 on, as long as no module in it has a top-level await.
import { expect } from 'chai'
import { execFile } from 'node:child_process'
import { rm, writeFile, copyFile } from 'node:fs/promises'
import path from 'node:path'
import { ROOT, consumerDir } from '../helpers/consumer.js'

const FIXTURES = path.join(ROOT, 'test', 'fixtures')

function node (args, cwd) {
  return new Promise((resolve, reject) => execFile(process.execPath, args, { cwd, timeout: 60000 }, (err, stdout, stderr) =>
    err ? reject(new Error(`${err.message}\n${stdout}\n${stderr}`)) : resolve({ stdout, stderr })))
}

describe('CommonJS (require)', function () {
  this.timeout(90000)
  let dir

  before(async () => {
    dir = await consumerDir('zeromesh-cjs-')
    await writeFile(path.join(dir, 'package.json'), JSON.stringify({ name: 'cjs-app', private: true, type: 'commonjs' }))
  })

  after(async () => { if (dir) await rm(dir, { recursive: true, force: true }) })

  it('a .cjs file require()s zeromesh, zeromesh/testing and zeromesh/metrics, and serves a request', async () => {
    await copyFile(path.join(FIXTURES, 'commonjs-app.cjs'), path.join(dir, 'app.cjs'))
    const { stdout, stderr } = await node(['app.cjs'], dir)
    expect(JSON.parse(stdout)).to.deep.equal({ out: { n: 2 }, busy: 'ERR_ZEROMESH_BUSY', testing: 'function', metrics: 'function' })
    expect(stderr).to.not.match(/ERR_REQUIRE|top-level await/)
  })

  it('TypeScript compiled to CommonJS (strict, module commonjs) type-checks, runs and narrows error codes', async () => {
    await copyFile(path.join(FIXTURES, 'commonjs-app.cts'), path.join(dir, 'app.cts'))
    await writeFile(path.join(dir, 'tsconfig.json'), JSON.stringify({
      compilerOptions: { strict: true, module: 'commonjs', target: 'es2022', outDir: 'out', types: ['node'] },
      files: ['app.cts'],
    }))
    await node([path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', dir], dir)
    const { stdout } = await node([path.join('out', 'app.cjs')], dir)
    expect(JSON.parse(stdout)).to.deep.equal({ out: { n: 1 }, code: 'ERR_ZEROMESH_UNKNOWN_METHOD', module: 'object' })
  })
})
