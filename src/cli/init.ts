import { randomBytes } from 'node:crypto'
import { existsSync, mkdirSync, writeFileSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import type { Command } from './command.ts'

/**
 * `sitegrid init` (idempotent): the data folder, a random verifier secret file (0600) where none is
 * configured, and a config file naming it, so that `serve` finds a secret without ever inventing one itself.
 */
export const initCommand: Command = {
  path: ['init'],
  usage: '',
  positionals: [],
  options: {},
  summary: 'Creates the data folder and, where none exists, a random API-key verifier secret file (mode 0600) and a config file naming it. Idempotent.',
  run: async (_args, io) => {
    const dataDir = io.env.SITEGRID_DATA_DIR || './data'
    mkdirSync(dataDir, { recursive: true, mode: 0o700 })
    if (io.env.SITEGRID_KEY_SECRET) {
      io.err('init: the verifier secret comes from SITEGRID_KEY_SECRET; nothing to create')
      return
    }
    const secretFile = io.env.SITEGRID_KEY_SECRET_FILE || `${dataDir}/key-secret`
    if (existsSync(secretFile)) {
      io.err(`init: verifier secret file ${resolve(secretFile)} already exists`)
    } else {
      mkdirSync(dirname(secretFile), { recursive: true, mode: 0o700 })
      writeFileSync(secretFile, `${randomBytes(32).toString('base64')}\n`, { mode: 0o600, flag: 'wx' })
      io.err(`init: created verifier secret file ${resolve(secretFile)} (mode 0600); back it up: without it no key verifies`)
    }
    const { configFilePath } = await import('../config/load.ts') // typebox: not for `sitegrid --help`
    const configFile = configFilePath(io.env)
    if (!io.env.SITEGRID_KEY_SECRET_FILE && !existsSync(configFile)) {
      writeFileSync(configFile, `${JSON.stringify({ SITEGRID_KEY_SECRET_FILE: secretFile }, null, 2)}\n`, { mode: 0o600, flag: 'wx' })
      io.err(`init: created config file ${resolve(configFile)}`)
    }
  },
}
