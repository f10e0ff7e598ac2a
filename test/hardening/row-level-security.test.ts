// PostgreSQL row-level security (issue 14, README § PostgreSQL): every tenant table is closed to a query that
// forgets its org_id filter. PostgreSQL only: SQLite has no row-level security.
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { test } from 'node:test'
import { sql, type Kysely } from 'kysely'
import { migrateCommand } from '../../src/cli/serve.ts'
import { migrateToLatest } from '../../src/db/migrate.ts'
import { connectDatabase } from '../../src/db/connect.ts'
import { grantAppRole, tenantTables } from '../../src/db/row-level-security.ts'
import { withOrgScope, withSystemScope } from '../../src/db/tenant-scope.ts'
import { harness, testDialects } from '../harness.ts'
import { appRoleUrl, createTestDatabase, ensureAppRole, TEST_APP_ROLE } from '../postgres.ts'

type AnyDb = Kysely<Record<string, Record<string, unknown>>>

interface Column {
  name: string
  type: string
  nullable: boolean
  maxLength: number | null
}

async function columnsOf(db: AnyDb, table: string): Promise<Column[]> {
  const { rows } = await sql<{
    column_name: string
    data_type: string
    is_nullable: string
    column_default: string | null
    character_maximum_length: number | null
  }>`
    select column_name, data_type, is_nullable, column_default, character_maximum_length from information_schema.columns
    where table_schema = current_schema() and table_name = ${table} order by ordinal_position`.execute(db)
  return rows
    .filter((r) => r.column_default === null)
    .map((r) => ({ name: r.column_name, type: r.data_type, nullable: r.is_nullable === 'YES', maxLength: r.character_maximum_length }))
}

/** A row of `table` for `orgId`: every NOT NULL column filled by type, text values unique. */
function syntheticRow(columns: Column[], orgId: string): Record<string, unknown> {
  const row: Record<string, unknown> = {}
  for (const c of columns) {
    if (c.name === 'org_id') row[c.name] = orgId
    else if (c.nullable) continue
    else if (c.type === 'text' || c.type === 'character varying') row[c.name] = `r${randomBytes(6).toString('hex')}`.slice(0, c.maxLength ?? 64)
    else row[c.name] = 1
  }
  return row
}

async function countByOrg(db: AnyDb, table: string): Promise<Map<string, number>> {
  // Deliberately no org_id filter: this is the query that forgot it.
  const { rows } = await sql<{ org_id: string; n: number }>`select org_id, count(*)::int as n from ${sql.table(table)} group by org_id`.execute(db)
  return new Map(rows.map((r) => [r.org_id, r.n]))
}

for (const dialect of testDialects().filter((d) => d === 'postgres')) {
  test(`${dialect}: every tenant table hides other organisations' rows from the app role, whatever the query forgets`, async (t) => {
    const h = await harness(t, dialect)
    const owner = h.handle.db as unknown as AnyDb
    const tables = await tenantTables(owner)
    assert.ok(tables.length >= 20, `tenant tables found: ${tables.length}`)

    // Enabled, forced, with the tenant policy.
    const { rows: flags } = await sql<{ relname: string; relrowsecurity: boolean; relforcerowsecurity: boolean; policies: number }>`
      select c.relname, c.relrowsecurity, c.relforcerowsecurity,
        (select count(*)::int from pg_policies p where p.schemaname = current_schema() and p.tablename = c.relname and p.policyname = 'tenant') as policies
      from pg_class c where c.relnamespace = current_schema()::regnamespace and c.relname = any(${tables})`.execute(owner)
    const open = flags.filter((f) => !f.relrowsecurity || !f.relforcerowsecurity || f.policies !== 1).map((f) => f.relname)
    assert.deepEqual(open, [], 'tables without forced row-level security')
    assert.equal(flags.length, tables.length)

    // The app role: neither superuser, BYPASSRLS, owner nor member of the owner's role.
    const adminUrl = process.env.TEST_DATABASE_URL!
    await ensureAppRole(adminUrl)
    await grantAppRole(owner, TEST_APP_ROLE)
    const app = await connectDatabase(appRoleUrl(h.config.databaseUrl), { poolSize: 1 })
    t.after(() => app.close())
    const appDb = app.db as unknown as AnyDb
    const {
      rows: [role],
    } = await sql<{ rolsuper: boolean; rolbypassrls: boolean; owns: number; member_of_owner: number }>`
      select r.rolsuper, r.rolbypassrls,
        (select count(*)::int from pg_class c where c.relowner = r.oid) as owns,
        (select count(*)::int from pg_class c where c.relname = any(${tables}) and c.relnamespace = current_schema()::regnamespace
           and pg_has_role(current_user, c.relowner, 'MEMBER')) as member_of_owner
      from pg_roles r where r.rolname = current_user`.execute(appDb)
    assert.deepEqual(role, { rolsuper: false, rolbypassrls: false, owns: 0, member_of_owner: 0 })

    // A row in every tenant table for both organisations, written as the owner with foreign keys off (superuser),
    // so that each table is checked even where the API would need a long chain of parents.
    const a = await h.createOrg()
    const b = await h.createOrg()
    const columns = new Map<string, Column[]>()
    await owner.connection().execute(async (c) => {
      await sql`set session_replication_role = replica`.execute(c)
      try {
        for (const table of tables) {
          columns.set(table, await columnsOf(c, table))
          for (const org of [a, b])
            await c
              .insertInto(table)
              .values(syntheticRow(columns.get(table)!, org.id))
              .execute()
        }
      } finally {
        await sql`set session_replication_role = origin`.execute(c)
      }
    })

    let foreignSeen = 0
    let ownSeen = 0
    let unscopedSeen = 0
    let refusedInserts = 0
    let refusedMoves = 0
    for (const table of tables) {
      const underA = await withOrgScope(a.id, () => countByOrg(appDb, table))
      foreignSeen += [...underA.entries()].filter(([org]) => org !== a.id).reduce((n, [, k]) => n + k, 0)
      assert.ok((underA.get(a.id) ?? 0) >= 1, `${table}: org A sees its own rows`)
      ownSeen += underA.get(a.id) ?? 0
      const unscoped = await countByOrg(appDb, table)
      unscopedSeen += [...unscoped.values()].reduce((n, k) => n + k, 0)
      // The system scope sees both (the named, greppable path for cross-tenant work).
      const system = await withSystemScope(() => countByOrg(appDb, table))
      assert.ok((system.get(a.id) ?? 0) >= 1 && (system.get(b.id) ?? 0) >= 1, `${table}: the system scope sees both organisations`)

      // Writing a row of B under A's scope is refused; so is moving A's row to B.
      const before = (await countByOrg(owner, table)).get(b.id) ?? 0
      const insert = withOrgScope(a.id, () =>
        appDb
          .insertInto(table)
          .values(syntheticRow(columns.get(table)!, b.id))
          .execute(),
      )
      await assert.rejects(insert, (err: { code?: string }) => err.code === '42501', `${table}: insert for another organisation`)
      refusedInserts += 1
      const move = withOrgScope(a.id, () => sql`update ${sql.table(table)} set org_id = ${b.id} where org_id = ${a.id}`.execute(appDb))
      await assert.rejects(move, (err: { code?: string }) => err.code === '42501', `${table}: moving a row to another organisation`)
      refusedMoves += 1
      assert.equal((await countByOrg(owner, table)).get(b.id) ?? 0, before, `${table}: refused writes changed nothing`)
    }
    assert.equal(foreignSeen, 0)
    assert.equal(unscopedSeen, 0)
    console.log(
      `row-level security: ${tables.length} tenant tables forced; app role superuser=false bypassrls=false owner=false; ` +
        `org A's scope saw ${ownSeen} own rows and ${foreignSeen} foreign rows; no scope saw ${unscopedSeen} rows; ` +
        `refused: ${refusedInserts} foreign inserts, ${refusedMoves} moves to another organisation`,
    )
  })

  test(`${dialect}: every tenant policy reads the scope once a statement, not once a row`, async (t) => {
    const h = await harness(t, dialect)
    const owner = h.handle.db as unknown as AnyDb
    const tables = await tenantTables(owner)
    const { rows: policies } = await sql<{ tablename: string; qual: string; with_check: string }>`
      select tablename, qual, with_check from pg_policies where schemaname = current_schema() and policyname = 'tenant' and tablename = any(${tables})`.execute(
      owner,
    )
    assert.equal(policies.length, tables.length)
    // Every current_setting call of the policy sits in a sub-select.
    const perRow = policies.filter((p) =>
      [p.qual, p.with_check].some((e) => e.split('current_setting(').length - 1 !== e.split('SELECT current_setting(').length - 1),
    )
    assert.deepEqual(
      perRow.map((p) => p.tablename),
      [],
    )
    await ensureAppRole(process.env.TEST_DATABASE_URL!)
    await grantAppRole(owner, TEST_APP_ROLE)
    const app = await connectDatabase(appRoleUrl(h.config.databaseUrl), { poolSize: 1 })
    t.after(() => app.close())
    const { rows: plan } = await sql<{ 'QUERY PLAN': string }>`explain (costs off) insert into historian_points select * from historian_points`.execute(app.db)
    const text = plan.map((r) => r['QUERY PLAN']).join('\n')
    assert.match(text, /InitPlan/, text)
  })

  test(`${dialect}: a pooled connection carries the scope of whoever acquires it, not of its previous user`, async (t) => {
    const h = await harness(t, dialect)
    await ensureAppRole(process.env.TEST_DATABASE_URL!)
    await grantAppRole(h.handle.db, TEST_APP_ROLE)
    const app = await connectDatabase(appRoleUrl(h.config.databaseUrl), { poolSize: 1 }) // one connection, reused
    t.after(() => app.close())
    const a = await h.createOrg()
    const b = await h.createOrg()
    const sites = (orgId: string) => ({
      org_id: orgId,
      code: `S${randomBytes(3).toString('hex')}`,
      name: 'plant',
      time_zone: 'UTC',
      status: 0,
      created_at: 1,
      updated_at: 1,
    })
    await h.handle.db
      .insertInto('sites')
      .values([sites(a.id), sites(b.id)] as never)
      .execute()
    const orgsSeen = async () => (await sql<{ org_id: string }>`select distinct org_id from sites`.execute(app.db)).rows.map((r) => r.org_id).sort()
    const seen = {
      a: await withOrgScope(a.id, orgsSeen),
      aTransaction: await withOrgScope(a.id, () =>
        app.db.transaction().execute(async (trx) => (await sql<{ org_id: string }>`select distinct org_id from sites`.execute(trx)).rows.map((r) => r.org_id)),
      ),
      b: await withOrgScope(b.id, orgsSeen),
      none: await orgsSeen(),
    }
    assert.deepEqual(seen, { a: [a.id], aTransaction: [a.id], b: [b.id], none: [] })
  })

  test(`${dialect}: sitegrid migrate with SITEGRID_DATABASE_APP_URL grants that role its table rights and no more`, async (t) => {
    const adminUrl = process.env.TEST_DATABASE_URL!
    await ensureAppRole(adminUrl)
    const url = await createTestDatabase(adminUrl)
    const out: string[] = []
    await migrateCommand.run(
      { values: {}, positionals: [] },
      { env: { DATABASE_URL: url, SITEGRID_DATABASE_APP_URL: appRoleUrl(url) }, out: (l) => out.push(l), err: () => {} },
    )
    assert.ok(out.some((l) => l.includes('1200-row-level-security')))
    const app = await connectDatabase(appRoleUrl(url), { poolSize: 1 })
    t.after(() => app.close())
    const {
      rows: [rights],
    } = await sql<{ sites: boolean; api_keys: boolean; migrations: boolean; create: boolean }>`
      select has_table_privilege('sites', 'SELECT,INSERT,UPDATE,DELETE') as sites, has_table_privilege('api_keys', 'SELECT,INSERT,UPDATE,DELETE') as api_keys,
        has_table_privilege('kysely_migration', 'INSERT') as migrations, has_schema_privilege('public', 'CREATE') as create`.execute(app.db)
    assert.deepEqual(rights, { sites: true, api_keys: true, migrations: false, create: false })
  })
  test(`${dialect}: the processes of a cell starting at once grant the app role together, none fails`, async (t) => {
    // Stop 39's CI: two servers started at once, both granted, and one died of "tuple concurrently updated".
    const adminUrl = process.env.TEST_DATABASE_URL!
    await ensureAppRole(adminUrl)
    const url = await createTestDatabase(adminUrl)
    const first = await connectDatabase(url, { poolSize: 1 })
    t.after(() => first.close())
    await migrateToLatest(first.db)
    const processes = await Promise.all(Array.from({ length: 8 }, () => connectDatabase(url, { poolSize: 1 })))
    t.after(() => Promise.all(processes.map((p) => p.close())))
    const outcomes = await Promise.allSettled(processes.map((p) => grantAppRole(p.db, TEST_APP_ROLE)))
    assert.deepEqual(
      outcomes.filter((o) => o.status === 'rejected').map((o) => String((o as PromiseRejectedResult).reason)),
      [],
    )
    const { rows } = await sql<{ relname: string }>`select c.relname from pg_class c where c.relnamespace = current_schema()::regnamespace
      and c.relkind = 'r' and c.relname not like 'kysely_migration%' and not has_table_privilege(${TEST_APP_ROLE}, c.oid, 'SELECT,INSERT,UPDATE,DELETE')`.execute(
      first.db,
    )
    assert.deepEqual(rows, [])
  })
}
