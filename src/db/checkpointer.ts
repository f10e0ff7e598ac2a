import { createRequire } from 'node:module'
import { Worker } from 'node:worker_threads'

/**
 * SQLite: WAL checkpoints off the request path (issue 29). SQLite's automatic checkpoint runs inside the commit that
 * crosses `wal_autocheckpoint` pages (1 000 by default): with `synchronous = NORMAL` it syncs the WAL, copies it into
 * the database file and syncs that, 13–54 ms that whichever request committed pays, with every request queued behind
 * it. Here a worker thread with a connection of its own runs `PRAGMA wal_checkpoint(PASSIVE)` every `intervalMs`
 * (a passive checkpoint waits for no lock and holds up no writer), and the serving connection's automatic checkpoint
 * moves up to `backstopPages`: it still runs when the worker falls behind (a passive checkpoint that writers keep
 * overtaking never lets the WAL restart), and it then has little left to copy, so the WAL stays under that bound
 * (docs/benchmarks.md, session 18: under a steady write load the WAL sits at the bound, ~40 MiB; 4 000 pages gave a
 * longer tail of write latencies).
 *
 * Durability: with `synchronous = NORMAL` a commit is on disk once the WAL is synced, which a checkpoint does first.
 * Without the worker that waited for 1 000 pages of commits, however long they took to come; with it a commit is
 * synced within `intervalMs` (100 ms), or at the backstop under a write load the worker cannot keep up with.
 *
 * Failures (session 19): a checkpoint that throws (disk full, a corrupt WAL, the file removed) used to be dropped
 * without a line. The worker keeps trying every interval and never throws out of its loop; each distinct failure is
 * logged once through the server's logger (`log`), and the first success after it, so a failure that lasts is one
 * line, not ten a second. Meanwhile the serving connection's backstop checkpoints bound the WAL as before.
 */
export interface CheckpointOptions {
  /** How often the worker checkpoints (default 100 ms). */
  intervalMs?: number
  /** The serving connection's `wal_autocheckpoint`, the WAL's bound in pages (default 10 000: ~40 MiB of 4 KiB pages). */
  backstopPages?: number
  /** Hears a failing worker (the server's logger): each distinct failure once, and the recovery after one. */
  log?: CheckpointLog
}

export interface CheckpointLog {
  error(details: object, message: string): void
  info(details: object, message: string): void
}

export const CHECKPOINT_INTERVAL_MS = 100
export const WAL_BACKSTOP_PAGES = 10_000

export interface Checkpointer {
  readonly backstopPages: number
  /** Ends the worker after its checkpoint in progress; resolves once it has closed its connection. */
  stop(): Promise<void>
}

// CommonJS run by the worker: `workerData` names the driver's module (resolved here, so any working directory works).
// The connection is opened by the first checkpoint, and again by the next one while opening fails. A failure (disk full,
// a corrupt WAL, the file removed: opening it again must not make an empty one) is posted once, until a checkpoint
// succeeds (posted too) or another failure replaces it: the parent logs each, not one line every interval.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads')
const Database = require(workerData.driver)
let db
let checkpoint
let failure = ''
const timer = setInterval(() => {
  try {
    if (!db) {
      const opened = new Database(workerData.path, { fileMustExist: true })
      try {
        opened.pragma('synchronous = NORMAL')
        checkpoint = opened.prepare('PRAGMA wal_checkpoint(PASSIVE)')
      } catch (err) {
        opened.close()
        throw err
      }
      db = opened
    }
    checkpoint.run()
    if (failure) parentPort.postMessage({ failed: false })
    failure = ''
  } catch (err) {
    const code = typeof err?.code === 'string' ? err.code : null
    const message = String(err?.message ?? err)
    if (failure === code + ' ' + message) return
    failure = code + ' ' + message
    parentPort.postMessage({ failed: true, code, message })
  }
}, workerData.intervalMs)
parentPort.once('message', () => {
  clearInterval(timer)
  db?.close()
  parentPort.close()
})
`

/** What the worker posts: a failure (once until it changes or ends), or the first success after one. */
type CheckpointReport = { failed: true; code: string | null; message: string } | { failed: false }

/** Starts the checkpoint worker of the SQLite file at `path` (in WAL mode); the caller sets the backstop. */
export function startCheckpointer(path: string, options: CheckpointOptions = {}): Checkpointer {
  const driver = createRequire(import.meta.url).resolve('better-sqlite3')
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: { driver, path, intervalMs: options.intervalMs ?? CHECKPOINT_INTERVAL_MS },
    // The worker needs none of the parent's loaders or flags.
    execArgv: [],
  })
  // A checkpoint that fails leaves the backstop in charge (the serving connection's own checkpoints); the logger hears it.
  const log = options.log
  worker.on('message', (report: CheckpointReport) => {
    if (report.failed)
      log?.error(
        { event: 'sqlite.checkpoint_failed', path, code: report.code, error: report.message },
        'WAL checkpoint failed; the serving connection checkpoints at the backstop',
      )
    else log?.info({ event: 'sqlite.checkpoint_resumed', path }, 'WAL checkpoints resumed')
  })
  // A worker that stopped (it cannot load its driver) must not take the process down either.
  worker.on('error', (err) =>
    log?.error({ event: 'sqlite.checkpoint_worker_stopped', path, err }, 'WAL checkpoint worker stopped; the serving connection checkpoints at the backstop'),
  )
  // A handle left open does not keep the process alive.
  worker.unref()
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()))
  return {
    backstopPages: options.backstopPages ?? WAL_BACKSTOP_PAGES,
    stop: async () => {
      // Held open until it has exited: the process must not end while the worker closes its connection.
      worker.ref()
      worker.postMessage('stop')
      await exited
    },
  }
}
