// `zeromesh peer` run as a command goes through its sh header, which starts node with glibc's
// allocator told to map buffers of 32 KiB and more on their own and unmap them when freed, so
// memory goes back after a flood (README, Memory; test/scenarios/memory.scenario.js). The
// price is paid by large values: every 64 KB buffer of a request (the received frame, the
// copies to and from the handler's thread, msgpackr's output) is a fresh mapping whose pages
// fault in one by one: 100-115 minor page faults a request, and about half the requests a
// second of the same peer given a threshold of 256 KiB (0.47x with the handlers in threads,
// the default; 0.65x on the main thread: bench/RESULTS.md, "The allocator").
// README, Memory, tells operators who move large values to set MALLOC_MMAP_THRESHOLD_=262144
// themselves, since a value already in the environment wins over the header's. This test
// holds both halves of that: the header keeps the operator's value, and with it a 64 KB reply
// faults in fewer than 32 pages (11-13 measured). Page faults are a count, not a timing: read
// from /proc, with the bound far from both sides.
import { expect } from 'chai'
import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { Client } from '../../index.js'
import { figure } from '../helpers/figures.js'

const BIN = fileURLToPath(new URL('../../bin/zeromesh.js', import.meta.url))
const REQUESTS = 1000
const MAX_FAULTS_PER_REQUEST = 32 // two fresh 64 KB mappings a request would be 32

/** Minor page faults of process `pid` so far (/proc/PID/stat, field 10). */
function minorFaults (pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[7])
}

describe('zeromesh peer as a command: the allocator threshold for large values', function () {
  this.timeout(30000)
  let peer = null
  let client = null

  after(async () => {
    await client?.close()
    if (peer !== null && peer.exitCode === null) peer.kill('SIGKILL')
  })

  it(`with MALLOC_MMAP_THRESHOLD_=262144 given, echoes 64 KB Buffers with fewer than ${MAX_FAULTS_PER_REQUEST} minor page faults a request`, async () => {
    // The operator's threshold; the header's other two settings as the header gives them.
    const env = { ...process.env, MALLOC_MMAP_THRESHOLD_: '262144' }
    delete env.MALLOC_ARENA_MAX
    delete env.MALLOC_TRIM_THRESHOLD_
    peer = spawn(BIN, ['peer', '--demo-handlers', '--bind', 'tcp://127.0.0.1:0', '--log-level', 'warn'], { stdio: ['ignore', 'pipe', 'inherit'], env })
    const endpoint = await new Promise((resolve, reject) => {
      peer.stdout.once('data', (d) => resolve(d.toString().trim()))
      peer.once('exit', (code, signal) => reject(new Error(`peer exited ${code ?? signal}`)))
    })
    const environ = readFileSync(`/proc/${peer.pid}/environ`, 'utf8').split('\0')
    expect(environ).to.include('MALLOC_ARENA_MAX=2') // the header ran...
    expect(environ).to.include('MALLOC_MMAP_THRESHOLD_=262144') // ...and kept the operator's value
    client = new Client({ seeds: [endpoint], timeout: 10000 })
    const value = Buffer.alloc(64000, 7)
    for (let i = 0; i < 200; i++) expect((await client.request('echo', value)).length).to.equal(value.length) // warm: heaps grown, code compiled
    const before = minorFaults(peer.pid)
    await Promise.all([0, 1, 2, 3].map(async () => {
      for (let i = 0; i < REQUESTS / 4; i++) expect((await client.request('echo', value)).length).to.equal(value.length)
    }))
    const perRequest = (minorFaults(peer.pid) - before) / REQUESTS
    figure(`${perRequest.toFixed(1)} minor page faults a request`)
    expect(perRequest, `${perRequest.toFixed(1)} minor page faults a request`).to.be.below(MAX_FAULTS_PER_REQUEST)
  })
})
