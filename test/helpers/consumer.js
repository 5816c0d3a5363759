// A project of a user's own in a temporary folder, for the package tests: its node_modules
// links zeromesh (this checkout), @types/node and any of this checkout's other packages named.
import { mkdtemp, mkdir, symlink } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

export const ROOT = fileURLToPath(new URL('../..', import.meta.url))

/** Makes the folder (named from `prefix`) and returns its path; the caller removes it. */
export async function consumerDir (prefix, packages = []) {
  const dir = await mkdtemp(path.join(tmpdir(), prefix))
  await mkdir(path.join(dir, 'node_modules', '@types'), { recursive: true })
  await symlink(ROOT, path.join(dir, 'node_modules', 'zeromesh'), 'dir')
  for (const name of ['@types/node', ...packages]) await symlink(path.join(ROOT, 'node_modules', name), path.join(dir, 'node_modules', name), 'dir')
  return dir
}
