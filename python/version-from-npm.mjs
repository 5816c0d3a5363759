// Writes python/zeromesh/_version.py from package.json's version: one version for both packages,
// set in one place (npm version runs this, package.json's "version" script). With --check it
// writes nothing and exits 1 when the file says otherwise. npm's semver becomes PEP 440:
// 1.2.3 as is, 1.2.3-alpha.4 / -beta.4 / -rc.4 as 1.2.3a4 / b4 / rc4; any other is refused.
import { readFileSync, writeFileSync } from 'node:fs'

const root = new URL('../', import.meta.url)
const npm = JSON.parse(readFileSync(new URL('package.json', root), 'utf8')).version
const m = /^(\d+\.\d+\.\d+)(?:-(alpha|beta|rc)\.(\d+))?$/.exec(npm)
if (m === null) {
  process.stderr.write(`zeromesh: package.json's version ${npm} has no PEP 440 form here: use X.Y.Z or X.Y.Z-alpha.N, -beta.N, -rc.N\n`)
  process.exit(2)
}
const pep440 = m[1] + (m[2] === undefined ? '' : { alpha: 'a', beta: 'b', rc: 'rc' }[m[2]] + m[3])
const text = `# Generated from package.json by python/version-from-npm.mjs (npm version runs it): do not edit.\n__version__ = "${pep440}"\n`
const file = new URL('python/zeromesh/_version.py', root)
if (process.argv.includes('--check')) {
  let now = null
  try { now = readFileSync(file, 'utf8') } catch {}
  if (now !== text) {
    process.stderr.write(`zeromesh: python/zeromesh/_version.py does not say ${pep440} (package.json's ${npm}): run node python/version-from-npm.mjs\n`)
    process.exit(1)
  }
} else {
  writeFileSync(file, text)
}
