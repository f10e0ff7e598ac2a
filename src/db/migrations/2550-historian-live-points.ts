import { type Kysely, sql } from 'kysely'
import { isPostgres } from '../row-level-security.ts'

/**
 * Issue 30, live push speed (PostgreSQL only): `historian_live_points` writes a push's samples (the arrays of
 * store/sample-writer.ts postgresArrayWrite) as a plain INSERT, and only when that meets a stored sample (a unique
 * violation, also one committed meanwhile by a concurrent writer it waited for) writes them again with
 * `ON CONFLICT DO NOTHING`, in the same call: the plain INSERT's rows are undone with its subtransaction. It answers
 * the rows written; the rest collided. An upsert checks the primary key before every row and confirms every row as
 * a speculative insertion (two WAL records): a push that collides with nothing, nearly every push, measured about
 * half the server time as a plain INSERT (docs/benchmarks.md § Issue 30). `security invoker` (the default): row-level
 * security applies to it as to the caller's own statements.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  if (!isPostgres(db)) return
  await sql`create function historian_live_points(
    p_org text, p_batch text, p_series integer[], p_ts bigint[], p_value float8[], p_text text[], p_quality smallint[]
  ) returns integer language plpgsql as $$
  declare
    written integer;
  begin
    begin
      insert into historian_points (org_id, batch_id, series_id, ts, value, text, quality)
        select p_org, p_batch, u.series_id, u.ts, u.value, u.text, u.quality
        from unnest(p_series, p_ts, p_value, p_text, p_quality) as u (series_id, ts, value, text, quality);
      get diagnostics written = row_count;
    exception when unique_violation then
      insert into historian_points (org_id, batch_id, series_id, ts, value, text, quality)
        select p_org, p_batch, u.series_id, u.ts, u.value, u.text, u.quality
        from unnest(p_series, p_ts, p_value, p_text, p_quality) as u (series_id, ts, value, text, quality)
        on conflict (org_id, series_id, ts) do nothing;
      get diagnostics written = row_count;
    end;
    return written;
  end $$`.execute(db)
}

export async function down(db: Kysely<unknown>): Promise<void> {
  if (isPostgres(db)) await sql`drop function if exists historian_live_points`.execute(db)
}
