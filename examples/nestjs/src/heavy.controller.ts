import { Controller } from '@nestjs/common'
import { Payload } from '@nestjs/microservices'
import { ContractPattern } from 'zeromesh/nest'
import { threadId } from 'node:worker_threads'
import { AppService } from './app.service'
import { heavy } from './heavy.contract'

/** The microservice's side: the heavy job as the zeromesh method heavy.run, its input checked by the contract. */
@Controller()
export class HeavyController {
  constructor (private readonly appService: AppService) {}

  @ContractPattern(heavy, 'run')
  run (@Payload() { n }: { n: number }): { count: number, pid: number, threadId: number } {
    return { count: this.appService.doHeavyJob(n), pid: process.pid, threadId }
  }
}
