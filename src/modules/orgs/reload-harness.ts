import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import { after } from 'node:test'
import { KEY_SECRET, type TestDialect } from '../../../test/harness.ts'
import { buildApp } from '../../app.ts'
import { loadConfig } from '../../config/load.ts'
import { createLogger } from '../../http/logger.ts'
import { sharedHarness } from './shared-harness.ts'

export const RELOAD_URL = '/api/admin/config/reload'

/**
 * One application per suite whose reload rereads a real configuration file and an environment the test
 * controls (the harness's own app has nothing to reread). Building an app costs more than a test on a loaded
 * machine, so each test starts with `begin()`: the start-up configuration is restored (site mode: reloaded
 * with a fresh key of a suite organisation, so the test's own organisation and rate bucket stay clean) and the
 * test gets its own organisation and owner key.
 */
export function reloadSuite(dialect: TestDialect, mode: 'site' | 'cloud') {
  const base = sharedHarness(dialect, { SITEGRID_MODE: mode })
  const cleanups: Array<() => unknown> = []
  after(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup()
  })
  const state: { reloads: number; beforeRead?: (env: Record<string, string>) => void } = { reloads: 0 }
  let built: ReturnType<typeof build> | undefined

  async function build() {
    const h = await base()
    const dir = mkdtempSync(join(tmpdir(), 'sitegrid-reload-'))
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }))
    const file = join(dir, 'sitegrid.json')
    writeFileSync(file, '{}')
    const startEnv: Record<string, string> = {
      DATABASE_URL: h.config.databaseUrl,
      SITEGRID_KEY_SECRET: KEY_SECRET,
      SITEGRID_MODE: mode,
      SITEGRID_DATA_DIR: dir,
      SITEGRID_CONFIG_FILE: file,
      SITEGRID_LAST_USED_FLUSH_MS: '50',
    }
    const env = { ...startEnv }
    const log = createLogger(
      'info',
      new Writable({
        write(_c, _e, cb) {
          cb()
        },
      }),
    )
    const app = await buildApp({
      config: loadConfig(env, { requireKeySecret: true }),
      handle: h.handle,
      clock: h.clock,
      log,
      reloadConfig: () => {
        state.reloads++
        state.beforeRead?.(env)
        return loadConfig(env, { requireKeySecret: true })
      },
    })
    cleanups.push(() => app.close())
    return { h, app, env, startEnv, file, log, suiteOrg: await h.createOrg() }
  }

  return async function begin(beforeRead?: (env: Record<string, string>) => void) {
    const { h, app, env, startEnv, file, log, suiteOrg } = await (built ??= build())
    state.beforeRead = undefined
    for (const name of Object.keys(env)) delete env[name]
    Object.assign(env, startEnv)
    writeFileSync(file, '{}')
    if (mode === 'site') {
      const reset = await h.mintKey(suiteOrg)
      const res = await app.inject({ method: 'POST', url: RELOAD_URL, headers: { host: `${suiteOrg.slug}.localhost`, 'x-api-key': reset.plaintext } })
      assert.equal(res.statusCode, 200, 'the start-up configuration is back')
    }
    state.beforeRead = beforeRead
    const { org, key, keyId } = await h.orgWithKey('owner')
    const host = `${org.slug}.localhost`
    const reloadsBefore = state.reloads
    return {
      h,
      app,
      env,
      log,
      org,
      key,
      keyId,
      reloads: () => state.reloads - reloadsBefore,
      writeFile: (settings: Record<string, unknown> | string) => writeFileSync(file, typeof settings === 'string' ? settings : JSON.stringify(settings)),
      reload: (payload?: unknown, apiKey = key) =>
        app.inject({
          method: 'POST',
          url: RELOAD_URL,
          headers: { host, 'x-api-key': apiKey },
          ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }),
        }),
      get: (apiKey = key) => app.inject({ url: '/api/admin/api-keys', headers: { host, 'x-api-key': apiKey } }),
      auditRows: () =>
        h.handle.db.selectFrom('audit_events').selectAll().where('org_id', '=', org.id).where('action', 'like', 'config.%').orderBy('id').execute(),
    }
  }
}
