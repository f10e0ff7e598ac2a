import { gunzipSync, gzipSync } from 'node:zlib'
import { writePackage, type PackageHeader } from '../../src/modules/tenant-transfer/format.ts'
import type { Row } from '../../src/modules/tenant-transfer/introspect.ts'
import type { Org } from '../../src/identity.ts'
import type { Harness } from '../harness.ts'

/** A tenant package's header and its rows by part, to craft a package from an exported one. */
export function unpack(gzipped: Buffer): { header: PackageHeader; parts: Map<string, Row[]> } {
  const records = gunzipSync(gzipped)
    .toString('utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { type: string; part: string; row: Row })
  const header = records[0] as unknown as PackageHeader
  const parts = new Map(header.tables.map((table) => [table, records.filter((r) => r.type === 'row' && r.part === table).map((r) => r.row)]))
  return { header, parts }
}

/** A package with every count and checksum right (format.ts writePackage), so that only the rows' content is wrong. */
export async function repack(header: PackageHeader, parts: Map<string, Row[]>): Promise<Buffer> {
  const source = async function* () {
    for (const part of header.tables)
      yield {
        part,
        rows: (async function* () {
          yield* parts.get(part) ?? []
        })(),
      }
  }
  let text = ''
  for await (const piece of writePackage(header, source())) text += piece
  return gzipSync(text)
}

/** Stages a tenant package for the credential's organisation (PUT …/tenant/import/package). */
export const stage = (h: Harness, cred: { org: Org; apiKey: string }, body: Buffer) =>
  h.inject(cred, {
    method: 'PUT',
    url: `/api/admin/orgs/${cred.org.slug}/tenant/import/package`,
    headers: { 'content-type': 'application/gzip' },
    payload: body,
  })

/** Applies the staged package (POST …/tenant/import, `query` such as `?force=true`). */
export const apply = (h: Harness, cred: { org: Org; apiKey: string }, query = '') =>
  h.inject(cred, { method: 'POST', url: `/api/admin/orgs/${cred.org.slug}/tenant/import${query}` })
