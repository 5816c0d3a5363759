// The microservice: a zeromesh peer whose heavy.run runs in worker threads, each with the
// HeavyModule's own instances (its AppService), so the main thread keeps membership and
// sockets free however hard the threads spin.
//   BIND=tcp://127.0.0.1:5555 THREADS=2 node dist/microservice.js     (SEEDS: other peers to join)
import { NestFactory } from '@nestjs/core'
import { MicroserviceOptions } from '@nestjs/microservices'
import { ZeromeshServer } from 'zeromesh/nest'
import { availableParallelism } from 'node:os'
import { join } from 'node:path'
import { HeavyModule } from './heavy.module'

async function bootstrap (): Promise<void> {
  const server = new ZeromeshServer({
    bind: process.env.BIND ?? 'tcp://127.0.0.1:5555',
    seeds: process.env.SEEDS?.split(',') ?? [],
    threads: Number(process.env.THREADS ?? availableParallelism()),
    module: join(__dirname, 'heavy.module.js'), // what each thread bootstraps
    moduleExport: 'HeavyModule',
  })
  const app = await NestFactory.createMicroservice<MicroserviceOptions>(HeavyModule, { strategy: server, logger: ['error', 'warn'] })
  app.enableShutdownHooks() // SIGTERM: the peer leaves, finishes what runs, and exits
  await app.listen()
  process.stdout.write(`${server.unwrap().endpoint}\n`)
}
void bootstrap()
