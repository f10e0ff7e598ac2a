import { domainError } from '../../errors/domain-error.ts'

/** The server has no console build to serve (web/dist/console is missing); the API works without it. */
export class ConsoleNotBuilt extends domainError('ConsoleNotBuilt') {
  constructor() {
    super('The web console is not built on this server: run `npm run build:console`. The API is not affected.')
  }
}
