import type { Command } from './command.ts'

export const serveCommand: Command = {
  path: ['serve'],
  usage: '[--no-migrate]',
  positionals: [],
  summary:
    'Serves the API on HOST:PORT (default 127.0.0.1:8080). Migrates the schema first unless --no-migrate or SITEGRID_MIGRATE_ON_START=false. SIGTERM: new connections are refused, every request already sent is answered (Connection: close), idle connections are closed, then exit 0; exit 1 if requests are still open after SITEGRID_SHUTDOWN_GRACE_MS.',
  options: { 'no-migrate': { type: 'boolean', description: 'do not create or upgrade the schema first (as SITEGRID_MIGRATE_ON_START=false)' } },
  // Loaded on use (src/cli/build.ts): the command's --help and `sitegrid --help` load no fastify and no driver.
  run: async ({ values }, io) => (await import('./server.ts')).serve(values, io),
}

export const migrateCommand: Command = {
  path: ['migrate'],
  usage: '',
  positionals: [],
  options: {},
  summary:
    'Creates or upgrades the database schema (DATABASE_URL, the owner) and prints the migrations it applied; on PostgreSQL with SITEGRID_DATABASE_APP_URL it grants that role its table rights.',
  run: async (_args, io) => (await import('./server.ts')).migrate(io),
}
