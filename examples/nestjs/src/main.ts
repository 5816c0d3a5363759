// The tutorial's app in one process (`node dist/main.js`), or under pm2 cluster mode
// (`npx pm2 start dist/main.js -i max`): what the gateway and the microservice are measured
// against (bench/work/nest.js).
import { NestFactory } from '@nestjs/core'
import { AppModule } from './app.module'

async function bootstrap (): Promise<void> {
  const app = await NestFactory.create(AppModule, { logger: ['error', 'warn'] })
  app.enableShutdownHooks()
  await app.listen(Number(process.env.PORT ?? 3000), '127.0.0.1')
  process.stdout.write(`listening on ${await app.getUrl()}\n`)
}
void bootstrap()
