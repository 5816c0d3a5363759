// The kernel's table of TCP connections (Linux: /proc/net/tcp and tcp6, this process's network
// namespace), read for what libzmq does not say: who the connections to a bound port come
// from. Addresses are given as ZAP gives them: "127.0.0.1", "::1", a mapped IPv4 address as IPv4.
import fs from 'node:fs'
import fsp from 'node:fs/promises'

const FILES = [['/proc/net/tcp', ipv4], ['/proc/net/tcp6', ipv6]]

/** The hex suffix a local address on `port` ends with in the table: ":15B3". */
const portHex = (port) => `:${port.toString(16).toUpperCase().padStart(4, '0')}`

/**
 * Each connection to `port` (the local side) as [state (hex, "01" established), remote host,
 * remote port]; null where there is no table.
 * @param {number} port
 * @param {string|null} [text]  the tables' text, when read already (async callers)
 */
export function connectionsTo (port, texts = null) {
  const local = portHex(port)
  const out = []
  let found = false
  for (let f = 0; f < FILES.length; f++) {
    const [file, parse] = FILES[f]
    let text = texts?.[f]
    if (text === undefined || text === null) {
      if (texts !== null) continue
      try { text = fs.readFileSync(file, 'latin1') } catch { continue }
    }
    found = true
    for (const line of text.split('\n')) {
      if (!line.includes(`${local} `)) continue
      const [, localAddress, remote, state] = line.trim().split(/\s+/)
      if (!localAddress?.endsWith(local)) continue
      const [hex, remotePort] = remote.split(':')
      out.push([state, parse(hex), parseInt(remotePort, 16)])
    }
  }
  return found ? out : null
}

/** connectionsTo, reading the tables without blocking. */
export async function connectionsToAsync (port) {
  const texts = await Promise.all(FILES.map(([file]) => fsp.readFile(file, 'latin1').catch(() => null)))
  return connectionsTo(port, texts)
}

/** Established connections to `port` by remote address; null where there is no table. */
export function establishedByAddress (port) {
  const all = connectionsTo(port)
  if (all === null) return null
  const out = new Map()
  for (const [state, host] of all) if (state === '01') out.set(host, (out.get(host) ?? 0) + 1)
  return out
}

/** "0100007F" (little-endian hex) -> "127.0.0.1" */
export function ipv4 (hex) {
  return [6, 4, 2, 0].map((i) => parseInt(hex.slice(i, i + 2), 16)).join('.')
}

/** 32 hex digits, four little-endian 32-bit words -> "::1"; a mapped IPv4 address as IPv4 */
export function ipv6 (hex) {
  const bytes = []
  for (let w = 0; w < 4; w++) {
    const word = hex.slice(w * 8, w * 8 + 8)
    for (const i of [6, 4, 2, 0]) bytes.push(parseInt(word.slice(i, i + 2), 16))
  }
  const mapped = bytes.slice(0, 10).every((b) => b === 0) && bytes[10] === 0xff && bytes[11] === 0xff
  if (mapped) return bytes.slice(12).join('.')
  const groups = []
  for (let i = 0; i < 16; i += 2) groups.push(((bytes[i] << 8) | bytes[i + 1]).toString(16))
  return groups.join(':').replace(/(^|:)0(:0)+(:|$)/, '::').replace(/^:::/, '::')
}
