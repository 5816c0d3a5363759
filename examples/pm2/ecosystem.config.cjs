// Three zeromesh peers under pm2 on one machine, each seeded with the others.
// Start:   npx pm2 start examples/pm2/ecosystem.config.cjs
// Reload:  npx pm2 reload examples/pm2/ecosystem.config.cjs
//          restarts the peers one at a time: each gets SIGINT, announces its leave, answers
//          new requests "draining" (clients go to the other peers at once), finishes its
//          in-flight work and exits 0; pm2 then starts it again on the same port.
// Clients: new Client({ seeds: ['tcp://127.0.0.1:5601', 'tcp://127.0.0.1:5602', 'tcp://127.0.0.1:5603'] })
const ports = [5601, 5602, 5603]
const endpoint = (port) => `tcp://127.0.0.1:${port}`

module.exports = {
  apps: ports.map((port) => ({
    name: `zeromesh-${port}`,
    script: 'bin/zeromesh.js',
    args: ['peer', '--bind', endpoint(port), '--seeds', ports.filter((p) => p !== port).map(endpoint).join(',')],
    // pm2 sends SIGINT, then SIGKILL after kill_timeout: leave room for drainTimeout (10 s).
    kill_timeout: 12000,
    // Without wait_ready pm2 moves to the next peer once this one is started; the peer joins
    // in the background within about a second.
    autorestart: true,
  })),
}
