import { Module, OnApplicationShutdown, Inject, Injectable } from '@nestjs/common'
import { APP_FILTER } from '@nestjs/core'
import { ClientsModule } from '@nestjs/microservices'
import { ZeromeshClient, ZeromeshExceptionFilter } from 'zeromesh/nest'
import { GatewayController } from './gateway.controller'
import { AppService } from './app.service'

/** At shutdown, after the HTTP server stopped, the client's counters on stderr (retries, attempt timeouts). */
@Injectable()
export class ClientReport implements OnApplicationShutdown {
  constructor (@Inject('HEAVY') private readonly client: ZeromeshClient) {}

  onApplicationShutdown (): void {
    const { requests, ok, retries, attemptTimeouts, failed } = this.client.unwrap().stats()
    process.stderr.write(`zeromesh client: ${JSON.stringify({ requests, ok, retries, attemptTimeouts, failed })}\n`)
  }
}

@Module({
  imports: [
    // One client for the process. Nest closes it at application shutdown (onApplicationShutdown,
    // after the HTTP server stopped taking requests); its close() lets the calls in flight finish.
    ClientsModule.register([{
      name: 'HEAVY',
      customClass: ZeromeshClient,
      options: { seeds: (process.env.ZEROMESH_SEEDS ?? 'tcp://127.0.0.1:5555').split(','), timeout: Number(process.env.TIMEOUT_MS ?? 10000) },
    }]),
  ],
  controllers: [GatewayController],
  providers: [AppService, ClientReport, { provide: APP_FILTER, useClass: ZeromeshExceptionFilter }], // 503, 504, 400 for zeromesh errors
})
export class GatewayModule {}
