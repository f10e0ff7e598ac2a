import { SMTPServer } from 'smtp-server'

export interface ReceivedMail {
  to: string[]
  raw: string
}

/** A real SMTP server on loopback that keeps what it receives; `failNext(n)` refuses the next n messages. */
export async function startSmtpServer() {
  const received: ReceivedMail[] = []
  let failures = 0
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      let raw = ''
      stream.setEncoding('utf8')
      stream.on('data', (d: string) => {
        raw += d
      })
      stream.on('end', () => {
        if (failures > 0) {
          failures -= 1
          const err = Object.assign(new Error('mailbox unavailable'), { responseCode: 451 })
          callback(err)
          return
        }
        received.push({ to: session.envelope.rcptTo.map((r) => r.address), raw })
        callback()
      })
    },
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.server.address() as { port: number }).port
  return {
    port,
    received,
    failNext: (n: number) => {
      failures = n
    },
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}
