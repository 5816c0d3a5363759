// Builds examples/nestjs as a NestJS project with zeromesh installed would be: a link
// examples/nestjs/node_modules/zeromesh to this checkout (as `npm install` lays a package out;
// the Nest packages resolve from this checkout's node_modules, above it), then `tsc -p`,
// which compiles it to CommonJS in examples/nestjs/dist. For its test and bench/work/cpu.js.
import { execFile } from 'node:child_process'
import { mkdir, symlink, lstat } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
export const NEST_EXAMPLE = path.join(ROOT, 'examples', 'nestjs')
const TSC = path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc')

/** Links and compiles the example; resolves with the path of its dist/ folder. */
export async function buildNestExample () {
  const link = path.join(NEST_EXAMPLE, 'node_modules', 'zeromesh')
  await mkdir(path.dirname(link), { recursive: true })
  try { await lstat(link) } catch { await symlink(ROOT, link, 'dir') }
  await new Promise((resolve, reject) => execFile(process.execPath, [TSC, '-p', NEST_EXAMPLE], { timeout: 120000 }, (err, stdout, stderr) =>
    err ? reject(new Error(`tsc -p examples/nestjs failed:\n${stdout}${stderr}`)) : resolve()))
  return path.join(NEST_EXAMPLE, 'dist')
}
