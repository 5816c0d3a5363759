import { Controller, Get } from '@nestjs/common'
import { AppService } from './app.service'

/** The tutorial's app as it is: the heavy route runs in the HTTP process (one process, or pm2 cluster mode). */
@Controller()
export class AppController {
  constructor (private readonly appService: AppService) {}

  @Get()
  getHello (): string {
    return this.appService.getHello()
  }

  @Get('heavy')
  heavy (): { count: number } {
    return { count: this.appService.doHeavyJob() }
  }
}
