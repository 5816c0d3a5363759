// The security flags of the commands (--cluster-key, --allow, --insecure and the handshake
// caps for a peer; --cluster-pub, --key, --insecure for a client), and what they make: the
// `security` option of a Peer or a Client. The environment stands for a flag not given
// (ZEROMESH_CLUSTER_KEY, ZEROMESH_ALLOW, ZEROMESH_CLUSTER_PUB, ZEROMESH_KEY).
import process from 'node:process'
import { readKeyFile, keyText } from '../transport/keys.js'
import { UsageError, wholeOption } from './args.js'

const env = process.env
export const SECURITY_PEER_FLAGS = { 'cluster-key': { type: 'string' }, allow: { type: 'string' }, insecure: { type: 'boolean' }, 'max-connections': { type: 'string' }, 'max-connections-per-address': { type: 'string' }, 'handshakes-per-second': { type: 'string' } }
const CAP_FLAGS = { maxConnections: 'max-connections', maxConnectionsPerAddress: 'max-connections-per-address', handshakesPerSecond: 'handshakes-per-second' }
export const SECURITY_CLIENT_FLAGS = { 'cluster-pub': { type: 'string' }, key: { type: 'string' }, insecure: { type: 'boolean' } }

/** A peer's `security` from --cluster-key, --allow, --insecure (or the environment). */
export function peerSecurity (values, usage) {
  const clusterKey = values['cluster-key'] !== undefined
    ? readKeyFile(values['cluster-key'], 'secret', '--cluster-key')
    : env.ZEROMESH_CLUSTER_KEY === undefined ? undefined : keyText(env.ZEROMESH_CLUSTER_KEY, 'secret', 'ZEROMESH_CLUSTER_KEY')
  const allow = values.allow ?? env.ZEROMESH_ALLOW
  if (values.insecure) {
    if (values['cluster-key'] !== undefined || values.allow !== undefined) throw new UsageError(`--insecure runs plain: it goes with neither --cluster-key nor --allow\n\n${usage}`)
    return false
  }
  const caps = {}
  for (const [key, flag] of Object.entries(CAP_FLAGS)) {
    if (values[flag] === undefined) continue
    if (clusterKey === undefined) throw new UsageError(`--${flag} needs --cluster-key: the caps are checked at CURVE handshakes\n\n${usage}`)
    caps[key] = wholeOption(values[flag], flag, usage)
  }
  if (clusterKey === undefined) {
    if (allow !== undefined) throw new UsageError(`--allow needs --cluster-key: the allow-list is checked at CURVE handshakes\n\n${usage}`)
    return undefined
  }
  return { clusterKey, allow, ...caps }
}

/** A client's `security` from --cluster-pub, --key, --insecure (or the environment). */
export function clientSecurity (values, usage) {
  if (values.insecure) {
    if (values['cluster-pub'] !== undefined || values.key !== undefined) throw new UsageError(`--insecure runs plain: it goes with neither --cluster-pub nor --key\n\n${usage}`)
    return false
  }
  const clusterPublicKey = values['cluster-pub'] !== undefined
    ? readKeyFile(values['cluster-pub'], 'public', '--cluster-pub')
    : env.ZEROMESH_CLUSTER_PUB === undefined ? undefined : keyText(env.ZEROMESH_CLUSTER_PUB, 'public', 'ZEROMESH_CLUSTER_PUB')
  const secretKey = values.key !== undefined
    ? readKeyFile(values.key, 'secret', '--key')
    : env.ZEROMESH_KEY === undefined ? undefined : keyText(env.ZEROMESH_KEY, 'secret', 'ZEROMESH_KEY')
  if (clusterPublicKey === undefined && secretKey === undefined) return undefined
  if (clusterPublicKey === undefined || secretKey === undefined) throw new UsageError(`a secured client needs both --cluster-pub (the cluster's PREFIX.pub) and --key (its own PREFIX.key)\n\n${usage}`)
  return { clusterPublicKey, secretKey }
}
