// npm test is two runs: test:unit (unit, simulation and in-process integration tests, mocha in
// parallel) and test:process (child processes, the package, the docs, one at a time). Every
// test file belongs to exactly one of them, so splitting the suite loses none.
import { expect } from 'chai'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('../..', import.meta.url))
const folderOf = (pattern) => /^test\/([^/*]+)\/\*\*\/\*\.test\.js$/.exec(pattern)?.[1] ?? null

function testFiles (dir) {
  const out = []
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name)
    if (e.isDirectory()) out.push(...testFiles(p))
    else if (e.name.endsWith('.test.js')) out.push(path.relative(root, p))
  }
  return out
}

describe('the test suite', () => {
  it('npm test runs test:unit and test:process, and every test file is in exactly one of them', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'))
    expect(pkg.scripts.test).to.equal('npm run test:unit && npm run test:process')
    const folders = []
    for (const config of ['test/mocharc.unit.json', 'test/mocharc.process.json']) {
      // Environment first (the allocator settings, held to the command's by memory-budget.test.js), then mocha.
      expect(pkg.scripts[config.includes('unit') ? 'test:unit' : 'test:process']).to.match(new RegExp(`^(?:[A-Z_]+=\\S+ )*mocha --config ${config}$`))
      for (const pattern of JSON.parse(fs.readFileSync(path.join(root, config), 'utf8')).spec) {
        const folder = folderOf(pattern)
        expect(folder, `${config}: ${pattern} is not of the form test/FOLDER/**/*.test.js`).to.not.equal(null)
        folders.push(folder)
      }
    }
    expect(new Set(folders).size, 'a folder in both runs').to.equal(folders.length)
    const lost = testFiles(path.join(root, 'test')).filter((f) => !folders.includes(f.split(path.sep)[1]))
    expect(lost).to.deep.equal([])
  })
})
