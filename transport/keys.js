// CURVE keys as zeromesh handles them: Z85 text (ZeroMQ RFC 32, 40 characters for 32 bytes),
// a public key derived from its secret key (X25519, as libzmq's zmq_curve_public), key files
// of one line each, and lists of public keys read from files and directories.
import fs from 'node:fs'
import path from 'node:path'
import crypto from 'node:crypto'
import { invalidArgument } from '../protocol/errors.js'

const Z85 = '0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#'
const Z85_VALUE = new Int16Array(128).fill(-1)
for (let i = 0; i < Z85.length; i++) Z85_VALUE[Z85.charCodeAt(i)] = i

/** Length of a CURVE key in Z85 text. */
export const KEY_TEXT_LENGTH = 40

/** Z85 text of `bytes` (a multiple of 4 bytes long). */
export function z85Encode (bytes) {
  let out = ''
  for (let i = 0; i < bytes.length; i += 4) {
    let v = ((bytes[i] << 24) >>> 0) + (bytes[i + 1] << 16) + (bytes[i + 2] << 8) + bytes[i + 3]
    let chunk = ''
    for (let j = 0; j < 5; j++) { chunk = Z85[v % 85] + chunk; v = Math.floor(v / 85) }
    out += chunk
  }
  return out
}

/** The bytes of Z85 text, or null when it is not Z85 (length a multiple of 5, alphabet, range). */
export function z85Decode (text) {
  if (typeof text !== 'string' || text.length % 5 !== 0) return null
  const out = Buffer.alloc(text.length / 5 * 4)
  for (let i = 0; i < text.length; i += 5) {
    let v = 0
    for (let j = 0; j < 5; j++) {
      const c = text.charCodeAt(i + j)
      const d = c < 128 ? Z85_VALUE[c] : -1
      if (d < 0) return null
      v = v * 85 + d
    }
    if (v > 0xffffffff) return null
    out.writeUInt32BE(v, i / 5 * 4)
  }
  return out
}

/** Whether `text` is a CURVE key in Z85 (40 characters that decode to 32 bytes). */
export function isKeyText (text) {
  return typeof text === 'string' && text.length === KEY_TEXT_LENGTH && z85Decode(text) !== null
}

// A raw X25519 private key wrapped as PKCS#8, so node:crypto can derive its public key.
const PKCS8_X25519 = Buffer.from('302e020100300506032b656e04220420', 'hex')

/** The public key (Z85) of a CURVE secret key (Z85): X25519 of the base point. */
export function publicKeyOf (secretKey) {
  const raw = z85Decode(secretKey)
  if (raw === null || raw.length !== 32) throw invalidArgument('a CURVE secret key must be 40 characters of Z85 text, as "zeromesh keygen" writes')
  const priv = crypto.createPrivateKey({ key: Buffer.concat([PKCS8_X25519, raw]), format: 'der', type: 'pkcs8' })
  const spki = crypto.createPublicKey(priv).export({ format: 'der', type: 'spki' })
  return z85Encode(spki.subarray(spki.length - 32))
}

/** A new CURVE keypair { publicKey, secretKey }, Z85. */
export function newKeyPair () {
  const { privateKey } = crypto.generateKeyPairSync('x25519')
  const pkcs8 = privateKey.export({ format: 'der', type: 'pkcs8' })
  const secretKey = z85Encode(pkcs8.subarray(pkcs8.length - 32))
  return { publicKey: publicKeyOf(secretKey), secretKey }
}

/**
 * Checks a key given as text: `kind` says which ('secret' or 'public') and `what` names it in
 * the message. Returns the key, trimmed of surrounding whitespace.
 */
export function keyText (v, kind, what) {
  const text = typeof v === 'string' ? v.trim() : v
  if (!isKeyText(text)) {
    throw invalidArgument(`${what} must be a CURVE ${kind} key: 40 characters of Z85 text, as "zeromesh keygen" writes to ${kind === 'secret' ? 'PREFIX.key' : 'PREFIX.pub'}`)
  }
  return text
}

/**
 * Reads a key file of one line (PREFIX.key: secret, PREFIX.pub: public). Both look alike, so
 * a secret key is checked against its PREFIX.pub when there is one, and a .pub file given
 * where a secret key goes is refused.
 */
export function readKeyFile (file, kind, what = file) {
  if (kind === 'secret' && file.endsWith('.pub')) throw invalidArgument(`${what} ${file} is a public key file; give the secret key, PREFIX.key`)
  if (kind === 'public' && file.endsWith('.key')) throw invalidArgument(`${what} ${file} is a secret key file; give the public key, PREFIX.pub (and never hand out a .key)`)
  let text
  try {
    text = fs.readFileSync(file, 'utf8')
  } catch (err) {
    throw invalidArgument(`cannot read ${what} ${file}: ${err.code === 'ENOENT' ? 'no such file' : err.code ?? 'unreadable'}`)
  }
  if (kind === 'secret') refuseOpenMode(file, what)
  const key = keyText(text, kind, `${what} (${file})`)
  if (kind === 'secret' && file.endsWith('.key')) {
    const pubFile = `${file.slice(0, -4)}.pub`
    let pub = null
    try { pub = fs.readFileSync(pubFile, 'utf8').trim() } catch { /* no public key beside it */ }
    if (pub !== null && pub !== publicKeyOf(key)) throw invalidArgument(`${what} ${file} is not the secret key of ${pubFile} beside it`)
  }
  return key
}

/**
 * A secret key file that other users can read or write is refused, as ssh refuses a private
 * key that others can read. Its group may read it: a Kubernetes Secret mounted for the pod's
 * fsGroup is mode 0440.
 */
function refuseOpenMode (file, what) {
  if (process.platform === 'win32') return // no POSIX modes to check
  const mode = fs.statSync(file).mode & 0o777
  if ((mode & 0o007) !== 0) {
    throw invalidArgument(`${what} ${file} can be read or written by other users (mode 0${mode.toString(8)}); chmod 600 ${file} (or 640 for a group that must read it, as a Kubernetes fsGroup mount does)`)
  }
}

/**
 * How an allow-list entry is named in an error: a path ending in .pub as it is, anything else
 * by its place and length only, since it may be a key (even a secret one, pasted by mistake)
 * that must not reach logs. (Z85 has '/' and '.', so nothing else tells a key from a path.)
 */
function entryName (item, i) {
  if (typeof item === 'string' && item.endsWith('.pub')) return JSON.stringify(item)
  return `${i + 1} (${typeof item === 'string' ? `${item.length} characters` : typeof item}, not shown: it may be a key)`
}

/**
 * The public keys of an allow-list: each item is a key (Z85), a `.pub` file, or a directory
 * whose `.pub` files are read (other files are ignored). Returns a Set of Z85 keys. Throws
 * on a file that is not a key, so a typo never silently shuts clients out or lets them in.
 */
export function readPublicKeys (items) {
  const keys = new Set()
  for (const [i, item] of items.entries()) {
    // A file or directory first: a path of 40 characters can also read as Z85 key text. A
    // name ending in .pub is always a path.
    let stat
    try {
      stat = fs.statSync(item)
    } catch (err) {
      if (isKeyText(item) && !item.endsWith('.pub')) { keys.add(item); continue }
      throw invalidArgument(`allow-list entry ${entryName(item, i)} is neither a public key nor a readable file or directory (${err.code ?? 'unreadable'})`)
    }
    if (stat.isDirectory()) {
      for (const name of fs.readdirSync(item).sort()) {
        if (name.endsWith('.pub')) keys.add(readKeyFile(path.join(item, name), 'public', 'allow-list file'))
      }
    } else {
      keys.add(readKeyFile(item, 'public', 'allow-list file'))
    }
  }
  return keys
}

/**
 * Writes a new keypair to PREFIX.key (the secret key, mode 0600) and PREFIX.pub (the public
 * key), each one line of Z85. Refuses to overwrite either file. Returns the paths and keys.
 */
export function writeKeyPair (prefix) {
  const pair = newKeyPair()
  const secretFile = `${prefix}.key`
  const publicFile = `${prefix}.pub`
  for (const f of [secretFile, publicFile]) {
    if (fs.existsSync(f)) throw invalidArgument(`${f} exists; keygen never overwrites a key (remove it first, or pick another prefix)`)
  }
  // 'wx': fails if the file appeared meanwhile; the mode applies at creation.
  fs.writeFileSync(secretFile, pair.secretKey + '\n', { mode: 0o600, flag: 'wx' })
  fs.writeFileSync(publicFile, pair.publicKey + '\n', { mode: 0o644, flag: 'wx' })
  return { secretFile, publicFile, ...pair }
}
