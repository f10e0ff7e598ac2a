import { createReadStream } from 'node:fs'
import { pipeline } from 'node:stream/promises'
import { CLI_ACTOR } from '../identity.ts'
import { NotFound } from '../errors/domain-error.ts'
import type { Command } from './command.ts'
import { withServices } from './runtime.ts'
import { cliTenantTransfer } from './tenant-transfer.ts'

export const tenantCommands: Command[] = [
  {
    path: ['tenant', 'export'],
    usage: 'SLUG [--site CODE] > package.jsonl.gz',
    positionals: ['SLUG'],
    summary: "Writes the organisation's (or one site's) tenant package to stdout, streamed; the format is in the OpenAPI document (GET …/tenant/export).",
    options: { site: { type: 'string' } },
    run: ({ values, positionals }, io) =>
      withServices(io.env, { requireKeySecret: false }, async ({ config, handle, orgs }) => {
        const org = await orgs.findBySlug(positionals[0]!)
        if (!org) throw new NotFound()
        const transfer = await cliTenantTransfer(config, handle)
        await pipeline(await transfer.exportPackage(org, (values.site as string | undefined) ?? null), process.stdout)
      }),
  },
  {
    path: ['tenant', 'import'],
    usage: 'SLUG FILE [--force] [--dry-run]',
    positionals: ['SLUG', 'FILE'],
    summary:
      'Applies a tenant package in one transaction (all or nothing); without --force an import that would overwrite records changes nothing and lists the conflicts. Prints the report as JSON.',
    options: { force: { type: 'boolean' }, 'dry-run': { type: 'boolean' } },
    run: ({ values, positionals }, io) =>
      withServices(io.env, { requireKeySecret: false }, async ({ config, handle, orgs }) => {
        const org = await orgs.findBySlug(positionals[0]!)
        if (!org) throw new NotFound()
        const transfer = await cliTenantTransfer(config, handle)
        const report = await transfer.importFile(org, CLI_ACTOR, () => createReadStream(positionals[1]!), {
          force: values.force === true,
          dryRun: values['dry-run'] === true,
        })
        io.out(JSON.stringify(report))
      }),
  },
]
