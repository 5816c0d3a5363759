// A zeromesh Peer started from a script of its own, as a library user starts one: the handler
// module given (argv[2]) on the main thread, nothing else of the command line (no logger, no
// idle collection). bench/ladder.js measures it beside `zeromesh peer` with the same module.
// argv[3], if given: megabytes of small objects kept alive, as an application's own state
// would be (V8 collects a heap of under 8 MB differently: bench/RESULTS.md, "The heap band").
// Prints its endpoint on stdout; SIGTERM stops it.
import { pathToFileURL } from 'node:url'
import { Peer } from '../index.js'
import { keepState } from './harness.js'

keepState(Number(process.argv[3] ?? 0))
const peer = new Peer({ handlers: [pathToFileURL(process.argv[2]).href], threads: 0 })
process.stdout.write(await peer.start() + '\n')
process.on('SIGTERM', () => { peer.stop().then(() => process.exit(0), () => process.exit(1)) })
