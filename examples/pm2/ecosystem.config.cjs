// Three zeromesh peers under pm2 on one machine, each seeded with the others.
//   Start:   npx pm2 start examples/pm2/ecosystem.config.cjs
//   Reload:  PM2_CONCURRENT_ACTIONS=1 npx pm2 reload examples/pm2/ecosystem.config.cjs
// The reload restarts the peers one at a time (pm2 runs two actions at once unless told
// otherwise). Each peer gets SIGINT, leaves the cluster, answers new requests "draining"
// (clients go to the other peers at once), finishes its in-flight work and exits 0; pm2 then
// starts it again on the same port and moves to the next peer only once this one says "ready"
// (it has joined the others), so two peers are always up. `test/scenarios/pm2.scenario.js`
// runs exactly this under load.
// Clients: new Client({ seeds: ['tcp://127.0.0.1:5601', 'tcp://127.0.0.1:5602', 'tcp://127.0.0.1:5603'] })
// Other ports: ZEROMESH_PM2_PORTS=7001,7002,7003 when starting and reloading.
const path = require('node:path')

const ports = (process.env.ZEROMESH_PM2_PORTS ?? '5601,5602,5603').split(',').map(Number)
const endpoint = (port) => `tcp://127.0.0.1:${port}`

module.exports = {
  apps: ports.map((port) => ({
    name: `zeromesh-${port}`,
    script: path.join(__dirname, '..', '..', 'bin', 'zeromesh.js'),
    args: ['peer', '--demo-handlers', '--bind', endpoint(port), '--seeds', ports.filter((p) => p !== port).map(endpoint).join(','), '--drain-timeout', '10000'],
    // "ready" is sent once the peer has joined; pm2 starts the next action only then (or
    // after listen_timeout).
    wait_ready: true,
    listen_timeout: 10000,
    // pm2 sends SIGINT, then SIGKILL after kill_timeout: more than the drain timeout.
    kill_timeout: 15000,
    autorestart: true,
    // pm2 runs the script with node, past its sh header: the allocator settings that header
    // gives a command (docs/guides/deploying.md#memory).
    env: { MALLOC_ARENA_MAX: '2', MALLOC_MMAP_THRESHOLD_: '32768', MALLOC_TRIM_THRESHOLD_: '131072' },
  })),
}
