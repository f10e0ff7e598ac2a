// Draining (app.close(), which `sitegrid serve` calls on SIGTERM; README § Stopping the server): every request the
// kernel accepted before the signal is answered normally, only new connections are refused.
import { readFileSync } from 'node:fs'
import type { IncomingMessage } from 'node:http'
import { Server } from 'node:net'
import { setImmediate as nextTurn, setTimeout as sleep } from 'node:timers/promises'
import type { FastifyInstance } from 'fastify'

/** While draining, how long a kept-alive connection may go without a request before it is closed. */
export const DRAIN_IDLE_MS = 100
/** Node's default listen backlog (`sitegrid serve` keeps it): at most this many connections wait to be accepted. */
const LISTEN_BACKLOG = 511

/**
 * Answers sent while draining, or before their request's body was read whole, carry `Connection: close`; on close, the listener stops before kept-alive connections
 * are closed, and only those that stayed idle through DRAIN_IDLE_MS are. Fastify (return503OnClosing false) goes on
 * serving the requests that arrive on open connections meanwhile; its own server.close() then waits for the rest.
 */
/**
 * Whether part of the request's body may still be unread. A request that declares no body has none left behind even
 * before the parser marks it complete: an answer sent from a synchronous hook (the auth hook's 401 on a remembered
 * key) comes before that mark, and closing its connection made every refused request pay a new connection.
 */
function bodyUnread(raw: IncomingMessage): boolean {
  if (raw.complete) return false
  const { headers } = raw
  return headers['transfer-encoding'] !== undefined || (headers['content-length'] !== undefined && headers['content-length'] !== '0')
}

export function installDraining(app: FastifyInstance): void {
  let draining = false
  // Callback style: no promise on every request. An answer routed before the drain began needs the header too.
  // An answer sent before its request's body arrived whole (an upload refused by its first part) closes its
  // connection too: the parser stopped reading the body, so its unread rest would hold the connection's next request
  // unanswered (a browser reuses the connection for the corrected upload).
  app.addHook('onSend', (request, reply, payload, done) => {
    if (draining || bodyUnread(request.raw)) reply.header('connection', 'close')
    done(null, payload)
  })
  app.addHook('preClose', async () => {
    draining = true
    const server = app.server
    if (!server.listening) return
    // An answer under way (a download) keeps its connection after it ends; this closes it soon after, not in 72 s.
    server.keepAliveTimeout = DRAIN_IDLE_MS
    await acceptQueued(server)
    // The listening socket alone: http.Server.close() would also destroy every idle kept-alive connection at once,
    // including one whose request is still unread in its socket buffer (the client gets a reset).
    Server.prototype.close.call(server)
    // A request already in a socket's buffer (or on a connection just accepted) is read in the next poll phase.
    await sleep(DRAIN_IDLE_MS)
    await nextTurn()
  })
}

/**
 * Lets the event loop accept the connections the kernel queued before the signal (its listen backlog): closing the
 * listener resets them. Node accepts one queued connection a turn, so this waits turn after turn until as many as
 * were queued are accepted (Linux tells how many) or until a whole turn accepts none.
 */
async function acceptQueued(server: Server): Promise<void> {
  const address = server.address()
  const queued = (typeof address === 'object' && address !== null ? acceptQueueLength(address.port) : undefined) ?? LISTEN_BACKLOG
  let accepted = 0
  const count = () => {
    accepted++
  }
  server.on('connection', count).on('drop', count) // 'drop': accepted and closed at once (maxConnections)
  try {
    await nextTurn() // from here on, each turn below includes a whole poll phase
    while (accepted < queued) {
      const before = accepted
      await nextTurn()
      if (accepted === before) return
    }
  } finally {
    server.off('connection', count).off('drop', count)
  }
}

/** Linux: the connections waiting in the accept queue of the listener on `port` (/proc/net/tcp*); elsewhere undefined. */
function acceptQueueLength(port: number): number | undefined {
  const localPort = `:${port.toString(16).toUpperCase().padStart(4, '0')}`
  let queued: number | undefined
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let table: string
    try {
      table = readFileSync(file, 'utf8')
    } catch {
      continue // not Linux, or no IPv6
    }
    for (const row of table.split('\n').slice(1)) {
      // sl local_address rem_address st tx_queue:rx_queue …; a listener (st 0A) counts its accept queue in rx_queue.
      const [, local, , state, queues] = row.trim().split(/\s+/)
      if (state === '0A' && local?.endsWith(localPort)) queued = (queued ?? 0) + parseInt(queues!.split(':')[1]!, 16)
    }
  }
  return queued
}
