import { Type, type Static } from 'typebox'
import { Page, PageQuery } from '../../../http/paging.ts'
import { AlarmCommandSchema } from '../../alarms/schemas.ts'

export { AlarmCommandSchema }
export type { AlarmCommand } from '../../alarms/schemas.ts'

const CommandStatusSchema = Type.Union([Type.Literal('pending'), Type.Literal('applied'), Type.Literal('refused')])

export const AlarmCommandsParams = Type.Object(
  { siteId: Type.String({ maxLength: 200 }), alarmId: Type.String({ maxLength: 100 }) },
  { additionalProperties: false },
)

export const AlarmCommandsQuery = Type.Object({ ...PageQuery({ defaultLimit: 100, maxLimit: 1000 }) }, { additionalProperties: false })
export type AlarmCommandsInput = Static<typeof AlarmCommandsQuery>

export const ListCommandsQuery = Type.Object(
  {
    ...PageQuery({ defaultLimit: 100, maxLimit: 1000 }),
    status: Type.Optional(CommandStatusSchema),
    siteId: Type.Optional(Type.String({ maxLength: 200, description: 'Only this site’s commands.' })),
  },
  { additionalProperties: false },
)
export type ListCommandsInput = Static<typeof ListCommandsQuery>

export const AlarmCommandPage = Page(AlarmCommandSchema, 'Commands, oldest first: the order the site server applies them in.')
