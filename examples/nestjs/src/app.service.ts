import { Injectable } from '@nestjs/common'

/** The tutorial's service: a CPU-bound loop that blocks whichever thread runs it. */
@Injectable()
export class AppService {
  getHello (): string {
    return 'Hello World!'
  }

  doHeavyJob (n = 50_000_000): number {
    let count = 0
    for (let i = 0; i < n; i++) count++
    return count
  }
}
