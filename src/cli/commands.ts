import type { Command } from './command.ts'
import { historianCommands } from './historian.ts'
import { initCommand } from './init.ts'
import { keyCommands } from './key.ts'
import { linkCommands } from './link.ts'
import { linkStatusCommand } from './link-status.ts'
import { orgCommands } from './org.ts'
import { platformAdminCommands } from './platform-admin.ts'
import { migrateCommand, serveCommand } from './serve.ts'
import { remindersCommand } from './reminders.ts'
import { tenantCommands } from './tenant.ts'
import { siteCommands } from './site.ts'
import { siteKeyCommands, siteUserCommands } from './site-user.ts'

/** Every command, in the order `sitegrid --help` lists them. */
export const commands: Command[] = [
  initCommand,
  serveCommand,
  migrateCommand,
  ...orgCommands,
  ...keyCommands,
  ...siteCommands,
  ...historianCommands,
  ...platformAdminCommands,
  ...siteUserCommands,
  ...siteKeyCommands,
  remindersCommand,
  ...tenantCommands,
  ...linkCommands,
  linkStatusCommand,
]
