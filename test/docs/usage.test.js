// One source for usage (issue 25, item 7): the README's "Command line" block is what
// bin/usage.js makes, and every command's --help begins with that command's synopsis from it.
import { expect } from 'chai'
import { readFileSync } from 'node:fs'
import { USAGE, commandLineBlock } from '../../bin/usage.js'

describe('usage comes from one source', () => {
  it('the README\'s "Command line" block is commandLineBlock(), to the character', () => {
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8')
    const block = /## Command line\n\n```\n([\s\S]*?)\n```/.exec(readme)[1]
    expect(block).to.equal(commandLineBlock()) // to mend: node -e "import('./bin/usage.js').then((u) => console.log(u.commandLineBlock()))"
  })

  it('each command\'s --help starts with its synopsis of that block', () => {
    const block = commandLineBlock()
    for (const command of ['peer', 'request', 'members', 'demo', 'bench', 'keygen']) {
      const synopsis = block.split('\n').reduce((acc, line) => {
        if (line.startsWith(`zeromesh ${command} `) || line === `zeromesh ${command}`) acc.on = true
        else if (line.startsWith('zeromesh ')) acc.on = false
        if (acc.on) acc.lines.push(line.trim())
        return acc
      }, { on: false, lines: [] }).lines.join(' ')
      const help = USAGE[command].split('\n\n')[0].replace(/^usage: /, '').split('\n').map((l) => l.trim()).join(' ')
      expect(help, command).to.equal(synopsis)
    }
  })
})

describe('a release (issue 25, item 7)', () => {
  it('the version, the CHANGELOG\'s newest release, the image tag of the manifest and of the README agree', () => {
    const read = (f) => readFileSync(new URL(`../../${f}`, import.meta.url), 'utf8')
    const version = JSON.parse(read('package.json')).version
    expect(JSON.parse(read('package-lock.json')).version).to.equal(version)
    const changelog = read('CHANGELOG.md')
    expect(/^## (\d\S*)/m.exec(changelog)[1]).to.equal(version) // the newest release; an "Unreleased" section may stand above it
    expect([...changelog.matchAll(/^## (\S+)/gm)].map((m) => m[1]).filter((h) => !/^\d/.test(h)).join()).to.be.oneOf(['', 'Unreleased'])
    expect([...read('deploy/kubernetes/deployment.yaml').matchAll(/image: zeromesh:(\S+)/g)].map((m) => m[1])).to.deep.equal([version])
    expect([...read('docs/guides/deploying.md').matchAll(/zeromesh:(\d+\.\d+\.\d+)/g)].map((m) => m[1])).to.deep.equal([version])
  })
})
