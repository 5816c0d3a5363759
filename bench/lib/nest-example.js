// Builds examples/nestjs as a NestJS project with zeromesh installed would be, in a temporary
// directory (a link into this checkout from inside it would make every walk of the tree go
// round): its src/ and tsconfig.json copied, node_modules/zeromesh a link to this checkout
// (as `npm install` lays a package out), the Nest packages and the rest links to this
// checkout's own (one copy of each, as Node resolves them from zeromesh too); then `tsc -p`,
// which compiles it to CommonJS. For its test and bench/work/nest.js.
import { execFile } from 'node:child_process'
import { cp, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
export const NEST_EXAMPLE = path.join(ROOT, 'examples', 'nestjs')
const TSC = path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc')
const LINKED = ['@nestjs', 'rxjs', 'reflect-metadata', 'zod', '@types']

/** Copies, links and compiles the example; resolves with { dist, remove() }. */
export async function buildNestExample () {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'zeromesh-nestjs-'))
  await cp(path.join(NEST_EXAMPLE, 'src'), path.join(dir, 'src'), { recursive: true })
  await cp(path.join(NEST_EXAMPLE, 'tsconfig.json'), path.join(dir, 'tsconfig.json'))
  await cp(path.join(NEST_EXAMPLE, 'package.json'), path.join(dir, 'package.json'))
  await mkdir(path.join(dir, 'node_modules'))
  await symlink(ROOT, path.join(dir, 'node_modules', 'zeromesh'), 'dir')
  for (const name of LINKED) await symlink(path.join(ROOT, 'node_modules', name), path.join(dir, 'node_modules', name), 'dir')
  await writeFile(path.join(dir, '.built-from'), `${NEST_EXAMPLE}\n`)
  await new Promise((resolve, reject) => execFile(process.execPath, [TSC, '-p', dir], { timeout: 120000 }, (err, stdout, stderr) =>
    err ? reject(new Error(`tsc -p examples/nestjs failed:\n${stdout}${stderr}`)) : resolve()))
  return { dist: path.join(dir, 'dist'), remove: () => rm(dir, { recursive: true, force: true }) }
}
