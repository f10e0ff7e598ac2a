import { createReadStream, createWriteStream } from 'node:fs'
import { rename, rm } from 'node:fs/promises'
import { basename } from 'node:path'
import { pipeline } from 'node:stream/promises'
import { CLI_ACTOR } from '../identity.ts'
import { UsageError, type Command } from './command.ts'
import { cancellable, fileSize, Progress } from './progress.ts'
import { onSite } from './errors.ts'
import { orgBySlug } from './org-option.ts'
import { withServices } from './runtime.ts'
import { cliTenantTransfer } from './tenant-transfer.ts'

export const tenantCommands: Command[] = [
  {
    path: ['tenant', 'export'],
    usage: 'SLUG [--site CODE] (--output FILE | > package.jsonl.gz)',
    positionals: ['SLUG'],
    summary:
      "Writes the organisation's (or one site's) tenant package, streamed; the format is in the OpenAPI document (GET …/tenant/export). Ctrl-C cancels (exit 130); with --output no partial file is left.",
    options: {
      site: { type: 'string', value: 'CODE', description: "one site's package instead of the whole organisation's" },
      output: {
        type: 'string',
        value: 'FILE',
        description: 'write the package to FILE (under a temporary name, renamed when complete); default: standard output',
      },
    },
    run: async ({ values, positionals }, io) => {
      const output = typeof values.output === 'string' ? values.output : undefined
      if (output === undefined && process.stdout.isTTY)
        throw new UsageError('standard output is a terminal: give --output FILE or redirect it (> package.jsonl.gz)')
      await withServices(io.env, { requireKeySecret: false }, async ({ config, handle, orgs }) => {
        const org = await orgBySlug(orgs, positionals[0]!)
        const transfer = await cliTenantTransfer(config, handle)
        const site = typeof values.site === 'string' ? values.site : undefined
        await cancellable(process.stderr, async (signal) => {
          // Opened before the progress starts: an unknown site is one line naming it, not a started export that fails.
          const exported = await (site === undefined ? transfer.exportPackage(org, null) : onSite(org, site, () => transfer.exportPackage(org, site)))
          const progress = new Progress({ label: `tenant export ${org.slug}`, totalBytes: null, isCountingRows: false, sink: process.stderr, signal })
          const source = progress.track(exported)
          if (output === undefined) {
            await pipeline(source, process.stdout)
          } else {
            const partial = `${output}.partial-${process.pid}`
            try {
              await pipeline(source, createWriteStream(partial, { flags: 'wx' }))
              await rename(partial, output)
            } catch (err) {
              await rm(partial, { force: true })
              throw err
            }
          }
          progress.finish('exported')
        })
      })
    },
  },
  {
    path: ['tenant', 'import'],
    usage: 'SLUG FILE [--force] [--dry-run]',
    positionals: ['SLUG', 'FILE'],
    summary:
      'Applies a tenant package in one transaction (all or nothing); without --force an import that would overwrite records changes nothing and lists the conflicts. Prints the report as JSON. Ctrl-C cancels: the transaction rolls back, exit 130.',
    options: {
      force: { type: 'boolean', description: 'overwrite records that differ (without it, such an import changes nothing and lists the conflicts)' },
      'dry-run': { type: 'boolean', description: 'check the package and report what would change; nothing is written' },
    },
    run: ({ values, positionals }, io) => {
      const file = positionals[1]!
      const totalBytes = fileSize(file, 'FILE')
      return withServices(io.env, { requireKeySecret: false }, async ({ config, handle, orgs }) => {
        const org = await orgBySlug(orgs, positionals[0]!)
        const transfer = await cliTenantTransfer(config, handle)
        const report = await cancellable(process.stderr, async (signal) => {
          const progress = new Progress({ label: `tenant import ${basename(file)}`, totalBytes, isCountingRows: false, sink: process.stderr, signal })
          const imported = await transfer.importFile(org, CLI_ACTOR, () => progress.track(createReadStream(file)), {
            force: values.force === true,
            dryRun: values['dry-run'] === true,
          })
          progress.finish(values['dry-run'] === true ? 'checked' : 'imported')
          return imported
        })
        io.out(JSON.stringify(report))
      })
    },
  },
]
