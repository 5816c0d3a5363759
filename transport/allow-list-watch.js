// The allow-list's files, watched without a signal: a Kubernetes Secret or ConfigMap update,
// or an operator's `cp`, changes them and sends no SIGHUP. A fingerprint of every file and
// directory on the list (names, sizes, modification times, inodes, after symlinks, so the
// `..data` swap of a Kubernetes volume counts) is taken every POLL_MS; when it changes,
// `onChange` is called (the peer reads the list again). Keys given as text never change.
import fs from 'node:fs'
import path from 'node:path'

export const ALLOW_POLL_MS = 1000

/** A string that changes when any file or directory of `items` does. */
export function allowListFingerprint (items) {
  const parts = []
  for (const item of items) {
    let stat
    try { stat = fs.statSync(item) } catch (err) { parts.push(`${item}:${err.code ?? 'gone'}`); continue }
    parts.push(`${item}:${stat.ino}:${stat.size}:${stat.mtimeMs}`)
    if (!stat.isDirectory()) continue
    let names
    try { names = fs.readdirSync(item).sort() } catch (err) { parts.push(`${item}/:${err.code}`); continue }
    for (const name of names) {
      if (!name.endsWith('.pub')) continue
      try {
        const s = fs.statSync(path.join(item, name))
        parts.push(`${name}:${s.ino}:${s.size}:${s.mtimeMs}`)
      } catch (err) { parts.push(`${name}:${err.code ?? 'gone'}`) }
    }
  }
  return parts.join('|')
}

/**
 * Polls `items` with `clock`; calls `onChange()` when their fingerprint changes.
 * @returns {{ stop(): void }}
 */
export function watchAllowList (items, clock, onChange, everyMs = ALLOW_POLL_MS) {
  let last = allowListFingerprint(items)
  let timer = null
  let stopped = false
  const tick = () => {
    if (stopped) return
    const now = allowListFingerprint(items)
    if (now !== last) { last = now; onChange() }
    timer = clock.setTimeout(tick, everyMs)
    timer?.unref?.()
  }
  timer = clock.setTimeout(tick, everyMs)
  timer?.unref?.()
  return { stop () { stopped = true; if (timer !== null) clock.clearTimeout(timer) } }
}
