import { Module } from '@nestjs/common'
import { HeavyController } from './heavy.controller'
import { AppService } from './app.service'

/** What each worker thread of the microservice bootstraps (its own AppService). */
@Module({ controllers: [HeavyController], providers: [AppService] })
export class HeavyModule {}
