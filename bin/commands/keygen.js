// zeromesh keygen: writes a key pair (PREFIX.key, mode 0600, and PREFIX.pub) and prints the public key.
import process from 'node:process'
import { writeKeyPair } from '../../transport/keys.js'
import { USAGE } from '../usage.js'
import { UsageError, parse } from '../args.js'

export function run (args) {
  const { values, positionals } = parse(args, {}, USAGE.keygen, true)
  if (values.help) { process.stdout.write(USAGE.keygen + '\n'); return 0 }
  if (positionals.length !== 1) throw new UsageError(`give one PREFIX, such as keys/cluster\n\n${USAGE.keygen}`)
  const k = writeKeyPair(positionals[0])
  log(`wrote ${k.secretFile} (secret key, mode 0600: keep it private) and ${k.publicFile} (public key)`)
  process.stdout.write(k.publicKey + '\n')
  return 0
}

function log (msg) {
  process.stderr.write(`[zeromesh ${new Date().toISOString()}] ${msg}\n`)
}
