// The lab's network (bench/cluster/lab.js): hosts as Linux network namespaces, each with one
// interface on a bridge that lives in a namespace of its own (the "switch"), so nothing is
// added to the machine's own namespace: no bridge, no route, no address. Addresses come from
// 10.213.0.0/16, which exists only inside these namespaces. Faults are nftables rules inside a
// host's namespace (this kernel has no netem): drop what goes to or comes from some addresses
// (a zone cut off), or everything on its interface (a host blackholed). Needs root.
//
// Every namespace and process it made is removed by destroy(), which runs at exit and on
// SIGINT/SIGTERM too; a run's names carry its own tag, so two runs never touch each other's.
import { spawn, spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'

const SUBNET = '10.213'

/** Runs `ip ...args` (or another command) and throws with its stderr when it fails. */
function run (cmd, args, input) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', input, timeout: 30000 })
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')}: ${(r.stderr || r.error?.message || '').trim()}`)
  return r.stdout
}

export class LabNet {
  constructor (tag = `zm${process.pid}`) {
    if (process.getuid?.() !== 0) throw new Error('the lab makes network namespaces: run it as root')
    for (const [cmd, hint] of [['ip', 'iproute2'], ['nft', 'nftables']]) {
      if (spawnSync(cmd, ['-V'], { encoding: 'utf8' }).error) throw new Error(`the lab needs ${cmd}: apt-get install ${hint}`)
    }
    this.tag = tag
    this.switch = `${tag}-sw`
    this.hosts = new Map() // name -> { ns, address, port }
    this.children = new Set()
    this.destroyed = false
    run('ip', ['netns', 'add', this.switch])
    run('ip', ['-n', this.switch, 'link', 'add', 'br0', 'type', 'bridge'])
    run('ip', ['-n', this.switch, 'link', 'set', 'br0', 'up'])
    const destroy = () => this.destroy()
    this.onExit = destroy
    this.onSignal = () => { destroy(); process.exit(130) }
    process.on('exit', this.onExit)
    process.on('SIGINT', this.onSignal)
    process.on('SIGTERM', this.onSignal)
  }

  /** The address of host `i` of `group` (0: peer hosts, 1: client hosts, 2: services such as DNS). */
  static address (group, i) {
    return `${SUBNET}.${group}.${i + 1}`
  }

  /** A host: a namespace with `address`/16 on the bridge. */
  addHost (name, address) {
    const ns = `${this.tag}-${name}`
    const port = `p${this.hosts.size}` // the switch's end of the veth pair (names are per namespace)
    run('ip', ['netns', 'add', ns])
    this.hosts.set(name, { ns, address, port })
    run('ip', ['-n', this.switch, 'link', 'add', port, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', ns])
    run('ip', ['-n', this.switch, 'link', 'set', port, 'master', 'br0', 'up'])
    run('ip', ['-n', ns, 'addr', 'add', `${address}/16`, 'dev', 'eth0'])
    run('ip', ['-n', ns, 'link', 'set', 'eth0', 'up'])
    run('ip', ['-n', ns, 'link', 'set', 'lo', 'up'])
    return ns
  }

  /** Starts `argv` inside host `name`'s namespace; the child is killed by destroy() if still alive. */
  spawn (name, argv, options = {}) {
    const { ns } = this.host(name)
    const child = spawn('ip', ['netns', 'exec', ns, ...argv], { stdio: ['pipe', 'pipe', 'pipe'], ...options })
    this.children.add(child)
    child.once('exit', () => this.children.delete(child))
    return child
  }

  host (name) {
    const h = this.hosts.get(name)
    if (h === undefined) throw new Error(`no lab host ${name}`)
    return h
  }

  /** Host `name` drops every packet to or from `addresses` (its side of a cut); heal() undoes it. */
  block (name, addresses) {
    if (addresses.length === 0) return
    const set = `{ ${addresses.join(', ')} }`
    this.rules(name, [
      `add rule inet zmlab in ip saddr ${set} drop`,
      `add rule inet zmlab out ip daddr ${set} drop`,
    ])
  }

  /** Host `name` drops everything on its interface: its processes live on, unreachable. */
  blackhole (name) {
    this.rules(name, ['add rule inet zmlab in iifname "eth0" drop', 'add rule inet zmlab out oifname "eth0" drop'])
  }

  rules (name, lines) {
    const { ns } = this.host(name)
    const script = ['table inet zmlab {', '  chain in { type filter hook input priority 0; }', '  chain out { type filter hook output priority 0; }', '}', ...lines].join('\n') + '\n'
    run('ip', ['netns', 'exec', ns, 'nft', '-f', '-'], script)
  }

  /** Host `name` drops nothing any more. */
  heal (name) {
    const { ns } = this.host(name)
    spawnSync('ip', ['netns', 'exec', ns, 'nft', 'delete', 'table', 'inet', 'zmlab'], { encoding: 'utf8' })
  }

  /** Bytes host `name`'s interface sent and received so far. */
  bytes (name) {
    const { ns } = this.host(name)
    const text = run('ip', ['netns', 'exec', ns, 'cat', '/proc/net/dev'])
    const line = text.split('\n').find((l) => l.trim().startsWith('eth0:'))
    const f = line.split(':')[1].trim().split(/\s+/).map(Number)
    return { rx: f[0], tx: f[8] }
  }

  /** Kills what it started (by PID), removes every namespace it made (their interfaces go with them). */
  destroy () {
    if (this.destroyed) return
    this.destroyed = true
    for (const child of this.children) {
      try { process.kill(child.pid, 'SIGKILL') } catch {}
    }
    for (const { ns } of this.hosts.values()) spawnSync('ip', ['netns', 'del', ns])
    spawnSync('ip', ['netns', 'del', this.switch])
    process.off('exit', this.onExit)
    process.off('SIGINT', this.onSignal)
    process.off('SIGTERM', this.onSignal)
  }
}

/** Namespaces left by a lab run that was killed before it could clean up (its tag's process is gone). */
export function staleLabNamespaces () {
  const names = spawnSync('ip', ['netns', 'list'], { encoding: 'utf8' }).stdout.split('\n').map((l) => l.split(' ')[0]).filter(Boolean)
  return names.filter((n) => {
    const m = /^zm(\d+)-/.exec(n)
    if (m === null) return false
    try { readFileSync(`/proc/${m[1]}/stat`); return false } catch { return true }
  })
}
