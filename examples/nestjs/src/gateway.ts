// The tutorial's NestJS app as an HTTP gateway: GET / answers at once, GET /heavy runs on the
// microservice's threads through zeromesh, so the gateway's event loop never blocks.
//   ZEROMESH_SEEDS=tcp://127.0.0.1:5555 PORT=3000 node dist/gateway.js     (TIMEOUT_MS: a call's deadline, 10000)
//   curl localhost:3000/ ; curl localhost:3000/heavy ; curl 'localhost:3000/heavy?n=abc'  (a 400)
// With the microservice gone, /heavy answers 503 (with Retry-After) or 504; SIGTERM lets the
// requests in flight finish before the process exits. docs/guides/nestjs.md explains it.
import { NestFactory } from '@nestjs/core'
import { GatewayModule } from './gateway.module'

async function bootstrap (): Promise<void> {
  const app = await NestFactory.create(GatewayModule, { logger: ['error', 'warn'] })
  app.enableShutdownHooks()
  await app.listen(Number(process.env.PORT ?? 3000), '127.0.0.1')
  process.stdout.write(`listening on ${await app.getUrl()}\n`)
}
void bootstrap()
