import { Controller, Get, Inject, Query } from '@nestjs/common'
import { Observable } from 'rxjs'
import { ZeromeshClient } from 'zeromesh/nest'
import { AppService } from './app.service'
import { heavy } from './heavy.contract'

/** The tutorial's routes: GET / answers at once; GET /heavy is sent to the microservice, typed by its contract. */
@Controller()
export class GatewayController {
  constructor (@Inject('HEAVY') private readonly client: ZeromeshClient, private readonly appService: AppService) {}

  @Get()
  getHello (): string {
    return this.appService.getHello()
  }

  @Get('heavy')
  heavy (@Query('n') n?: string): Observable<{ count: number, pid: number, threadId: number }> {
    // A bad n (?n=abc, ?n=-1) is refused by the contract before it is sent: a 400 with its issues.
    return this.client.send(heavy.methods.run, n === undefined ? {} : { n: Number(n) })
  }
}
