#!/bin/sh
':' //; exec env MALLOC_ARENA_MAX="${MALLOC_ARENA_MAX:-2}" MALLOC_MMAP_THRESHOLD_="${MALLOC_MMAP_THRESHOLD_:-32768}" MALLOC_TRIM_THRESHOLD_="${MALLOC_TRIM_THRESHOLD_:-131072}" node "$0" "$@"
// ^ Run as a command (npx zeromesh, node_modules/.bin/zeromesh), the line above is sh: it
// starts node with glibc's allocator told to give memory back (docs/guides/deploying.md#memory): buffers of
// 32 KiB and more mapped on their own and unmapped when freed, free memory at the top of the
// heap returned past 128 KiB, two arenas. Values already in the environment are kept. Run as
// `node bin/zeromesh.js`, it is a string and a comment, and those settings are yours to set.
// The zeromesh command line. Results go to stdout, logs and errors to stderr.
import process from 'node:process'
import { VERSION } from '../protocol/version.js'
import { USAGE } from './usage.js'
import { UsageError } from './args.js'
import { InvalidArgumentError } from '../protocol/errors.js'

async function main (argv) {
  const [command, ...rest] = argv
  if (command === '--help' || command === '-h' || command === 'help') {
    process.stdout.write(USAGE.main + '\n')
    return 0
  }
  if (command === '--version' || command === '-v' || command === 'version') {
    process.stdout.write(`${VERSION}\n`)
    return 0
  }
  if (command === undefined) throw new UsageError(`a command is needed\n\n${USAGE.main}`)
  // One file a command (bin/commands/), loaded when it runs.
  switch (command) {
    case 'peer': return (await import('./commands/peer.js')).run(rest)
    case 'request': return (await import('./commands/request.js')).run(rest)
    case 'members': return (await import('./commands/members.js')).run(rest)
    case 'describe': return (await import('./commands/describe.js')).run(rest)
    case 'publish':
    case 'broadcast': return (await import('./commands/event.js')).run(command, rest)
    case 'demo': return (await import('./commands/demo.js')).run(rest)
    case 'bench': return (await import('./commands/bench.js')).run(rest)
    case 'keygen': return (await import('./commands/keygen.js')).run(rest)
  }
  throw new UsageError(`unknown command "${command}"\n\n${USAGE.main}`)
}

main(process.argv.slice(2)).then((code) => {
  process.exitCode = code
}, (err) => {
  if (err instanceof UsageError) {
    process.stderr.write(`zeromesh: ${err.message}\n`)
    process.exitCode = 2
  } else if (typeof err?.code === 'string') {
    process.stderr.write(`${err.code}: ${String(err.message).replace(/^zeromesh: /, '')}${err.remoteCode ? ` (remote code ${err.remoteCode})` : ''}\n`)
    process.exitCode = err.code === InvalidArgumentError.code ? 2 : 1
  } else {
    process.stderr.write(`zeromesh: ${err?.stack ?? err}\n`)
    process.exitCode = 1
  }
})
