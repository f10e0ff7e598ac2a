import { randomBytes } from 'node:crypto'
import { existsSync, mkdirSync, writeFileSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import type { Command } from './command.ts'

/**
 * `sitegrid init` (idempotent): the data folder, a random verifier secret file (0600) where none is
 * configured, and a config file naming it, so that `serve` finds a secret without ever inventing one itself.
 * The only command that creates folders: the others refuse a missing data folder (config/load.ts).
 */
export const initCommand: Command = {
  path: ['init'],
  usage: '',
  positionals: [],
  options: {},
  summary:
    'Creates the data folder (SITEGRID_DATA_DIR, else the folder of SITEGRID_CONFIG_FILE, else ./data) and, where none exists, a random API-key verifier secret file (mode 0600) and a config file naming it. Idempotent.',
  run: async (_args, io) => {
    const { configFilePath, locateDataFolder, upgradeConfigPaths } = await import('../config/load.ts') // typebox: not for `sitegrid --help`
    for (const change of upgradeConfigPaths(configFilePath(io.env), process.cwd()))
      io.err(`init: ${change} (paths in the config file are relative to its folder)`)
    const { configFile, dataDir, keySecretFile, hasInlineKeySecret } = locateDataFolder(io.env)
    try {
      mkdirSync(dataDir, { recursive: true, mode: 0o700 })
    } catch (err) {
      // A file of that name, a folder this user may not write: say which setting chose the folder.
      throw new Error(
        `SITEGRID_DATA_DIR: cannot create the data folder ${dataDir} (${(err as Error).message}); set SITEGRID_DATA_DIR to a folder this user may create`,
        { cause: err },
      )
    }
    if (hasInlineKeySecret) {
      io.err('init: the verifier secret comes from SITEGRID_KEY_SECRET; nothing to create')
      return
    }
    const secretFile = keySecretFile ?? join(dataDir, 'key-secret')
    if (existsSync(secretFile)) {
      io.err(`init: verifier secret file ${secretFile} already exists`)
    } else {
      mkdirSync(dirname(secretFile), { recursive: true, mode: 0o700 })
      writeFileSync(secretFile, `${randomBytes(32).toString('base64')}\n`, { mode: 0o600, flag: 'wx' })
      io.err(`init: created verifier secret file ${secretFile} (mode 0600); back it up: without it no key verifies`)
      // A lost secret file beside a database in use (npm start runs init every time): the new secret verifies none of
      // the keys minted before, which then fail as the uniform 401 with nothing to say why.
      const database = join(dataDir, 'sitegrid.db')
      if (existsSync(database))
        io.err(
          `init: warning: the database ${database} already exists: the API keys and site sign-in keys made under the previous secret do not verify with this new one; restore the previous secret file from its backup to keep them`,
        )
    }
    if (!io.env.SITEGRID_KEY_SECRET_FILE && !existsSync(configFile)) {
      mkdirSync(dirname(configFile), { recursive: true, mode: 0o700 })
      // Relative to the file's own folder (config/load.ts), so the folder can move whole and commands run from anywhere.
      const settings = { SITEGRID_KEY_SECRET_FILE: relative(dirname(configFile), secretFile) }
      writeFileSync(configFile, `${JSON.stringify(settings, null, 2)}\n`, { mode: 0o600, flag: 'wx' })
      io.err(`init: created config file ${configFile}`)
    }
  },
}
