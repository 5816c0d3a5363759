// Every entry package.json exports resolves, with its types, for a TypeScript consumer under
// each resolution users have: TypeScript 5.9 compiling to CommonJS (its node10 resolution,
// which ignores `exports`: older NestJS starters and many existing projects), 5.9 and 7 with
// nodenext, and 7 compiling to CommonJS. The declarations themselves are checked (no
// skipLibCheck) under node10 and under both resolutions of 7 (npm run test:types checks them
// with 7 too). TypeScript 5.9 is a second devDependency
// (typescript-5.9, an npm alias) beside 7. TypeScript 7 loads no @types package unless
// "types" names it, so each consumer names "node".
import { expect } from 'chai'
import { execFile } from 'node:child_process'
import { rm, writeFile, readFile } from 'node:fs/promises'
import path from 'node:path'
import { ROOT, consumerDir } from '../helpers/consumer.js'

const TSC = { 5.9: path.join(ROOT, 'node_modules/typescript-5.9/bin/tsc'), 7: path.join(ROOT, 'node_modules/typescript/bin/tsc') }

function tsc (version, cwd) {
  return new Promise((resolve) => execFile(process.execPath, [TSC[version], '-p', '.'], { cwd, timeout: 60000 }, (err, stdout, stderr) => resolve({ code: err?.code ?? 0, out: `${stdout}${stderr}` })))
}

describe('TypeScript consumers: every entry resolves with its types', function () {
  this.timeout(120000)
  let dir
  let entries

  before(async () => {
    dir = await consumerDir('zeromesh-ts-', ['@nestjs', 'rxjs', 'prom-client', 'reflect-metadata'])
    const pkg = JSON.parse(await readFile(path.join(ROOT, 'package.json'), 'utf8'))
    entries = Object.keys(pkg.exports).filter((e) => e !== './package.json').map((e) => (e === '.' ? 'zeromesh' : `zeromesh/${e.slice(2)}`))
    // One import of every entry, each used as a value, so a missing declaration is an error.
    const lines = entries.map((e, i) => `import * as e${i} from '${e}'`)
    lines.push(`export const all: object[] = [${entries.map((_, i) => `e${i}`).join(', ')}]`)
    await writeFile(path.join(dir, 'consumer.ts'), lines.join('\n') + '\n')
  })

  after(async () => { if (dir) await rm(dir, { recursive: true, force: true }) })

  const cases = [
    { ts: '5.9', name: 'TypeScript 5.9, module commonjs (node10 resolution)', options: { module: 'commonjs' } },
    { ts: '5.9', name: 'TypeScript 5.9, nodenext', options: { module: 'nodenext', moduleResolution: 'nodenext' }, skipLibCheck: true },
    { ts: '7', name: 'TypeScript 7, nodenext', options: { module: 'nodenext', moduleResolution: 'nodenext' } },
    { ts: '7', name: 'TypeScript 7, module commonjs', options: { module: 'commonjs' } },
  ]
  for (const c of cases) {
    it(c.name, async () => {
      const type = c.options.module === 'commonjs' ? 'commonjs' : 'module'
      await writeFile(path.join(dir, 'package.json'), JSON.stringify({ name: 'ts-consumer', private: true, type }))
      await writeFile(path.join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { ...c.options, target: 'es2022', strict: true, noEmit: true, types: ['node'], skipLibCheck: c.skipLibCheck === true }, files: ['consumer.ts'] }))
      const { code, out } = await tsc(c.ts, dir)
      expect(out.trim(), out).to.equal('')
      expect(code).to.equal(0)
      expect(entries).to.include.members(['zeromesh/metrics', 'zeromesh/nest', 'zeromesh/http'])
    })
  }
})
