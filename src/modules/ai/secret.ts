import { inspect } from 'node:util'

const HIDDEN = '[redacted]'

/**
 * A credential that stays out of logs: JSON, string conversion and util.inspect all print `[redacted]`.
 * Only `reveal()` returns the value, and only the provider client calls it, to build the Authorization header.
 */
export class Secret {
  readonly #value: string

  constructor(value: string) {
    if (!/^[\x21-\x7e]+$/.test(value)) {
      // The value itself is never part of the message.
      throw new TypeError('A secret must be non-empty printable ASCII without spaces (it is sent in an HTTP header).')
    }
    this.#value = value
  }

  reveal(): string {
    return this.#value
  }

  toString(): string {
    return HIDDEN
  }

  toJSON(): string {
    return HIDDEN
  }

  [inspect.custom](): string {
    return `Secret(${HIDDEN})`
  }
}
