// The help text of every `zeromesh` command. Each command's synopsis is written once, here:
// `--help` prints it and the README's "Command line" block is checked against
// commandLineBlock() (test/docs/usage.test.js), so the two cannot drift.

const SYNOPSIS = {
  peer: 'zeromesh peer [--bind EP] [--advertise EP] [--seeds EP,EP] [--handlers MODULE[,MODULE] | --demo-handlers] [--meta JSON] [--labels K=V,K=V] [--service-version SEMVER] [--capacity N] [--threads N] [--max-queue N] [--max-queue-ms MS] [--flow-header NAME] [--max-inflight-bytes SIZE] [--memory-limit SIZE|cgroup] [--drain-timeout MS] [--http [HOST:]PORT [--http-view on|off]] [--log-level LEVEL] [--dns-servers IP[:PORT],...] [--cluster-key FILE [--allow LIST] [--max-connections N] [--max-connections-per-address N] [--handshakes-per-second N] | --insecure]',
  request: 'zeromesh request --seeds EP[,EP] METHOD [JSON-ARGS] [--stream] [--timeout MS] [--no-idempotent] [--version RANGE] [--where K=V,K=V] [--cluster-pub FILE --key FILE | --insecure]',
  members: 'zeromesh members --seeds EP [--json] [--timeout MS] [--cluster-pub FILE --key FILE | --insecure]',
  describe: 'zeromesh describe --seeds EP[,EP] [--json | --openapi | --asyncapi] [--timeout MS] [--cluster-pub FILE --key FILE | --insecure]',
  publish: 'zeromesh publish --seeds EP[,EP] EVENT [JSON-PAYLOAD] [--groups G,G] [--no-ack] [--timeout MS] [--where K=V,K=V] [--cluster-pub FILE --key FILE | --insecure]',
  broadcast: 'zeromesh broadcast --seeds EP[,EP] EVENT [JSON-PAYLOAD] [--timeout MS] [--where K=V,K=V] [--cluster-pub FILE --key FILE | --insecure]',
  demo: 'zeromesh demo [--duration S] [--peers N] [--no-chaos] [--secure]',
  bench: 'zeromesh bench [--seeds EP,EP] [--concurrency 1,16,256] [--duration S] [--compare] [--secure] [--payload SIZE] [--json] [--cluster-pub FILE --key FILE | --insecure]',
  keygen: 'zeromesh keygen PREFIX',
}
const WIDTH = 100

/**
 * A synopsis broken into lines of at most WIDTH characters between its [...] groups, the
 * lines after the first indented under the first option (after `prefix` and the command).
 */
function wrapped (command, prefix = '') {
  const text = SYNOPSIS[command]
  const head = text.indexOf(' ', 'zeromesh '.length) + 1 // after "zeromesh COMMAND "
  const groups = []
  let depth = 0; let start = head
  for (let i = head; i <= text.length; i++) {
    const c = text[i]
    if (c === '[') depth++
    else if (c === ']') depth--
    else if ((c === ' ' || c === undefined) && depth === 0) { if (i > start) groups.push(text.slice(start, i)); start = i + 1 }
  }
  const indent = ' '.repeat(prefix.length + head)
  const lines = [prefix + text.slice(0, head - 1)]
  for (const g of groups) {
    const last = lines.length - 1
    if (lines[last].length + 1 + g.length > WIDTH && lines[last].trim().length > head) lines.push(indent + g)
    else lines[last] += ' ' + g
  }
  return lines.join('\n')
}

/** The README's "Command line" block: every synopsis, then --version and --help. */
export function commandLineBlock () {
  return [...Object.keys(SYNOPSIS).map((c) => wrapped(c)), 'zeromesh --version', 'zeromesh <command> --help'].join('\n')
}

/**
 * docs/reference/cli.md's generated part: every command's --help, as `zeromesh <command>
 * --help` prints it (test/docs/reference.test.js holds the page to it; the page's first
 * comment says how to write it again).
 */
export function cliReference () {
  const parts = ['## Synopsis', '', '```', commandLineBlock(), '```']
  for (const command of Object.keys(SYNOPSIS)) parts.push('', `## zeromesh ${command}`, '', '```', USAGE[command], '```')
  return parts.join('\n')
}

// The security options of every command that acts as a client (request, members, describe, publish, broadcast, bench).
const CLIENT_SECURITY = `security (docs/guides/security.md): needed for a secured cluster, and for any non-loopback seed
  --cluster-pub FILE the cluster's public key (PREFIX.pub); env ZEROMESH_CLUSTER_PUB
  --key FILE         this client's secret key (PREFIX.key), its .pub on the peers' allow-list;
                     env ZEROMESH_KEY
  --insecure         talk plain to non-loopback seeds, on purpose`

export const USAGE = {
  main: `usage: zeromesh <command> [options]

commands:
  peer      run a peer node that serves requests and joins its cluster
  request   send one request and print its JSON result
  members   print a peer's view of the cluster membership
  describe  print the services the cluster's peers serve: methods, contracts and their schemas
  publish   publish an event to one peer of each group that subscribes, and print who handled it
  broadcast deliver an event to every peer that subscribes, and print each one's outcome
  demo      the failover demo: peers, load, a kill, a join, a drain, a freeze
  bench     throughput and latency (req/s and p99) of echo requests, with --compare against raw zeromq.js and a broker
  keygen    write a CURVE keypair: PREFIX.key (secret) and PREFIX.pub (public)

Run "zeromesh <command> --help" for the options of a command; "zeromesh --version" prints the version.`,
  peer: `${wrapped('peer', 'usage: ')}

Runs a peer. Prints its endpoint alone on stdout once bound; logs go to stderr. It joins the
cluster through --seeds (retrying unreachable seeds) and logs membership changes.
SIGTERM or SIGINT stops it gracefully (announces its leave, in-flight requests finish) and it
exits 0.

  --bind EP          endpoint to bind (default tcp://127.0.0.1:0, an ephemeral port)
  --advertise EP     endpoint others should use (for a wildcard bind such as tcp://0.0.0.0:5555)
  --seeds EP,EP      peers to join through (comma-separated): endpoints, dns://NAME:PORT (every
                     A/AAAA record of NAME) or dns+srv://_service._proto.NAME (SRV records),
                     resolved again every 30 s and whenever no seed answers
  --dns-servers LIST DNS servers for DNS seeds, IP[:PORT] comma-separated (default: the system's)
  --handlers MODULES modules whose exported functions (or default-export object) are the
                     methods, comma-separated (a data: URL alone; a method in two modules is
                     refused); without it the peer serves no method
  --demo-handlers    serve the demo handlers: echo, whoami (endpoint and pid), spin (a CPU
                     loop of n iterations), sleep, and count (a stream of n items), and
                     subscribe to the event cache.drop (logged on stderr); for trying zeromesh,
                     never in production
  --labels K=V,K=V   labels clients select this peer by (zone=a,tier=gold); "zone" keeps a
                     client given that zone on it. Stated by this peer alone, never gossiped
  --service-version SEMVER
                     the version of what it serves (2.1.0), for requests that ask a range (^2)
  --capacity N       requests it runs at full speed at once (default: --threads), for zone
                     spill-over
  --threads N        worker threads running the handlers (default: one per core; 0: run them
                     on the main thread, for I/O-bound handlers)
  --max-queue N      requests waiting for a thread before the peer answers busy
  --max-queue-ms MS  ...or fewer, when they would be more than MS of work by the measured
                     time per request (default 100)
  --flow-header NAME a request header (x-tenant) whose value names the flow a call shares a
                     busy peer in, across connections; default: each connection is a flow
  --max-inflight-bytes SIZE
                     bytes of requests taken and not answered yet, all clients together,
                     before new ones are answered busy (default 128m): the memory cap
  --memory-limit SIZE|cgroup
                     RSS the process may use: past 60% the peer collects its heaps and takes
                     less work, past 80% it closes every connection (default cgroup: the
                     container's limit; 0: none)
  --drain-timeout MS longest wait for in-flight requests when stopping (default 10000)
  --meta JSON        metadata gossiped with this peer, shown by "members", e.g. '{"rack":"r7"}'
                     (at most 512 bytes; routing uses --labels, not --meta)
  --http [HOST:]PORT operations endpoint: /metrics (Prometheus), /healthz, /readyz, and what
                     this peer serves as /openapi.json and /asyncapi.json; on 127.0.0.1
                     unless HOST is given (0.0.0.0:9090 in a container)
  --http-view on|off the live view of the cluster at / of --http (default: on when --http is
                     on loopback, off otherwise; docs/guides/observing.md)
  --log-level LEVEL  trace, debug, info (default), warn, error, fatal or silent; logs are
                     JSON lines on stderr, pretty on a terminal

Every flag can come from the environment instead: --max-queue 64 is ZEROMESH_MAX_QUEUE=64,
--insecure is ZEROMESH_INSECURE=true (flags win); ZEROMESH_CLUSTER_KEY holds the key itself.

security (docs/guides/security.md): off loopback a peer runs CURVE or refuses to start
  --cluster-key FILE the cluster's secret key (PREFIX.key of "zeromesh keygen"), shared by
                     every peer; env ZEROMESH_CLUSTER_KEY holds the key itself instead
  --allow LIST       client public keys let in: .pub files, directories of .pub files, or
                     keys, comma-separated (env ZEROMESH_ALLOW); SIGHUP reads them again
  --max-connections N
                     clients' connections in all (default 4096); past it handshakes are refused
  --max-connections-per-address N
                     clients' connections from one address (default 256)
  --handshakes-per-second N
                     clients' handshakes a second from one address, twice it at once (default
                     64); peers holding the cluster key are not capped
  --insecure         run plain (no CURVE) on a non-loopback address, on purpose`,
  members: `${wrapped('members', 'usage: ')}

Prints the membership as a peer sees it, itself included, with what each live member serves
(methods, version, labels: asked of each member itself): a table, or with --json the objects of
peer.members() with "serves" added, as a JSON array alone on stdout. Asks the first seed, and
the next one when a seed does not answer.

  --seeds EP,EP      the peers to ask, in order
  --json             machine-readable output
  --timeout MS       give up after this long (default 5000)

${CLIENT_SECURITY}`,
  describe: `${wrapped('describe', 'usage: ')}

Prints what the cluster's live peers serve, asked of each peer itself: each service once (peers
that say the same are grouped), with its methods, the contracts they implement and each
method's input and output JSON Schema where the contract's schemas give one. With --json, an
array of { endpoints, methods, version, labels, capacity, contracts } alone on stdout. Asks the
first seed for the member list, and the next one when a seed does not answer. With --openapi,
the cluster's methods as one OpenAPI 3.1 document (the routes of zeromesh/http's gateway);
with --asyncapi, its events and the groups that subscribe as one AsyncAPI 3 document
(docs/guides/http-api.md); a schema a peer stated none for is open ({}), with a warning on
stderr.

  --seeds EP,EP      the peers to ask, in order
  --json             machine-readable output
  --openapi          print the OpenAPI 3.1 document of the cluster's methods
  --asyncapi         print the AsyncAPI 3 document of the cluster's events
  --timeout MS       give up after this long (default 5000)

${CLIENT_SECURITY}`,
  demo: `${wrapped('demo', 'usage: ')}

Starts N peers (default 3) serving the demo handlers and 2 more serving a second service
(billing: invoice) on loopback ports, a client seeded with only the first, and steady load
(whoami, spin and invoice, each routed to the peers that serve it). Then: a peer is killed, a new one joins, one is drained with SIGTERM,
one is frozen and thawed. A live view on a terminal, plain lines otherwise. Exits 0 only if no
request failed. Ctrl-C stops everything it started.

  --duration S       seconds (default 40)
  --peers N          peers to start with (default 3; the timeline needs 3)
  --no-chaos         load only
  --secure           run the cluster with CURVE and an allow-list (keys in a temporary directory)`,
  bench: `${wrapped('bench', 'usage: ')}

Measures small echo requests at each concurrency (requests in flight) against a peer it starts
itself (echo on the peer's main thread), or against --seeds. Prints one table, req/s and p99
side by side for every system, and the ratios; a progress line on a terminal; --json prints
one JSON object alone on stdout. Every process it starts is gone when it ends.
With --compare, the same run also measures raw zeromq.js (Dealer -> Router echo: one message
per request; a turn's requests coalesced 32 per message; 32 per frame sent without
waiting, as a hand-written client at its best; the same with the payload encoded and decoded
with msgpackr at both ends, the MessagePack work zeromesh does) and the echo behind a central
broker (zeromq Proxy, 2 workers), and prints zeromesh's ratios to each. With more than one
system, each is driven for 1 s (half the duration, if shorter) at a level, unmeasured, before
any is measured at it.

  --seeds EP,EP        peers to measure instead of starting one
  --concurrency LIST   requests in flight, comma-separated (default 1,16,256)
  --duration S         seconds per measurement (default 5)
  --compare            also measure raw zeromq.js and the broker
  --secure             also measure a peer run with CURVE and an allow-list (keys made for the run)
  --payload SIZE       bytes per request and reply: 40 (default), 1k, 64k, 1m; from 1k on the
                       table adds MB/s (payload carried both ways)
  --json               machine-readable output

${CLIENT_SECURITY}`,
  request: `${wrapped('request', 'usage: ')}

Sends METHOD(JSON-ARGS) to a peer that serves it and prints the JSON result alone on stdout.
On failure prints "CODE: message" on stderr and exits 1; bad usage exits 2.

  --seeds EP,EP      peers to start from (comma-separated)
  --stream           METHOD streams (docs/guides/streams.md): print each item as it comes, one JSON
                     line each; --timeout is then the longest wait for an item
  --timeout MS       whole deadline, retries included (default 5000)
  --no-idempotent    never re-send after a lost connection
  --version RANGE    only a peer whose service version is in the semver RANGE (^2, ~2.1)
  --where K=V,K=V    only a peer with these labels

${CLIENT_SECURITY}`,
  publish: `${wrapped('publish', 'usage: ')}

Publishes EVENT with JSON-PAYLOAD to one peer of each group that subscribes to it
(docs/guides/events.md) and prints, as JSON on stdout, the peers whose handlers finished:
{ "delivered": [{ "group", "endpoint" }] }. When a group's handler failed it prints "CODE:
message" and the groups' outcomes on stderr and exits 1; bad usage exits 2.

  --seeds EP,EP      peers to start from (comma-separated)
  --groups G,G       the groups that must each get it (default: every group that subscribes)
  --no-ack           print once sent, { "sent": [...] }: nothing is acknowledged (at most once)
  --timeout MS       whole deadline, the wait for a subscriber and redeliveries included (default 5000)
  --where K=V,K=V    only peers with these labels

${CLIENT_SECURITY}`,
  broadcast: `${wrapped('broadcast', 'usage: ')}

Delivers EVENT with JSON-PAYLOAD to every peer that subscribes to it, in every group, and
prints each peer's outcome as JSON on stdout: { "delivered": [{ "endpoint" }], "failed":
[{ "endpoint", "code", "message" }], "unreached": [{ "endpoint", "reason" }] }. Exits 1 when a
peer failed or was not reached.

  --seeds EP,EP      peers to start from (comma-separated)
  --timeout MS       whole deadline (default 5000): a peer that has not acknowledged by then is unreached
  --where K=V,K=V    only peers with these labels

${CLIENT_SECURITY}`,
  keygen: `${wrapped('keygen', 'usage: ')}

Writes a new CURVE keypair, one line of Z85 text each, and prints the public key on stdout:
  PREFIX.key   the secret key, file mode 0600. Keep it private. A cluster key goes to every
               peer (--cluster-key); a client key stays with its client (--key).
  PREFIX.pub   the public key. The cluster's goes to every client (--cluster-pub); a client's
               goes on the peers' allow-list (--allow).
Never overwrites an existing file.`,
}
